import {
  inlineJsonSchema,
  type JsonSchema,
  type JsonSchemaObject,
  setOwnProperty,
} from '@agent/core';

/**
 * The `parameters` of an MCP tool: its `inputSchema` made self-contained (local `$ref`s inlined,
 * `$schema`/`$defs`/`$id` dropped). A missing or non-object schema becomes `{ type: 'object' }`;
 * a reference that cannot be resolved (remote or broken) is replaced by "anything", since
 * strict providers reject `$ref` and a half-usable tool beats a missing one.
 */
export function toToolParameters(inputSchema: unknown): JsonSchemaObject {
  if (!isRecord(inputSchema)) return { type: 'object' };
  const resolvable = stripRefs(inputSchema, (ref) => resolvesLocally(inputSchema, ref));
  const inlined = stripRefs(inlineJsonSchema(resolvable as JsonSchema), () => false) as JsonSchema;
  const type = inlined.type;
  const objectLike =
    type === undefined || type === 'object' || (Array.isArray(type) && type.includes('object'));
  if (!objectLike) return { type: 'object' };
  const parameters: JsonSchemaObject = { ...inlined, type: 'object' };
  if (parameters.properties !== undefined && !isRecord(parameters.properties)) {
    delete parameters.properties;
  }
  if (
    parameters.required !== undefined &&
    !(
      Array.isArray(parameters.required) &&
      parameters.required.every((key) => typeof key === 'string')
    )
  ) {
    delete parameters.required;
  }
  return parameters;
}

/** Removes each `$ref` that `keep` rejects; a node that was only such a reference accepts anything. */
function stripRefs(node: unknown, keep: (ref: string) => boolean): unknown {
  if (Array.isArray(node)) return node.map((item) => stripRefs(item, keep));
  if (!isRecord(node)) return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === '$ref' && !(typeof value === 'string' && keep(value))) continue;
    // As an own property: a property may be named `__proto__` (assignment would set the prototype).
    setOwnProperty(out, key, stripRefs(value, keep));
  }
  return out;
}

/** Whether a reference is a JSON pointer into the schema itself that points at something. */
function resolvesLocally(root: unknown, ref: string): boolean {
  if (ref === '#') return true;
  if (!ref.startsWith('#/')) return false;
  let current: unknown = root;
  try {
    for (const raw of ref.slice(2).split('/')) {
      const part = decodeURIComponent(raw).replaceAll('~1', '/').replaceAll('~0', '~');
      if (current === null || typeof current !== 'object') return false;
      current = (current as Record<string, unknown>)[part];
    }
  } catch {
    return false;
  }
  return current !== undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

// Bounds of `outputSearchText`, as the OpenAPI adapter's for a response.
const maxSearchChars = 1200;
const maxProperties = 60;
const maxBranches = 4;

/**
 * What an MCP tool returns, as words for `tool_search` (the tool's `searchText`): the property
 * names of its `outputSchema`, two levels deep (array items and `allOf`/`oneOf`/`anyOf` branches
 * count as their parent), breadth first, one a line, at most 1,200 characters; `undefined` when
 * it names none. A question then finds the tool whose answer holds its words. Never sent to the
 * model.
 */
export function outputSearchText(outputSchema: unknown): string | undefined {
  if (!isRecord(outputSchema)) return undefined;
  const names: string[] = [];
  let length = 0;
  let level: unknown[] = [toToolParameters(outputSchema)];
  for (let depth = 0; depth < 2; depth++) {
    const next: unknown[] = [];
    for (const properties of level.flatMap((schema) => propertyMaps(schema, 0))) {
      for (const [name, value] of Object.entries(properties).slice(0, maxProperties)) {
        if (length + name.length + 1 > maxSearchChars) return names.join('\n');
        names.push(name);
        length += name.length + 1;
        next.push(value);
      }
    }
    level = next;
  }
  return names.length === 0 ? undefined : names.join('\n');
}

/** The `properties` a schema stands for: its own, its array items', its branches'. */
function propertyMaps(schema: unknown, hops: number): Record<string, unknown>[] {
  if (!isRecord(schema) || hops > 4) return [];
  const found = isRecord(schema.properties) ? [schema.properties] : [];
  if (schema.items !== undefined) found.push(...propertyMaps(schema.items, hops + 1));
  for (const key of ['allOf', 'oneOf', 'anyOf']) {
    const branches = schema[key];
    if (Array.isArray(branches))
      for (const branch of branches.slice(0, maxBranches))
        found.push(...propertyMaps(branch, hops + 1));
  }
  return found;
}
