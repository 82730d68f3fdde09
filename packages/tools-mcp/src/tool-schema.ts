import { inlineJsonSchema, type JsonSchema, type JsonSchemaObject } from '@agent/core';

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
    out[key] = stripRefs(value, keep);
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
