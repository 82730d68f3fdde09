import { setOwnProperty } from './own-property.js';

/** A JSON Schema document (any draft); kept loose on purpose. */
export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema | JsonSchema[];
  additionalProperties?: boolean | JsonSchema;
  description?: string;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  $ref?: string;
  [keyword: string]: unknown;
}

/** The schema of a tool's parameters: an object schema. */
export interface JsonSchemaObject extends JsonSchema {
  type: 'object';
  properties?: Record<string, JsonSchema>;
}

const maxInlineDepth = 32;
/** Nodes (objects and arrays) a schema may have once its references are inlined. */
const maxInlineNodes = 100_000;

/**
 * Returns a self-contained copy of a schema: every local `$ref` (`#/$defs/X`, `#/definitions/X`)
 * inlined, and `$schema`, `$defs`, `definitions`, `$id` removed, because strict providers
 * reject references. A recursive reference is cut at depth 32 to `{}` (accept anything).
 * Throws when the copy would pass 100,000 objects and arrays: references that each use the next
 * twice double at every level (2^30 nodes from thirty small definitions froze the process).
 */
export function inlineJsonSchema(schema: JsonSchema): JsonSchema {
  const root = schema;
  let nodes = 0;
  const count = () => {
    nodes += 1;
    if (nodes > maxInlineNodes)
      throw new Error(
        `Tool schema too large once its $refs are inlined (over ${maxInlineNodes.toLocaleString('en-US')} objects and arrays)`,
      );
  };
  const visit = (node: unknown, depth: number, stack: readonly string[]): unknown => {
    if (node === null || typeof node !== 'object') return node;
    count();
    if (Array.isArray(node)) return node.map((item) => visit(item, depth, stack));
    const record = node as Record<string, unknown>;
    const ref = record.$ref;
    if (typeof ref === 'string' && ref.startsWith('#')) {
      if (stack.includes(ref) || depth > maxInlineDepth) return {};
      const target = resolvePointer(root, ref);
      if (target === undefined) throw new Error(`Unresolvable $ref in tool schema: ${ref}`);
      const { $ref: _ref, ...siblings } = record;
      const inlined = visit(target, depth + 1, [...stack, ref]) as Record<string, unknown>;
      const rest = visit(siblings, depth + 1, stack) as Record<string, unknown>;
      return Object.keys(rest).length === 0 ? inlined : { ...inlined, ...rest };
    }
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(record)) {
      if (key === '$schema' || key === '$defs' || key === 'definitions' || key === '$id') continue;
      setOwnProperty(out, key, visit(value, depth, stack));
    }
    return out;
  };
  return visit(schema, 0, []) as JsonSchema;
}

function resolvePointer(root: unknown, ref: string): unknown {
  if (ref === '#') return root;
  const parts = ref
    .slice(2)
    .split('/')
    .map((part) => decodeURIComponent(part).replaceAll('~1', '/').replaceAll('~0', '~'));
  let current: unknown = root;
  for (const part of parts) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}
