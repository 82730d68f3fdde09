/**
 * A per-tool definition budget: one operation with a huge schema (a vendor's 1.6-million-character
 * request body) must not fill the model's context. Over the budget, deep levels of the schema the
 * model sees are described in words instead; the tool still validates against its full schema,
 * so the model learns the details from the validation errors if it needs them.
 */
import type { JsonSchema, JsonSchemaObject } from './json-schema.js';
import { setOwnProperty } from './own-property.js';
import type { ToolDefinition } from './tool.js';
import { toolSummary } from './tool-search-index.js';

type SchemaRecord = Record<string, unknown>;

function isRecord(value: unknown): value is SchemaRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function typeOf(schema: SchemaRecord): string {
  if (typeof schema.type === 'string') return schema.type;
  if (Array.isArray(schema.type)) return schema.type.join(' or ');
  if (isRecord(schema.properties)) return 'object';
  if (schema.items !== undefined) return 'array';
  return 'value';
}

function fieldNames(schema: SchemaRecord): string[] {
  if (isRecord(schema.properties)) return Object.keys(schema.properties);
  if (isRecord(schema.items)) return fieldNames(schema.items);
  for (const key of ['anyOf', 'oneOf', 'allOf']) {
    const list = schema[key];
    if (Array.isArray(list)) return list.filter(isRecord).flatMap(fieldNames);
  }
  return [];
}

/** A schema replaced by words: its type, its first sentence and the names of its fields. */
function described(schema: SchemaRecord): SchemaRecord {
  const type = typeOf(schema);
  const names = [...new Set(fieldNames(schema))];
  const shown =
    names.slice(0, 24).join(', ') + (names.length > 24 ? `, … (${names.length} in all)` : '');
  const own = typeof schema.description === 'string' ? `${toolSummary(schema.description)} ` : '';
  const fields = names.length > 0 ? `Fields: ${shown}. ` : '';
  const out: SchemaRecord = {
    description: `${own}${fields}(Schema shortened to fit the context; the full schema is enforced and its errors name what is wrong.)`,
  };
  if (typeof schema.type === 'string' || Array.isArray(schema.type)) out.type = schema.type;
  else if (type === 'object' || type === 'array') out.type = type;
  return out;
}

const nested = ['anyOf', 'oneOf', 'allOf'] as const;

/** The schema with every level deeper than `limit` described in words. */
function collapse(schema: unknown, depth: number, limit: number): unknown {
  if (!isRecord(schema)) return schema;
  const composite =
    isRecord(schema.properties) ||
    schema.items !== undefined ||
    nested.some((key) => Array.isArray(schema[key]));
  if (depth > limit && composite) return described(schema);
  const out: SchemaRecord = { ...schema };
  if (isRecord(schema.properties)) {
    out.properties = Object.fromEntries(
      Object.entries(schema.properties).map(([name, sub]) => [
        name,
        collapse(sub, depth + 1, limit),
      ]),
    );
  }
  if (Array.isArray(schema.items))
    out.items = schema.items.map((sub) => collapse(sub, depth + 1, limit));
  else if (schema.items !== undefined) out.items = collapse(schema.items, depth + 1, limit);
  if (isRecord(schema.additionalProperties))
    out.additionalProperties = collapse(schema.additionalProperties, depth + 1, limit);
  for (const key of nested) {
    const list = schema[key];
    if (Array.isArray(list)) out[key] = list.map((sub) => collapse(sub, depth + 1, limit));
  }
  return out;
}

/** Descriptions cut to their first sentence and long enums shortened, everywhere in the schema. */
function terse(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(terse);
  if (!isRecord(schema)) return schema;
  const out: SchemaRecord = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'description' && typeof value === 'string') out[key] = toolSummary(value);
    else if (key === 'examples' || key === 'example') continue;
    else if (key === 'enum' && Array.isArray(value) && value.length > 40) {
      out.description = `${typeof schema.description === 'string' ? `${toolSummary(schema.description)} ` : ''}One of ${value.length} values, e.g. ${value
        .slice(0, 10)
        .map((item) => JSON.stringify(item))
        .join(', ')}.`;
    } else if (key === 'properties' && isRecord(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, terse(sub)]));
      // Defined: a schema from a server may hold a `__proto__` key, which assignment would make
      // the copy's prototype — its `properties` then read as the copy's own when it is collapsed.
    } else setOwnProperty(out, key, terse(value));
  }
  return out;
}

function size(value: unknown): number {
  return JSON.stringify(value).length;
}

/**
 * A definition that fits `maxChars` (JSON characters of description + parameters) as far as it
 * can: first descriptions cut to a sentence and long enums summarised, then ever shallower
 * levels described in words, down to the top-level fields themselves. Within budget: unchanged.
 */
export function fitToolDefinition(definition: ToolDefinition, maxChars: number): ToolDefinition {
  if (!Number.isFinite(maxChars) || size(definition) <= maxChars) return definition;
  let description = definition.description;
  if (description.length > maxChars / 4)
    description = `${description.slice(0, Math.floor(maxChars / 4))}…`;
  let parameters = terse(definition.parameters) as JsonSchema;
  for (let limit = 4; limit >= 0 && size({ description, parameters }) > maxChars; limit--) {
    parameters = collapse(parameters, 0, limit) as JsonSchema;
  }
  if (size({ description, parameters }) > maxChars) {
    // Even the top-level fields do not fit: their names only, and which are required.
    const required = (definition.parameters as { required?: unknown }).required;
    const summary = described(parameters as SchemaRecord);
    const needed =
      Array.isArray(required) && required.length > 0
        ? ` Required: ${required.slice(0, 24).join(', ')}.`
        : '';
    parameters = {
      type: 'object',
      description: `${summary.description as string}${needed}`,
      additionalProperties: true,
    } as JsonSchema;
  }
  return { ...definition, description, parameters: parameters as JsonSchemaObject };
}
