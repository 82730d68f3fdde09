import * as z from 'zod';
import { validateWithZod } from './define-tool.js';
import type { JsonSchema } from './json-schema.js';
import type { ValidationResult } from './tool.js';

interface CompiledSchema {
  validator: z.ZodType | null;
  /** Why zod could not compile the whole schema; undefined when it did. */
  problem: string | undefined;
}

const compiled = new WeakMap<object, CompiledSchema>();

function fromJsonSchema(schema: unknown): z.ZodType {
  if (typeof z.fromJSONSchema !== 'function') throw new Error('zod lacks fromJSONSchema');
  return z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
}

// zod compiles `pattern` without the `u` flag, so `\p{L}` would match the letters "p{L}" and
// reject valid input; such patterns are left unchecked rather than checked wrongly.
const unicodeOnlyEscape = /\\[pP]\{|\\u\{/;

/** A copy of `schema` without the `pattern`s that need the `u` flag; `schema` itself if none. */
function withoutUnicodePatterns(schema: unknown): unknown {
  if (Array.isArray(schema)) {
    const items = schema.map(withoutUnicodePatterns);
    return items.every((item, index) => item === schema[index]) ? schema : items;
  }
  if (typeof schema !== 'object' || schema === null) return schema;
  let copy: Record<string, unknown> | undefined;
  for (const [key, value] of Object.entries(schema)) {
    const drop = key === 'pattern' && typeof value === 'string' && unicodeOnlyEscape.test(value);
    const next = drop ? undefined : withoutUnicodePatterns(value);
    if (drop || next !== value) {
      copy ??= { ...(schema as Record<string, unknown>) };
      if (drop) delete copy[key];
      else copy[key] = next;
    }
  }
  return copy ?? schema;
}

function compile(schema: JsonSchema): CompiledSchema {
  const cached = compiled.get(schema);
  if (cached !== undefined) return cached;
  let entry: CompiledSchema;
  try {
    entry = { validator: fromJsonSchema(withoutUnicodePatterns(schema)), problem: undefined };
  } catch (error) {
    const problem = error instanceof Error ? error.message : String(error);
    entry = { validator: compileByProperty(schema), problem };
  }
  compiled.set(schema, entry);
  return entry;
}

/**
 * The fallback for a schema zod cannot compile as a whole: an object whose properties are
 * checked one by one where they compile (others accept anything), with its required keys.
 */
function compileByProperty(schema: JsonSchema): z.ZodType | null {
  if (typeof schema !== 'object' || schema === null) return null;
  const record = schema as { properties?: unknown; required?: unknown };
  const properties =
    typeof record.properties === 'object' && record.properties !== null
      ? (record.properties as Record<string, unknown>)
      : {};
  const required = new Set(Array.isArray(record.required) ? record.required : []);
  const shape: Record<string, z.ZodType> = {};
  for (const [key, property] of Object.entries(properties)) {
    let validator: z.ZodType;
    try {
      validator = fromJsonSchema(withoutUnicodePatterns(property));
    } catch {
      validator = z.unknown().refine((value) => value !== undefined, 'required');
    }
    shape[key] = required.has(key) ? validator : validator.optional();
  }
  for (const key of required) {
    if (typeof key === 'string' && !(key in shape)) {
      shape[key] = z.unknown().refine((value) => value !== undefined, 'required');
    }
  }
  return z.looseObject(shape);
}

/**
 * Why a plain JSON Schema cannot be checked in full (zod's `fromJSONSchema` rejects it), or
 * `undefined` when it can. Tool sources use it to warn: such a schema is then checked property
 * by property, and the properties that do not compile accept anything.
 */
export function jsonSchemaValidationProblem(schema: JsonSchema): string | undefined {
  return compile(schema).problem;
}

/**
 * Validates a value against a plain JSON Schema (tools from MCP, OpenAPI, or hand-written).
 * The schema is compiled lazily with zod's `fromJSONSchema` and cached per schema object.
 * A schema zod cannot compile as a whole is checked property by property (see
 * {@link jsonSchemaValidationProblem}); the value must be a JSON object either way.
 */
export function validateWithJsonSchema(
  schema: JsonSchema,
  value: unknown,
): ValidationResult<unknown> {
  const { validator } = compile(schema);
  if (validator !== null) return validateWithZod(validator, value);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    const received = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
    return { ok: false, issues: [{ path: [], message: `expected object, received ${received}` }] };
  }
  return { ok: true, value };
}
