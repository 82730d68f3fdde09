import { Validator } from '@cfworker/json-schema';
import type { JsonSchema } from './json-schema.js';
import { describeOutputUnits } from './json-schema-issues.js';
import { maxPatternPropertyNameLength } from './json-schema-patterns.js';
import { draftOf, repairJsonSchema } from './json-schema-repair.js';
import type { ValidationResult } from './tool.js';
import { describeReceived } from './validation.js';

interface CompiledSchema {
  validator: Validator;
  /** The schema the validator runs: the tool's own, or its repaired copy. */
  schema: unknown;
  /** What had to be repaired (and is therefore not, or differently, enforced); empty if nothing. */
  repairs: string[];
  /** Whether property names are matched by patterns (their length is then bounded first). */
  matchesPropertyNames: boolean;
}

const compiled = new WeakMap<object, CompiledSchema>();

function compile(schema: JsonSchema): CompiledSchema {
  const cached = compiled.get(schema);
  if (cached !== undefined) return cached;
  const repaired = repairJsonSchema(schema);
  // The validator marks the schema objects it resolves (non-enumerable `__absolute_…__`
  // properties): it gets its own copy, so a tool's schema — possibly frozen — is never touched.
  const runnable = structuredClone(repaired.schema);
  const repairs = repaired.repairs;
  const entry: CompiledSchema = {
    matchesPropertyNames: repaired.matchesPropertyNames,
    // All errors, not the first: the model fixes every field in one retry.
    validator: new Validator(runnable as object, draftOf(schema), false),
    schema: runnable,
    repairs,
  };
  compiled.set(schema, entry);
  return entry;
}

/**
 * What of a plain JSON Schema cannot be enforced as written — a `pattern` that is not an
 * ECMAScript regular expression, a `$ref` that resolves nowhere, an unknown `type` — or
 * `undefined` when all of it is. Such parts are repaired (dropped, or rewritten to the same
 * meaning) so the rest of the schema is still enforced; tool sources use this to warn per tool.
 */
export function jsonSchemaValidationProblem(schema: JsonSchema): string | undefined {
  const { repairs } = compile(schema);
  return repairs.length === 0 ? undefined : repairs.join('; ');
}

/**
 * Validates a value against a plain JSON Schema (tools from MCP, OpenAPI, or hand-written) with
 * a complete validator (`@cfworker/json-schema`: drafts 4, 7, 2019-09 and 2020-12 — `$schema`
 * picks, 2020-12 by default — formats, unicode patterns, `if`/`then`/`else`, `dependentRequired`,
 * `unevaluatedProperties`…). Compiled once per schema object and cached. The value must be a
 * JSON object; issues name the field's path, what was expected and what was received.
 */
export function validateWithJsonSchema(
  schema: JsonSchema,
  value: unknown,
): ValidationResult<unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return {
      ok: false,
      issues: [{ path: [], message: `expected object, received ${describeReceived(value)}` }],
    };
  }
  const entry = compile(schema);
  if (entry.matchesPropertyNames) {
    const long = longPropertyName(value);
    if (long !== undefined)
      return {
        ok: false,
        issues: [
          {
            path: long.path,
            message: `field name of ${long.name.length} characters (at most ${maxPatternPropertyNameLength})`,
          },
        ],
      };
  }
  let output: ReturnType<Validator['validate']>;
  try {
    output = entry.validator.validate(value);
  } catch (error) {
    // The validator percent-encodes each field name into its error locations: a name holding
    // half of a UTF-16 pair has no such form (`URIError: URI malformed`). The arguments' fault.
    const lone = error instanceof URIError ? loneSurrogateName(value) : undefined;
    if (lone !== undefined)
      return {
        ok: false,
        issues: [
          {
            path: lone,
            message: 'field name holds a lone UTF-16 surrogate (half of a character)',
          },
        ],
      };
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
    return {
      ok: false,
      issues: [{ path: [], message: `the tool's input schema cannot be checked: ${reason}` }],
    };
  }
  if (output.valid) return { ok: true, value };
  const issues = describeOutputUnits(output.errors, entry.schema, value);
  return {
    ok: false,
    issues: issues.length > 0 ? issues : [{ path: [], message: 'does not match the schema' }],
  };
}

/** The path of the first field name holding a lone UTF-16 surrogate, name included. */
function loneSurrogateName(
  value: unknown,
  path: (string | number)[] = [],
): (string | number)[] | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const entries: [string | number, unknown][] = Array.isArray(value)
    ? [...value.entries()]
    : Object.entries(value);
  for (const [name, item] of entries) {
    // With the `u` flag a surrogate range matches only one that is not half of a pair.
    if (typeof name === 'string' && /[\uD800-\uDFFF]/u.test(name)) return [...path, name];
    const found = loneSurrogateName(item, [...path, name]);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * The first property name longer than `maxPatternPropertyNameLength`, anywhere in the value: the
 * validator matches names with `patternProperties` on a backtracking engine, where the length is
 * what a slow pattern multiplies.
 */
function longPropertyName(
  value: unknown,
  path: (string | number)[] = [],
): { name: string; path: (string | number)[] } | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = longPropertyName(item, [...path, index]);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  for (const [name, item] of Object.entries(value)) {
    if (name.length > maxPatternPropertyNameLength) return { name, path };
    const found = longPropertyName(item, [...path, name]);
    if (found !== undefined) return found;
  }
  return undefined;
}
