import { type JsonSchema, repairPattern } from '@agent/core';
import { childPointer } from './json-pointer.js';
import { setOwn } from './own-property.js';
import { OpenApiSpecError, specError } from './spec-error.js';
import { isRecord, type JsonRecord, type SpecReader } from './spec-reader.js';

/** Limits that keep one tool's schema bounded, whatever the document. */
export interface SchemaConvertLimits {
  /** Nested `$ref` expansions before a reference is cut [16]. */
  maxRefDepth: number;
  /** Schema nodes per converted schema before further references are cut [20000]. */
  maxNodes: number;
  /** Levels of nested schemas (written out or through `$ref`s) before the rest is cut [128]. */
  maxDepth: number;
  /** Longest `description` kept; longer ones are cut with `…` [1024]. */
  maxDescriptionChars: number;
}

/** Defaults for {@link SchemaConvertLimits}. */
export const defaultSchemaConvertLimits: SchemaConvertLimits = {
  maxRefDepth: 16,
  maxNodes: 20_000,
  maxDepth: 128,
  maxDescriptionChars: 1024,
};

/**
 * Schema nodes converted for a whole document so far, and the most it may take: every tool's
 * schemas are converted whole (a `$ref` inlined where it is used), so a small document whose
 * operations all use one large schema — or many paths reusing one path item — is multiplied.
 */
export interface SchemaBudget {
  used: number;
  readonly max: number;
}

/** How a schema is converted: for a request (`readOnly` properties dropped). */
export interface SchemaConvertOptions {
  reader: SpecReader;
  limits?: Partial<SchemaConvertLimits>;
  /** Counted against for the whole document; passing `max` is an `OpenApiSpecError`. */
  budget?: SchemaBudget | undefined;
}

interface State {
  reader: SpecReader;
  limits: SchemaConvertLimits;
  nodes: number;
  /** Levels of `convert` on the current path (recursion depth). */
  depth: number;
}

// Keywords whose value is one schema, a list of schemas, or a map of schemas.
const singleSchemaKeys = new Set([
  'additionalProperties',
  'items',
  'not',
  'contains',
  'if',
  'then',
  'else',
  'propertyNames',
  'unevaluatedProperties',
  'unevaluatedItems',
  'additionalItems',
  'contentSchema',
]);
const schemaListKeys = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
const schemaMapKeys = new Set(['patternProperties', 'dependentSchemas']);
// OpenAPI-only or bulky annotations that a model or a validator has no use for in a tool schema.
const droppedKeys = new Set([
  'nullable',
  'discriminator',
  'xml',
  'externalDocs',
  'example',
  'examples',
  '$schema',
  '$id',
  '$anchor',
  '$dynamicAnchor',
  '$dynamicRef',
  '$comment',
  '$defs',
  'definitions',
  'readOnly',
  'writeOnly',
  'deprecated',
  'collectionFormat',
]);
// Keys whose meaning does not change the schema's structure, so they can merge with a `$ref` target.
const annotationKeys = new Set([
  'description',
  'title',
  'default',
  'nullable',
  'x-nullable',
  'deprecated',
  'readOnly',
  'writeOnly',
  'example',
  'examples',
]);

/**
 * Converts an OpenAPI schema (2.0, 3.0 or 3.1) found at `pointer` into a self-contained JSON
 * Schema for a request: local `$ref`s inlined (a recursive one is cut to an unexpanded schema
 * with a note), 3.0 `nullable` and 2.0 `x-nullable` turned into a `null` type, boolean
 * `exclusiveMinimum`/`exclusiveMaximum` turned numeric, `type: file` into a binary string,
 * `readOnly` properties dropped, OpenAPI-only keywords (`discriminator`, `xml`, `example`…)
 * and `x-` extensions removed, and regular expressions a JavaScript validator would misread
 * moved into the description.
 */
export function convertSchema(
  raw: unknown,
  pointer: string,
  options: SchemaConvertOptions,
): JsonSchema {
  const state: State = {
    reader: options.reader,
    limits: { ...defaultSchemaConvertLimits, ...options.limits },
    nodes: 0,
    depth: 0,
  };
  const converted = convert(raw, pointer, [], state);
  const budget = options.budget;
  if (budget !== undefined) {
    budget.used += state.nodes;
    if (budget.used > budget.max)
      throw new OpenApiSpecError(
        `The OpenAPI document's tools need more than ${budget.max.toLocaleString('en-US')} schema nodes together (maxSchemaNodes; at ${pointer}): choose operations with include/exclude, or raise maxSchemaNodes`,
        { pointer },
      );
  }
  return converted;
}

function convert(
  node: unknown,
  pointer: string,
  stack: readonly string[],
  state: State,
): JsonSchema {
  // A document can nest schemas thousands of levels deep without a single `$ref` (a literal
  // tower of `items` or `properties`); past the limit the rest is summarised, not recursed into,
  // so no document can overflow the stack.
  if (state.depth >= state.limits.maxDepth) return deepSummary(node, state);
  state.depth++;
  try {
    return convertNode(node, pointer, stack, state);
  } finally {
    state.depth--;
  }
}

function deepSummary(node: unknown, state: State): JsonSchema {
  const type = isRecord(node) ? node.type : undefined;
  return {
    ...(typeof type === 'string' || Array.isArray(type) ? { type: type as string | string[] } : {}),
    description: `Nested more than ${state.limits.maxDepth} levels deep (structure not expanded here).`,
  };
}

function convertNode(
  node: unknown,
  pointer: string,
  stack: readonly string[],
  state: State,
): JsonSchema {
  state.nodes++;
  if (node === true || node === undefined) return {};
  if (node === false) return { not: {} };
  if (!isRecord(node))
    return specError(pointer, `a schema must be an object, found ${JSON.stringify(node)}`);
  if (typeof node.$ref === 'string') return convertRef(node, node.$ref, pointer, stack, state);
  // Copied as data it would put a `$ref` into a tool schema, which must hold none.
  if (node.$ref !== undefined)
    specError(
      childPointer(pointer, '$ref'),
      `"$ref" must be a string, found ${JSON.stringify(node.$ref)}`,
    );

  const out: JsonSchema = {};
  const nullable = node.nullable === true || node['x-nullable'] === true;
  for (const [key, value] of Object.entries(node)) {
    // `__proto__` is no keyword, and as a key it would set the output's prototype.
    if (droppedKeys.has(key) || key.startsWith('x-') || key === '__proto__') continue;
    const at = childPointer(pointer, key);
    if (key === 'properties') {
      if (!isRecord(value)) specError(at, '"properties" must be an object');
      const properties: Record<string, JsonSchema> = {};
      for (const [name, property] of Object.entries(value)) {
        if (isReadOnly(property, state)) continue;
        setOwn(properties, name, convert(property, childPointer(at, name), stack, state));
      }
      out.properties = properties;
    } else if (singleSchemaKeys.has(key)) {
      if (key === 'items' && Array.isArray(value)) {
        out.items = value.map((item, index) =>
          convert(item, childPointer(at, index), stack, state),
        );
      } else if (typeof value === 'boolean') {
        out[key] = value;
      } else {
        out[key] = convert(value, at, stack, state);
      }
    } else if (schemaListKeys.has(key)) {
      if (!Array.isArray(value)) specError(at, `"${key}" must be an array of schemas`);
      out[key] = value.map((item, index) => convert(item, childPointer(at, index), stack, state));
    } else if (schemaMapKeys.has(key) || key === 'dependencies') {
      if (!isRecord(value)) specError(at, `"${key}" must be an object`);
      const map: Record<string, unknown> = {};
      for (const [name, item] of Object.entries(value))
        setOwn(
          map,
          name,
          Array.isArray(item) ? item : convert(item, childPointer(at, name), stack, state),
        );
      out[key] = map;
    } else if (key === 'type') {
      out.type = value === 'file' ? 'string' : (value as string | string[]);
      if (value === 'file') out.format = 'binary';
    } else if (key === 'description') {
      if (typeof value === 'string')
        out.description = clipDescription(value, state.limits.maxDescriptionChars);
    } else if (isPlainData(value)) {
      out[key] = value;
    }
  }
  fixExclusiveBounds(out, node);
  fixPattern(out, state);
  dropRepeats(out);
  if (Array.isArray(out.required) && isRecord(node.properties)) {
    // A required readOnly property is never sent in a request.
    const properties = node.properties;
    out.required = out.required.filter(
      (name) => typeof name !== 'string' || !isReadOnly(properties[name], state),
    );
    if (out.required.length === 0) delete out.required;
  }
  return nullable ? makeNullable(out) : out;
}

function convertRef(
  node: JsonRecord,
  ref: string,
  pointer: string,
  stack: readonly string[],
  state: State,
): JsonSchema {
  const target = state.reader.resolveRef(ref, childPointer(pointer, '$ref'));
  const { $ref: _ref, ...siblings } = node;
  const cut = stack.includes(ref)
    ? 'recursive'
    : stack.length >= state.limits.maxRefDepth || state.nodes > state.limits.maxNodes
      ? 'too deep'
      : undefined;
  if (cut !== undefined) {
    // Keep the target's type so the cut schema still says "an object" or "an array".
    const type = isRecord(target.value) ? target.value.type : undefined;
    const name = ref.slice(ref.lastIndexOf('/') + 1);
    const summary: JsonSchema = {
      ...(typeof type === 'string' || Array.isArray(type)
        ? { type: type as string | string[] }
        : {}),
      description: `${cut === 'recursive' ? 'Recursive' : 'Nested'} ${name} (structure not expanded here; see the same schema above).`,
    };
    return Object.keys(siblings).length === 0
      ? summary
      : { ...convert(siblings, pointer, stack, state), ...summary };
  }
  const inner = [...stack, ref];
  const siblingKeys = Object.keys(siblings);
  if (siblingKeys.length === 0) return convert(target.value, target.pointer, inner, state);
  // 3.1 (and many 3.0 documents in practice) put `description` or `nullable` beside `$ref`.
  if (
    isRecord(target.value) &&
    siblingKeys.every((key) => annotationKeys.has(key) || key.startsWith('x-'))
  ) {
    return convert({ ...target.value, ...siblings }, target.pointer, inner, state);
  }
  return {
    allOf: [
      convert(target.value, target.pointer, inner, state),
      convert(siblings, pointer, stack, state),
    ],
  };
}

function isReadOnly(property: unknown, state: State): boolean {
  if (!isRecord(property)) return false;
  if (property.readOnly === true) return true;
  if (typeof property.$ref !== 'string' || property.readOnly === false) return false;
  try {
    const target = state.reader.resolveRef(property.$ref, '#');
    return isRecord(target.value) && target.value.readOnly === true;
  } catch {
    // A bad reference is reported with its real place when the property itself is converted.
    return false;
  }
}

function isPlainData(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return true;
  if (Array.isArray(value))
    return value.every((item) => item === null || typeof item !== 'object' || isPlainValue(item));
  return isPlainValue(value);
}

// Values such as `default` or `enum` members may be objects; they are data, not schemas, unless they hold a `$ref`.
function isPlainValue(value: object): boolean {
  try {
    return !JSON.stringify(value).includes('"$ref"');
  } catch {
    // Nested too deep to write out (RangeError): no use to a model, dropped.
    return false;
  }
}

function fixExclusiveBounds(out: JsonSchema, node: JsonRecord): void {
  for (const [exclusive, bound] of [
    ['exclusiveMinimum', 'minimum'],
    ['exclusiveMaximum', 'maximum'],
  ] as const) {
    if (node[exclusive] === true && typeof node[bound] === 'number') {
      out[exclusive] = node[bound];
      delete out[bound];
    } else if (typeof node[exclusive] === 'boolean') {
      delete out[exclusive];
    }
  }
}

// Some validators compile `pattern` without the `u` flag (Unicode property escapes would be
// misread), others with it (Ajv: an escape such as `\_`, fine without the flag, throws): a pattern
// is kept in a form that compiles both ways with the same meaning (`[A-Z\_]` → `[A-Z_]`), else
// only as advice in the description (PCRE-only syntax, `\p{…}`).
function fixPattern(out: JsonSchema, state: State): void {
  const pattern = out.pattern;
  if (pattern === undefined) return;
  const portable =
    typeof pattern === 'string' && !/\\[pP]\{|\\u\{/.test(pattern)
      ? repairPattern(pattern)
      : undefined;
  if (portable !== undefined && compilesWithoutUnicodeFlag(portable)) {
    if (portable !== pattern) out.pattern = portable;
    return;
  }
  delete out.pattern;
  const note = `Must match the regular expression ${String(pattern)}.`;
  out.description = clipDescription(
    out.description === undefined ? note : `${out.description} ${note}`,
    state.limits.maxDescriptionChars,
  );
}

/**
 * JSON Schema wants the items of `enum`, `required` and a `type` list unique (a validator such as
 * Ajv refuses the schema otherwise), and documents repeat values: Stripe's webhook endpoint
 * `enabled_events` lists one event twice. Keeps the first of each value, compared as JSON.
 */
function dropRepeats(out: JsonSchema): void {
  for (const key of ['enum', 'required', 'type'] as const) {
    const values = out[key];
    if (!Array.isArray(values)) continue;
    const seen = new Set<string>();
    const unique = values.filter((value: unknown) => {
      const identity = canonicalJson(value);
      if (seen.has(identity)) return false;
      seen.add(identity);
      return true;
    });
    if (unique.length !== values.length) (out as Record<string, unknown>)[key] = unique;
  }
}

/** JSON with object keys sorted, so `{a, b}` and `{b, a}` count as the same value. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (isRecord(value))
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`)
      .join(',')}}`;
  return JSON.stringify(value) ?? 'undefined';
}

function makeNullable(schema: JsonSchema): JsonSchema {
  if (Array.isArray(schema.enum) && !schema.enum.includes(null))
    schema.enum = [...schema.enum, null];
  if (typeof schema.type === 'string') {
    if (schema.type !== 'null') schema.type = [schema.type, 'null'];
    return schema;
  }
  if (Array.isArray(schema.type)) {
    if (!schema.type.includes('null')) schema.type = [...schema.type, 'null'];
    return schema;
  }
  const { description, title, default: defaultValue, ...rest } = schema;
  // A schema with no constraints already accepts null.
  if (Object.keys(rest).length === 0 || Array.isArray(schema.enum)) return schema;
  return {
    ...(title === undefined ? {} : { title }),
    ...(description === undefined ? {} : { description }),
    ...(defaultValue === undefined ? {} : { default: defaultValue }),
    anyOf: [rest, { type: 'null' }],
  };
}

/** Cuts text to at most `max` characters at a word boundary, ending with `…`. */
export function clipDescription(text: string, max: number): string {
  const trimmed = text.trim();
  if (trimmed.length <= max) return trimmed;
  const cut = trimmed.slice(0, Math.max(0, max - 1));
  const space = cut.search(/\s\S*$/);
  return `${(space > max * 0.8 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

function compilesWithoutUnicodeFlag(pattern: string): boolean {
  try {
    new RegExp(pattern);
    return true;
  } catch {
    return false;
  }
}
