import { type JsonSchema, type JsonSchemaObject, setOwnProperty as setOwn } from '@agent/core';

/**
 * How the arguments of a strict-mode tool are mapped back: which `null`s stood for an absent
 * optional property (the original schema did not accept `null` there) and must be removed
 * before validation.
 */
export type StrictArgumentsPlan =
  | { kind: 'leaf' }
  | {
      kind: 'object';
      properties: Record<string, { plan: StrictArgumentsPlan; nullMeansAbsent: boolean }>;
    }
  | { kind: 'array'; items: StrictArgumentsPlan }
  /** An open map sent as `[{ key, value }]` entries, turned back into an object. */
  | { kind: 'map'; values: StrictArgumentsPlan }
  | { kind: 'union'; branches: Array<{ schema: JsonSchema; plan: StrictArgumentsPlan }> };

/** The outcome of converting a tool's parameters to OpenAI's strict dialect. */
export type StrictSchemaResult =
  | { ok: true; schema: JsonSchemaObject; plan: StrictArgumentsPlan }
  | { ok: false; reason: string };

/** String formats OpenAI's strict mode accepts. */
const supportedFormats = new Set([
  'date-time',
  'time',
  'date',
  'duration',
  'email',
  'hostname',
  'ipv4',
  'ipv6',
  'uuid',
]);

/** Keywords that carry no validation meaning: kept (`description`, `title`) or dropped. */
const keptAnnotations = new Set(['description', 'title']);
const droppedAnnotations = new Set(['default', 'examples', '$comment', 'deprecated', 'readOnly']);
const constraintKeywords: Record<string, ReadonlySet<string>> = {
  string: new Set(['pattern', 'format']),
  number: new Set(['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf']),
  integer: new Set(['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf']),
  array: new Set(['items', 'minItems', 'maxItems']),
  object: new Set(['properties', 'required', 'additionalProperties']),
  boolean: new Set(),
  null: new Set(),
};
/** A type's constraint keywords; undefined for a name that is no JSON Schema type (`constructor`…). */
function constraintsOf(type: string): ReadonlySet<string> | undefined {
  return Object.hasOwn(constraintKeywords, type) ? constraintKeywords[type] : undefined;
}
const primitiveTypes = new Set(['string', 'number', 'integer', 'boolean', 'null']);
/**
 * Constraints strict mode cannot carry but that do not change the shape: they move into the
 * description (`maxLength: 256`), so the tool stays strict and the model still reads them; the
 * loop validates the arguments against the original schema, so they are still enforced.
 */
const describedKeywords = new Set([
  'minLength',
  'maxLength',
  'uniqueItems',
  'minProperties',
  'maxProperties',
  'minContains',
  'maxContains',
  'format',
  'contentEncoding',
  'contentMediaType',
]);

/** Annotations with no meaning for the model's output: vendor extensions and OpenAPI's own. */
function isIgnoredAnnotation(key: string): boolean {
  return (
    key.startsWith('x-') ||
    key === 'example' ||
    key === 'externalDocs' ||
    key === 'xml' ||
    key === 'discriminator' ||
    key === 'writeOnly' ||
    key === '$id' ||
    key === '$schema'
  );
}

/** OpenAI's limit on the nesting of objects in strict schemas. */
const maxNestingDepth = 10;

class Unsupported extends Error {}

/**
 * Converts tool parameters to OpenAI's strict dialect: every property required, the optional
 * ones made nullable, `additionalProperties: false` on every object, `oneOf` read as `anyOf`.
 * Returns `ok: false` with a reason when the schema cannot be expressed (open objects, `{}`,
 * unsupported keywords or formats, nesting deeper than 10); the caller then sends the tool
 * non-strict. Pure: the input is not modified.
 */
export function toStrictSchema(parameters: JsonSchemaObject): StrictSchemaResult {
  try {
    const { schema, plan } = convert(parameters, '#', 0, true);
    return { ok: true, schema: schema as JsonSchemaObject, plan };
  } catch (error) {
    if (error instanceof Unsupported) return { ok: false, reason: error.message };
    throw error;
  }
}

function convert(
  node: JsonSchema,
  path: string,
  depth: number,
  isRoot = false,
): { schema: JsonSchema; plan: StrictArgumentsPlan } {
  if (node === null || typeof node !== 'object' || Array.isArray(node))
    throw new Unsupported(`${path}: not a schema object`);
  if (depth > maxNestingDepth)
    throw new Unsupported(`${path}: objects nested deeper than ${maxNestingDepth} levels`);
  const out: JsonSchema = {};
  for (const key of keptAnnotations) if (node[key] !== undefined) out[key] = node[key];

  const union = node.anyOf ?? node.oneOf;
  if (union !== undefined) {
    const extra = Object.keys(node).filter(
      (key) =>
        key !== 'anyOf' &&
        key !== 'oneOf' &&
        !keptAnnotations.has(key) &&
        !droppedAnnotations.has(key),
    );
    if (extra.length > 0 || (node.anyOf !== undefined && node.oneOf !== undefined))
      throw new Unsupported(`${path}: "${extra[0] ?? 'oneOf'}" beside anyOf/oneOf`);
    if (!Array.isArray(union) || union.length === 0)
      throw new Unsupported(`${path}: empty anyOf/oneOf`);
    if (isRoot) throw new Unsupported(`${path}: the root must be an object, not a union`);
    const branches = union.map((branch, index) => convert(branch, `${path}/anyOf/${index}`, depth));
    out.anyOf = branches.map((branch) => branch.schema);
    return {
      schema: out,
      plan: { kind: 'union', branches },
    };
  }

  const notes: string[] = [];
  for (const key of Object.keys(node)) {
    if (keptAnnotations.has(key) || droppedAnnotations.has(key) || isIgnoredAnnotation(key))
      continue;
    if (key === 'type' || key === 'enum' || key === 'const') continue;
    const types = typeList(node.type);
    const supported = types.some((type) => constraintsOf(type)?.has(key));
    const value = node[key];
    if (supported && !(key === 'format' && !supportedFormats.has(String(value)))) continue;
    if (describedKeywords.has(key) && (typeof value !== 'object' || value === null)) {
      notes.push(`${key}: ${typeof value === 'string' ? value : JSON.stringify(value)}`);
      continue;
    }
    throw new Unsupported(`${path}: keyword "${key}" is not supported in strict mode`);
  }
  if (notes.length > 0) {
    const own = typeof node.description === 'string' ? `${node.description} ` : '';
    out.description = `${own}(${notes.join('; ')})`;
  }

  const types = typeList(node.type);
  if (types.length === 0 && node.enum === undefined && node.const === undefined)
    throw new Unsupported(`${path}: a schema without "type" accepts any value`);
  if (isRoot && (types.length !== 1 || types[0] !== 'object'))
    throw new Unsupported(`${path}: the root must be an object`);
  for (const type of types)
    if (constraintsOf(type) === undefined) throw new Unsupported(`${path}: unknown type "${type}"`);
  if (node.type !== undefined) out.type = node.type;
  if (node.enum !== undefined) {
    if (!Array.isArray(node.enum) || node.enum.length === 0)
      throw new Unsupported(`${path}: empty enum`);
    // Duplicates (seen in real specs) are refused by some providers; they mean nothing.
    out.enum = [...new Set(node.enum.map((value) => JSON.stringify(value)))].map(
      (value) => JSON.parse(value) as unknown,
    );
  }
  if (node.const !== undefined) out.const = node.const;

  if (types.includes('object')) {
    if (types.length > 1) throw new Unsupported(`${path}: "object" mixed with other types`);
    return convertObject(node, out, path, depth, isRoot);
  }
  if (types.includes('array')) {
    if (types.length > 1) throw new Unsupported(`${path}: "array" mixed with other types`);
    const items = node.items;
    if (items === undefined || Array.isArray(items))
      throw new Unsupported(`${path}: arrays need a single "items" schema`);
    for (const key of ['minItems', 'maxItems']) if (node[key] !== undefined) out[key] = node[key];
    const converted = convert(items, `${path}/items`, depth);
    out.items = converted.schema;
    return { schema: out, plan: { kind: 'array', items: converted.plan } };
  }
  for (const type of types) {
    if (!primitiveTypes.has(type)) continue;
    for (const key of constraintsOf(type) ?? []) {
      const value = node[key];
      if (value === undefined) continue;
      // An unsupported format went into the description above.
      if (key === 'format' && (typeof value !== 'string' || !supportedFormats.has(value))) continue;
      // zod's `.int()` adds the safe-integer bounds; they say nothing and only add noise.
      if ((key === 'minimum' || key === 'maximum') && Math.abs(Number(value)) === 2 ** 53 - 1)
        continue;
      out[key] = value;
    }
  }
  return { schema: out, plan: { kind: 'leaf' } };
}

function convertObject(
  node: JsonSchema,
  out: JsonSchema,
  path: string,
  depth: number,
  isRoot: boolean,
): { schema: JsonSchema; plan: StrictArgumentsPlan } {
  const additional = node.additionalProperties;
  const declared = node.properties === undefined ? 0 : Object.keys(node.properties).length;
  // A typed map (`metadata: { additionalProperties: { type: 'string' } }`, all over Stripe) has
  // no strict form as an object; it goes as an array of `{ key, value }` entries and is turned
  // back into the object before validation. An untyped one (`true`, `{}`) stays unsupported.
  if (
    isPlainObject(additional) &&
    Object.keys(additional).length > 0 &&
    declared === 0 &&
    !isRoot &&
    node.propertyNames === undefined &&
    node.patternProperties === undefined
  )
    return convertMap(node, additional, out, path, depth);
  if (additional !== undefined && additional !== false)
    throw new Unsupported(
      `${path}: open object (additionalProperties) cannot be expressed in strict mode`,
    );
  const properties = node.properties;
  if (properties === undefined && !isRoot)
    throw new Unsupported(`${path}: an object without "properties" accepts any keys`);
  const required = new Set(Array.isArray(node.required) ? node.required : []);
  const strictProperties: Record<string, JsonSchema> = {};
  const planProperties: Record<string, { plan: StrictArgumentsPlan; nullMeansAbsent: boolean }> =
    {};
  for (const [name, property] of Object.entries(properties ?? {})) {
    const converted = convert(property, `${path}/properties/${name}`, depth + 1);
    const optional = !required.has(name);
    const nullMeansAbsent = optional && !acceptsNull(converted.schema);
    setOwn(
      strictProperties,
      name,
      nullMeansAbsent ? makeNullable(converted.schema) : converted.schema,
    );
    setOwn(planProperties, name, { plan: converted.plan, nullMeansAbsent });
  }
  out.properties = strictProperties;
  out.required = Object.keys(strictProperties);
  out.additionalProperties = false;
  return { schema: out, plan: { kind: 'object', properties: planProperties } };
}

function convertMap(
  node: JsonSchema,
  values: JsonSchema,
  out: JsonSchema,
  path: string,
  depth: number,
): { schema: JsonSchema; plan: StrictArgumentsPlan } {
  const value = convert(values, `${path}/additionalProperties`, depth + 1);
  const note = 'A map: one {key, value} entry per key.';
  const notes = typeof out.description === 'string' ? `${out.description} ${note}` : note;
  const bounds: JsonSchema = {};
  // minProperties/maxProperties are counts of entries here.
  if (typeof node.minProperties === 'number') bounds.minItems = node.minProperties;
  if (typeof node.maxProperties === 'number') bounds.maxItems = node.maxProperties;
  const schema: JsonSchema = {
    ...(out.title === undefined ? {} : { title: out.title }),
    description: notes,
    type: 'array',
    items: {
      type: 'object',
      properties: { key: { type: 'string' }, value: value.schema },
      required: ['key', 'value'],
      additionalProperties: false,
    },
    ...bounds,
  };
  return { schema, plan: { kind: 'map', values: value.plan } };
}

/** Whether a plan turns some map's entries back into an object (so arguments always need mapping). */
export function planHasMap(plan: StrictArgumentsPlan): boolean {
  switch (plan.kind) {
    case 'leaf':
      return false;
    case 'map':
      return true;
    case 'array':
      return planHasMap(plan.items);
    case 'object':
      return Object.values(plan.properties).some((property) => planHasMap(property.plan));
    case 'union':
      return plan.branches.some((branch) => planHasMap(branch.plan));
    default:
      return false;
  }
}

function typeList(type: unknown): string[] {
  if (type === undefined) return [];
  if (typeof type === 'string') return [type];
  if (Array.isArray(type) && type.every((item) => typeof item === 'string')) return type;
  throw new Unsupported(`invalid "type": ${JSON.stringify(type)}`);
}

function acceptsNull(schema: JsonSchema): boolean {
  if (schema.anyOf !== undefined) return schema.anyOf.some(acceptsNull);
  if (schema.const !== undefined) return schema.const === null;
  if (schema.enum !== undefined) return schema.enum.includes(null);
  return typeList(schema.type).includes('null');
}

function makeNullable(schema: JsonSchema): JsonSchema {
  if (schema.anyOf !== undefined) return { ...schema, anyOf: [...schema.anyOf, { type: 'null' }] };
  const types = typeList(schema.type);
  if (
    types.length > 0 &&
    schema.const === undefined &&
    types.every((type) => primitiveTypes.has(type))
  ) {
    const nullable: JsonSchema = { ...schema, type: [...types, 'null'] };
    if (schema.enum !== undefined) nullable.enum = [...schema.enum, null];
    return nullable;
  }
  const { description, title, ...rest } = schema;
  const wrapped: JsonSchema = { anyOf: [rest, { type: 'null' }] };
  if (description !== undefined) wrapped.description = description;
  if (title !== undefined) wrapped.title = title;
  return wrapped;
}

/**
 * Maps strict-mode arguments back to the original schema's shape: a `null` the model sent for
 * an optional property that did not accept `null` is removed; a map's `{ key, value }` entries
 * become an object again. A union picks the first branch
 * whose strict schema the value matches. Values that match nothing are returned unchanged (the
 * tool's own validation then reports them). Pure: returns a new value.
 */
export function stripAbsentNulls(value: unknown, plan: StrictArgumentsPlan): unknown {
  switch (plan.kind) {
    case 'leaf':
      return value;
    case 'array':
      return Array.isArray(value) ? value.map((item) => stripAbsentNulls(item, plan.items)) : value;
    case 'map': {
      if (!Array.isArray(value)) return value;
      const entries: Array<[string, unknown]> = [];
      for (const entry of value) {
        if (!isPlainObject(entry) || typeof entry.key !== 'string') return value;
        entries.push([entry.key, stripAbsentNulls(entry.value, plan.values)]);
      }
      return Object.fromEntries(entries);
    }
    case 'object': {
      if (!isPlainObject(value)) return value;
      const out: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(value)) {
        const property = Object.hasOwn(plan.properties, key) ? plan.properties[key] : undefined;
        if (property === undefined) {
          setOwn(out, key, item);
          continue;
        }
        if (item === null && property.nullMeansAbsent) continue;
        setOwn(out, key, stripAbsentNulls(item, property.plan));
      }
      return out;
    }
    case 'union': {
      const branch = plan.branches.find((candidate) =>
        matchesStrictSchema(value, candidate.schema),
      );
      return branch === undefined ? value : stripAbsentNulls(value, branch.plan);
    }
    default: {
      const _exhaustive: never = plan;
      return _exhaustive;
    }
  }
}

/**
 * Whether a value matches a schema of the strict subset (types, enum, const, objects with
 * exactly their properties, arrays, anyOf). Numeric and string constraints are not checked:
 * this only picks union branches.
 */
export function matchesStrictSchema(value: unknown, schema: JsonSchema): boolean {
  if (schema.anyOf !== undefined)
    return schema.anyOf.some((branch) => matchesStrictSchema(value, branch));
  if (schema.const !== undefined && !jsonEqual(schema.const, value)) return false;
  if (schema.enum !== undefined && !schema.enum.some((item) => jsonEqual(item, value)))
    return false;
  const types = typeList(schema.type);
  if (types.length > 0 && !types.some((type) => hasType(value, type))) return false;
  if (isPlainObject(value) && types.includes('object')) {
    const properties = schema.properties ?? {};
    for (const key of Object.keys(value)) if (!Object.hasOwn(properties, key)) return false;
    for (const key of schema.required ?? []) if (!Object.hasOwn(value, key)) return false;
    for (const [key, item] of Object.entries(value)) {
      const property = Object.hasOwn(properties, key) ? properties[key] : undefined;
      if (property !== undefined && !matchesStrictSchema(item, property)) return false;
    }
  }
  if (Array.isArray(value) && types.includes('array') && schema.items !== undefined) {
    const items = schema.items;
    if (!Array.isArray(items) && !value.every((item) => matchesStrictSchema(item, items)))
      return false;
  }
  return true;
}

function hasType(value: unknown, type: string): boolean {
  switch (type) {
    case 'null':
      return value === null;
    case 'string':
      return typeof value === 'string';
    case 'boolean':
      return typeof value === 'boolean';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isPlainObject(value);
    default:
      return false;
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function jsonEqual(left: unknown, right: unknown): boolean {
  if (left === right) return true;
  if (typeof left !== 'object' || typeof right !== 'object' || left === null || right === null)
    return false;
  return JSON.stringify(left) === JSON.stringify(right);
}
