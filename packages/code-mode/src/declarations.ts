import type { AnyAgentTool, JsonSchema } from '@agent/core';

// TypeScript declarations of tools, from their JSON Schemas, for the model to read: what it
// needs to write a correct call (names, types, which fields are optional, enum values, and each
// field's description), as compactly as possible. Schemas are self-contained by contract (no
// `$ref`), so a small converter covers them; past `maxDepth` a type is `unknown`.

/** Options of {@link toolDeclarations}. */
export interface DeclarationOptions {
  /** Longest tool description kept in a declaration's comment, in characters [1200]. */
  maxDescriptionChars?: number;
  /** Deepest schema nesting spelled out; deeper parts are `unknown` [8]. */
  maxDepth?: number;
}

const identifier = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** A property name or tool name as a TypeScript key: bare when it is an identifier, else quoted. */
export function propertyKey(name: string): string {
  return identifier.test(name) ? name : JSON.stringify(name);
}

/** How a script calls the tool: `tools.read_file(…)` or `tools["list-issues"](…)`. */
export function callExpression(name: string): string {
  return identifier.test(name) ? `tools.${name}` : `tools[${JSON.stringify(name)}]`;
}

/**
 * `declare const tools: { … }` for the tools: each an async function of one argument object,
 * typed from its JSON Schema, with its description as a comment.
 */
export function toolDeclarations(
  tools: readonly AnyAgentTool[],
  options: DeclarationOptions = {},
): string {
  const members = tools.map((tool) => toolDeclaration(tool, options)).join('\n');
  return `declare const tools: {\n${members}\n};`;
}

/** One tool's member of the `tools` declaration. */
export function toolDeclaration(tool: AnyAgentTool, options: DeclarationOptions = {}): string {
  const maxChars = options.maxDescriptionChars ?? 1200;
  const converter = new SchemaConverter(options.maxDepth ?? 8);
  const args = converter.type(tool.parameters, 1);
  const optional = (tool.parameters.required ?? []).length === 0 ? '?' : '';
  return `${comment(clipDescription(tool.description, maxChars), '  ')}  ${propertyKey(tool.name)}(args${optional}: ${args}): Promise<any>;`;
}

/** A description shortened at a sentence or line end near `max` characters. */
function clipDescription(text: string, max: number): string {
  const trimmed = text.trim();
  if (trimmed.length <= max) return trimmed;
  const head = trimmed.slice(0, max);
  const cut = Math.max(head.lastIndexOf('. '), head.lastIndexOf('\n'));
  return `${(cut > max / 2 ? head.slice(0, cut + 1) : head).trimEnd()} …`;
}

/** A JSDoc comment (empty for no text); `*\/` in the text cannot end it early. */
function comment(text: string | undefined, indent: string): string {
  if (text === undefined || text.trim() === '') return '';
  const lines = text.trim().replaceAll('*/', '*\\/').split('\n');
  if (lines.length === 1) return `${indent}/** ${lines[0]} */\n`;
  return `${indent}/**\n${lines.map((line) => `${indent} * ${line}`.trimEnd()).join('\n')}\n${indent} */\n`;
}

class SchemaConverter {
  /** Type texts that are unions or intersections: parenthesised inside an array or another union. */
  readonly #compound = new Set<string>();

  constructor(private readonly maxDepth: number) {}

  #union(types: readonly string[]): string {
    const unique = [...new Set(types)];
    if (unique.length === 0) return 'never';
    if (unique.includes('unknown')) return 'unknown';
    if (unique.length === 1) return unique[0] as string;
    return this.#marked(unique.map((type) => this.#wrap(type)).join(' | '));
  }

  #intersection(types: readonly string[]): string {
    if (types.length === 1) return types[0] as string;
    return this.#marked(types.map((type) => this.#wrap(type)).join(' & '));
  }

  #marked(type: string): string {
    this.#compound.add(type);
    return type;
  }

  #wrap(type: string): string {
    return this.#compound.has(type) ? `(${type})` : type;
  }

  /** The TypeScript type of `schema`, at nesting `depth` (1 for the arguments object). */
  type(schema: JsonSchema | boolean | undefined, depth: number): string {
    if (schema === undefined || schema === true) return 'unknown';
    if (schema === false) return 'never';
    if (depth > this.maxDepth) return 'unknown';
    const record = schema as Record<string, unknown>;
    if ('const' in record) return literal(record.const);
    if (Array.isArray(record.enum)) return this.#union(record.enum.map(literal));
    const alternatives = (record.anyOf ?? record.oneOf) as JsonSchema[] | undefined;
    if (Array.isArray(alternatives)) {
      const base = this.#withoutKeys(record, ['anyOf', 'oneOf']);
      const own = Object.keys(base).some((key) => typeKeys.has(key))
        ? this.type(base as JsonSchema, depth)
        : undefined;
      const options = this.#union(alternatives.map((item) => this.type(item, depth)));
      return own === undefined || own === 'unknown' ? options : this.#intersection([own, options]);
    }
    if (Array.isArray(record.allOf)) {
      return this.#intersection(
        (record.allOf as JsonSchema[]).map((item) => this.type(item, depth)),
      );
    }
    const types = record.type;
    if (Array.isArray(types)) {
      return this.#union(types.map((type) => this.#ofType(record, String(type), depth)));
    }
    if (typeof types === 'string') {
      const type = this.#ofType(record, types, depth);
      return record.nullable === true ? this.#union([type, 'null']) : type;
    }
    if (record.properties !== undefined) return this.#object(record, depth);
    if (record.items !== undefined) return this.#array(record, depth);
    return 'unknown';
  }

  #withoutKeys(record: Record<string, unknown>, keys: string[]): Record<string, unknown> {
    const copy = { ...record };
    for (const key of keys) delete copy[key];
    return copy;
  }

  #ofType(record: Record<string, unknown>, type: string, depth: number): string {
    switch (type) {
      case 'string':
        return 'string';
      case 'number':
      case 'integer':
        return 'number';
      case 'boolean':
        return 'boolean';
      case 'null':
        return 'null';
      case 'array':
        return this.#array(record, depth);
      case 'object':
        return this.#object(record, depth);
      default:
        return 'unknown';
    }
  }

  #array(record: Record<string, unknown>, depth: number): string {
    if (Array.isArray(record.prefixItems)) {
      const items = (record.prefixItems as JsonSchema[]).map((item) => this.type(item, depth + 1));
      return `[${items.join(', ')}]`;
    }
    const items = record.items as JsonSchema | boolean | undefined;
    return `${this.#wrap(this.type(items, depth + 1))}[]`;
  }

  #object(record: Record<string, unknown>, depth: number): string {
    const properties = (record.properties ?? {}) as Record<string, JsonSchema>;
    const required = new Set((record.required as string[] | undefined) ?? []);
    const indent = '  '.repeat(depth + 1);
    const lines: string[] = [];
    for (const [name, property] of Object.entries(properties)) {
      const mark = required.has(name) ? '' : '?';
      lines.push(
        `${comment(propertyNote(property), indent)}${indent}${propertyKey(name)}${mark}: ${this.type(property, depth + 1)};`,
      );
    }
    const extra = record.additionalProperties;
    if (extra !== undefined && extra !== false) {
      const value = extra === true ? 'unknown' : this.type(extra as JsonSchema, depth + 1);
      lines.push(`${indent}[key: string]: ${value};`);
    } else if (lines.length === 0 && extra !== false) {
      return 'Record<string, unknown>';
    }
    if (lines.length === 0) return '{}';
    return `{\n${lines.join('\n')}\n${'  '.repeat(depth)}}`;
  }
}

const typeKeys = new Set(['type', 'properties', 'items', 'enum', 'const']);

/** A property's description, with its default and format when given. */
function propertyNote(schema: JsonSchema): string | undefined {
  if (typeof schema !== 'object' || schema === null) return undefined;
  const record = schema as Record<string, unknown>;
  const parts: string[] = [];
  if (typeof record.description === 'string') parts.push(record.description.trim());
  if (typeof record.format === 'string') parts.push(`Format: ${record.format}.`);
  if (record.default !== undefined) parts.push(`Default: ${JSON.stringify(record.default)}.`);
  return parts.length === 0 ? undefined : parts.join(' ');
}

function literal(value: unknown): string {
  return JSON.stringify(value) ?? 'undefined';
}
