import * as z from 'zod';
import { validateWithZod } from './define-tool.js';
import type { JsonSchema } from './json-schema.js';
import type { ValidationResult } from './tool.js';

const compiled = new WeakMap<object, z.ZodType | null>();

/**
 * Validates a value against a plain JSON Schema (tools from MCP, OpenAPI, or hand-written).
 * The schema is compiled lazily with zod's `fromJSONSchema` and cached per schema object.
 * A schema zod cannot compile falls back to checking that the value is a JSON object.
 */
export function validateWithJsonSchema(
  schema: JsonSchema,
  value: unknown,
): ValidationResult<unknown> {
  let validator = compiled.get(schema);
  if (validator === undefined) {
    try {
      validator =
        typeof z.fromJSONSchema === 'function'
          ? z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0])
          : null;
    } catch {
      validator = null;
    }
    compiled.set(schema, validator);
  }
  if (validator !== null) return validateWithZod(validator, value);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return {
      ok: false,
      issues: [
        {
          path: [],
          message: `expected object, received ${Array.isArray(value) ? 'array' : typeof value}`,
        },
      ],
    };
  }
  return { ok: true, value };
}
