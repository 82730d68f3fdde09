import { inlineJsonSchema, type JsonSchemaObject, setOwnProperty as setOwn } from '@agent/core';

/**
 * How tool parameters are sent: `json-schema` as `parametersJsonSchema` (the SDK's JSON Schema
 * field, pruned to the keywords Gemini documents), `openapi` as `parameters` (Gemini's
 * OpenAPI 3.0 subset: one type, `nullable`, string enums, no `additionalProperties`).
 */
export type GeminiSchemaDialect = 'json-schema' | 'openapi';

/** A converted schema and what could not be expressed (validation still enforces it). */
export interface GeminiSchemaConversion {
  schema: Record<string, unknown>;
  /** Human-readable notes about dropped or rewritten constraints; empty when lossless. */
  warnings: string[];
}

// Keywords Gemini documents for `parametersJsonSchema` / `responseJsonSchema`.
const jsonSchemaKeywords = new Set([
  'type',
  'format',
  'title',
  'description',
  'enum',
  'items',
  'prefixItems',
  'minItems',
  'maxItems',
  'minimum',
  'maximum',
  'anyOf',
  'properties',
  'additionalProperties',
  'required',
  'propertyOrdering',
]);

// Keywords of Gemini's `Schema` (OpenAPI 3.0 subset).
const openApiKeywords = new Set([
  'type',
  'format',
  'title',
  'description',
  'nullable',
  'enum',
  'items',
  'minItems',
  'maxItems',
  'minimum',
  'maximum',
  'minLength',
  'maxLength',
  'pattern',
  'minProperties',
  'maxProperties',
  'anyOf',
  'properties',
  'required',
  'propertyOrdering',
]);

// Dropped without a warning: annotations that constrain nothing.
const silentlyDropped = new Set(['$schema', '$id', '$comment', 'default', 'examples', 'example']);

type Node = Record<string, unknown>;

function isNode(value: unknown): value is Node {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** `Object.assign` without its one setter: a `__proto__` key is copied as a field. */
function assignOwn(target: Node, source: Node): void {
  for (const [key, value] of Object.entries(source)) setOwn(target, key, value);
}

/** Converts tool parameters to a Gemini dialect; never throws (falls back to `{type: object}`). */
export function toGeminiSchema(
  parameters: JsonSchemaObject,
  dialect: GeminiSchemaDialect = 'json-schema',
): GeminiSchemaConversion {
  const warnings: string[] = [];
  try {
    const inlined = inlineJsonSchema(parameters);
    const schema =
      dialect === 'openapi'
        ? toOpenApi(inlined, '', warnings)
        : toJsonSchemaSubset(inlined, '', warnings);
    return { schema, warnings };
  } catch (error) {
    return {
      schema: dialect === 'openapi' ? { type: 'OBJECT' } : { type: 'object' },
      warnings: [
        `schema could not be converted (${error instanceof Error ? error.message : String(error)}); sent as a free-form object`,
      ],
    };
  }
}

const at = (path: string) => (path === '' ? 'the root' : `"${path}"`);

// Rewrites keywords both dialects handle the same way; returns the rest to copy.
function normalise(node: Node, path: string, warnings: string[]): Node {
  const out: Node = { ...node };
  if ('const' in out) {
    out.enum = [out.const];
    delete out.const;
  }
  if (Array.isArray(out.oneOf)) {
    out.anyOf = [...(Array.isArray(out.anyOf) ? out.anyOf : []), ...out.oneOf];
    delete out.oneOf;
  }
  if (Array.isArray(out.allOf)) {
    const parts = out.allOf.filter(isNode);
    delete out.allOf;
    if (parts.length === 1 && parts[0] !== undefined) assignOwn(out, parts[0]);
    else if (parts.every((part) => part.type === 'object' || isNode(part.properties))) {
      const properties: Node = isNode(out.properties) ? { ...out.properties } : {};
      const required = new Set(Array.isArray(out.required) ? (out.required as string[]) : []);
      for (const part of parts) {
        if (isNode(part.properties)) assignOwn(properties, part.properties);
        for (const name of Array.isArray(part.required) ? (part.required as string[]) : [])
          required.add(name);
      }
      Object.assign(out, { type: 'object', properties, required: [...required] });
    } else warnings.push(`allOf at ${at(path)} dropped`);
  }
  // `required` names that are not properties are refused by Gemini ("property is not defined").
  if (Array.isArray(out.required)) {
    const properties = isNode(out.properties) ? out.properties : {};
    const kept = (out.required as unknown[]).filter(
      (name): name is string => typeof name === 'string' && Object.hasOwn(properties, name),
    );
    if (kept.length < out.required.length)
      warnings.push(`required names missing from properties at ${at(path)} dropped`);
    if (kept.length > 0) out.required = [...new Set(kept)];
    else delete out.required;
  }
  if (Array.isArray(out.enum))
    out.enum = [...new Set(out.enum.map((v) => JSON.stringify(v)))].map(
      (v) => JSON.parse(v) as unknown,
    );
  if (
    Array.isArray(out.enum) &&
    !out.enum.every((v) => typeof v === 'string' || typeof v === 'number')
  ) {
    const kinds = new Set(out.enum.map((value) => (value === null ? 'null' : typeof value)));
    warnings.push(`enum of ${[...kinds].join('/')} at ${at(path)} dropped`);
    if (out.type === undefined && kinds.size === 1) out.type = [...kinds][0];
    delete out.enum;
  }
  return out;
}

function toJsonSchemaSubset(node: unknown, path: string, warnings: string[]): Node {
  if (!isNode(node)) return {};
  const source = normalise(node, path, warnings);
  const out: Node = {};
  const dropped: string[] = [];
  for (const [key, value] of Object.entries(source)) {
    if (key === 'properties' && isNode(value)) {
      out.properties = Object.fromEntries(
        Object.entries(value).map(([name, child]) => [
          name,
          toJsonSchemaSubset(child, path === '' ? name : `${path}.${name}`, warnings),
        ]),
      );
    } else if (key === 'items' || key === 'additionalProperties') {
      out[key] = isNode(value) ? toJsonSchemaSubset(value, `${path}[]`, warnings) : value;
    } else if (key === 'anyOf' || key === 'prefixItems') {
      out[key] = (Array.isArray(value) ? value : []).map((child) =>
        toJsonSchemaSubset(child, path, warnings),
      );
    } else if (jsonSchemaKeywords.has(key)) out[key] = value;
    else if (!silentlyDropped.has(key)) dropped.push(key);
  }
  if (dropped.length > 0) warnings.push(`${dropped.join(', ')} at ${at(path)} dropped`);
  return out;
}

function toOpenApi(node: unknown, path: string, warnings: string[]): Node {
  if (!isNode(node)) return {};
  const source = normalise(node, path, warnings);
  const out: Node = {};
  const dropped: string[] = [];
  let anyOf = Array.isArray(source.anyOf) ? source.anyOf.filter(isNode) : undefined;
  // `items`/`properties` beside the branches belong to the array/object branch that lacks them.
  if (anyOf !== undefined && typeof source.type !== 'string') {
    anyOf = anyOf.map((branch) => {
      const own = typeof branch.type === 'string' ? branch.type : undefined;
      if (own === undefined) return branch;
      const filled: Node = { ...branch };
      for (const key of keywordsFor(own))
        if (filled[key] === undefined && source[key] !== undefined) filled[key] = source[key];
      return filled;
    });
  }
  // Only when the branches are one per type does a type's keyword belong to its branch alone.
  const typedBranches =
    anyOf !== undefined &&
    typeof source.type !== 'string' &&
    anyOf.every((branch) => typeof branch.type === 'string');
  const moved = typedBranches || splitsTypes(source) ? typeSpecificKeywords : noKeywords;
  // `anyOf: [X, {type: null}]` is OpenAPI's `nullable`.
  if (anyOf !== undefined) {
    const nonNull = anyOf.filter((branch) => branch.type !== 'null');
    if (nonNull.length < anyOf.length) out.nullable = true;
    if (nonNull.length === 1 && nonNull[0] !== undefined) {
      Object.assign(out, toOpenApi(nonNull[0], path, warnings));
      anyOf = undefined;
    } else anyOf = nonNull;
  }
  for (const [key, value] of Object.entries(source)) {
    if (key === 'anyOf' || (moved.has(key) && key !== 'enum')) continue;
    if (key === 'type') {
      const types = (Array.isArray(value) ? value : [value]).filter((t) => typeof t === 'string');
      const nonNull = types.filter((type) => type !== 'null');
      if (nonNull.length < types.length) out.nullable = true;
      if (nonNull.length === 1) out.type = String(nonNull[0]).toUpperCase();
      else if (nonNull.length > 1)
        // Each branch takes the keywords of its own type (`items` stays with the array).
        anyOf = nonNull.map((type) => branchOfType(source, String(type)));
    } else if (key === 'properties' && isNode(value)) {
      out.properties = Object.fromEntries(
        Object.entries(value).map(([name, child]) => [
          name,
          toOpenApi(child, path === '' ? name : `${path}.${name}`, warnings),
        ]),
      );
    } else if (key === 'items') {
      out.items = toOpenApi(value, `${path}[]`, warnings);
    } else if (key === 'enum' && Array.isArray(value)) {
      if (value.every((v) => typeof v === 'string')) {
        out.enum = value;
        out.format = 'enum';
      } else warnings.push(`non-string enum at ${at(path)} dropped`);
    } else if (key === 'additionalProperties') {
      if (value !== false) warnings.push(`additionalProperties at ${at(path)} dropped`);
    } else if (openApiKeywords.has(key)) out[key] = value;
    else if (!silentlyDropped.has(key)) dropped.push(key);
  }
  if (anyOf !== undefined) out.anyOf = anyOf.map((branch) => toOpenApi(branch, path, warnings));
  if (dropped.length > 0) warnings.push(`${dropped.join(', ')} at ${at(path)} dropped`);
  return out;
}

const keywordsOfType: Record<string, readonly string[]> = {
  array: ['items', 'minItems', 'maxItems', 'uniqueItems', 'prefixItems'],
  object: ['properties', 'required', 'additionalProperties', 'minProperties', 'maxProperties'],
  string: ['minLength', 'maxLength', 'pattern', 'format', 'enum'],
  number: ['minimum', 'maximum', 'format', 'enum'],
  integer: ['minimum', 'maximum', 'format', 'enum'],
};

/** A type's own keywords; a name that is no JSON Schema type (`constructor`…) has none. */
function keywordsFor(type: string): readonly string[] {
  return Object.hasOwn(keywordsOfType, type) ? (keywordsOfType[type] ?? []) : [];
}
const typeSpecificKeywords = new Set(Object.values(keywordsOfType).flat());
const noKeywords = new Set<string>();

/** Whether a schema names several non-null types (it becomes an `anyOf` of one per type). */
function splitsTypes(node: Node): boolean {
  return Array.isArray(node.type) && node.type.filter((type) => type !== 'null').length > 1;
}

/** The part of a multi-type schema that concerns one type. */
function branchOfType(node: Node, type: string): Node {
  const branch: Node = { type };
  for (const key of keywordsFor(type)) if (node[key] !== undefined) branch[key] = node[key];
  return branch;
}

/**
 * Removes `null` from optional properties whose schema does not accept null: a model that
 * fills an absent optional field with null means "absent". Applied before validation.
 */
export function dropAbsentNulls(value: unknown, schema: unknown): unknown {
  if (!isNode(value) || !isNode(schema)) return value;
  const properties = isNode(schema.properties) ? schema.properties : undefined;
  if (properties === undefined) return value;
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  const out: Node = {};
  for (const [key, child] of Object.entries(value)) {
    const childSchema = Object.hasOwn(properties, key) ? properties[key] : undefined;
    if (child === null && !required.has(key) && !acceptsNull(childSchema)) continue;
    setOwn(out, key, dropAbsentNulls(child, childSchema));
  }
  return out;
}

function acceptsNull(schema: unknown): boolean {
  if (!isNode(schema)) return true;
  const type = schema.type;
  if (type === 'null' || (Array.isArray(type) && type.includes('null'))) return true;
  if (schema.nullable === true) return true;
  const branches = [schema.anyOf, schema.oneOf].flatMap((list) =>
    Array.isArray(list) ? list : [],
  );
  if (branches.some(acceptsNull)) return true;
  return type === undefined && branches.length === 0 && !('enum' in schema) && !('const' in schema);
}
