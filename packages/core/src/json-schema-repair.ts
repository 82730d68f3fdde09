/**
 * Repairs what a validator would refuse in a tool's plain JSON Schema — schemas written by
 * other people (MCP servers, vendors' OpenAPI specs) — so one bad keyword never makes a tool
 * unusable: each repair is reported, the rest of the schema is still enforced.
 */

import { backtrackingRisk, linearPatternFormat, linearUrlFormat } from './json-schema-patterns.js';
import { setOwnProperty } from './own-property.js';

/** The JSON Schema dialects the validator understands. */
export type JsonSchemaDraft = '4' | '7' | '2019-09' | '2020-12';

const knownTypes = new Set(['string', 'number', 'integer', 'boolean', 'object', 'array', 'null']);

// In a regular expression with the `u` flag, a backslash may only escape syntax characters,
// `/` and `-` (in a class); `\:` or `\_` — fine without the flag — are errors with it.
const validUnicodeEscape = /[\^$\\.*+?()[\]{}|/\-bBdDwWsSfnrtv0-9cxukpP]/;

/** The dialect a schema declares with `$schema`; 2020-12 (MCP's default) when it declares none. */
export function draftOf(schema: unknown): JsonSchemaDraft {
  const declared =
    typeof schema === 'object' && schema !== null
      ? (schema as { $schema?: unknown }).$schema
      : undefined;
  if (typeof declared !== 'string') return '2020-12';
  if (declared.includes('draft-04') || declared.includes('draft-03')) return '4';
  if (declared.includes('draft-06') || declared.includes('draft-07')) return '7';
  if (declared.includes('2019-09')) return '2019-09';
  return '2020-12';
}

function compiles(pattern: string): boolean {
  try {
    new RegExp(pattern, 'u');
    return true;
  } catch {
    return false;
  }
}

/** Drops backslashes the `u` flag refuses (`\:` → `:`); the meaning without the flag is kept. */
function withUnicodeSafeEscapes(pattern: string): string {
  let out = '';
  let inClass = false;
  for (let index = 0; index < pattern.length; index++) {
    const char = pattern[index] as string;
    if (char !== '\\' || index + 1 >= pattern.length) {
      if (char === '[') inClass = true;
      else if (char === ']') inClass = false;
      out += char;
      continue;
    }
    const next = pattern[index + 1] as string;
    // `\-` is only an escape inside a class with the flag; outside, `-` needs none.
    const keep = validUnicodeEscape.test(next) && (next !== '-' || inClass);
    out += keep ? `\\${next}` : next;
    index++;
  }
  return out;
}

/**
 * A pattern the validator can compile (it always uses the `u` flag), or undefined when none
 * keeps the meaning: PCRE-only syntax such as `(?i)` or lookbehind variants that do not exist.
 */
export function repairPattern(pattern: string): string | undefined {
  if (compiles(pattern)) return pattern;
  const escaped = withUnicodeSafeEscapes(pattern);
  return compiles(escaped) ? escaped : undefined;
}

function pointerTarget(root: unknown, ref: string): unknown {
  if (ref === '#') return root;
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    const segment = decodeURIComponent(raw).replaceAll('~1', '/').replaceAll('~0', '~');
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[segment];
  }
  return node;
}

/** Whether a `$ref` names something the validator will find: a local target or a declared `$id`/anchor. */
function resolvable(root: unknown, ref: string, ids: ReadonlySet<string>): boolean {
  if (ref.startsWith('#/') || ref === '#') return pointerTarget(root, ref) !== undefined;
  if (ref.startsWith('#')) return ids.has(ref.slice(1));
  return ids.has(ref) || ids.has(ref.split('#')[0] ?? '');
}

function collectIds(node: unknown, ids: Set<string>): void {
  if (Array.isArray(node)) {
    for (const item of node) collectIds(item, ids);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  const record = node as Record<string, unknown>;
  for (const key of ['$id', '$anchor', '$dynamicAnchor', 'id']) {
    const value = record[key];
    if (typeof value === 'string') ids.add(value.replace(/^#/, ''));
  }
  for (const value of Object.values(record)) collectIds(value, ids);
}

// Where a schema's sub-schemas are: one schema, a list of them, or a map of names to them.
// Everything else (enum, const, default, examples, x-… extensions) is data and never walked.
const schemaKeywords = new Set([
  'items',
  'additionalItems',
  'additionalProperties',
  'contains',
  'not',
  'if',
  'then',
  'else',
  'propertyNames',
  'unevaluatedItems',
  'unevaluatedProperties',
  'contentSchema',
]);
const schemaListKeywords = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems', 'items']);
const schemaMapKeywords = new Set([
  'properties',
  '$defs',
  'definitions',
  'dependentSchemas',
  'dependencies',
]);

function dedupe(values: readonly unknown[]): unknown[] | undefined {
  const seen = new Set<string>();
  const kept: unknown[] = [];
  for (const value of values) {
    const key = JSON.stringify(value);
    if (seen.has(key)) continue;
    seen.add(key);
    kept.push(value);
  }
  return kept.length === values.length ? undefined : kept;
}

/** A copy of `schema` the validator accepts, and what had to change; `schema` itself if nothing did. */
export function repairJsonSchema(schema: unknown): {
  schema: unknown;
  repairs: string[];
  /** Whether the schema matches property names with `patternProperties` (see `maxPatternPropertyNameLength`). */
  matchesPropertyNames: boolean;
} {
  const repairs: string[] = [];
  const ids = new Set<string>();
  let matchesPropertyNames = false;
  collectIds(schema, ids);
  const repaired = visit(schema, '#');
  return { schema: repaired, repairs, matchesPropertyNames };

  function visitMap(node: unknown, at: string): unknown {
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return node;
    let copy: Record<string, unknown> | undefined;
    for (const [name, sub] of Object.entries(node)) {
      // `dependencies` maps a name to a schema or (draft 4–7) to a list of names.
      const visited = Array.isArray(sub) ? sub : visit(sub, `${at}/${name}`);
      if (visited !== sub) {
        copy ??= { ...(node as Record<string, unknown>) };
        setOwnProperty(copy, name, visited);
      }
    }
    return copy ?? node;
  }

  function visit(node: unknown, at: string): unknown {
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return node;
    let copy: Record<string, unknown> | undefined;
    const set = (key: string, value: unknown): void => {
      copy ??= { ...(node as Record<string, unknown>) };
      if (value === undefined) delete copy[key];
      else setOwnProperty(copy, key, value);
    };
    // Formats that stand in for a `pattern` or the `url` format (see json-schema-patterns.ts).
    const linearFormats: string[] = [];
    for (const [key, value] of Object.entries(node)) {
      const where = `${at}/${key}`;
      if (key === 'pattern' && typeof value === 'string') {
        const pattern = repairPattern(value);
        set(key, undefined);
        if (pattern === undefined) {
          repairs.push(`${where}: /${value}/ is not an ECMAScript regular expression; not checked`);
          continue;
        }
        const linear = linearPatternFormat(pattern);
        if (linear === undefined)
          repairs.push(
            `${where}: /${value}/ needs lookaround or back-references, which only a backtracking engine runs; not checked`,
          );
        else linearFormats.push(linear);
      } else if (key === 'format' && value === 'url') {
        set(key, undefined);
        linearFormats.push(linearUrlFormat());
      } else if (key === 'patternProperties' && typeof value === 'object' && value !== null) {
        let changed = false;
        const kept: Record<string, unknown> = {};
        for (const [pattern, sub] of Object.entries(value as Record<string, unknown>)) {
          const fixed = repairPattern(pattern);
          if (fixed === undefined) {
            repairs.push(`${where}: /${pattern}/ is not an ECMAScript regular expression; ignored`);
            changed = true;
            continue;
          }
          const risk = backtrackingRisk(fixed);
          if (risk !== undefined) {
            repairs.push(`${where}: /${pattern}/ could take too long to match (${risk}); ignored`);
            changed = true;
            continue;
          }
          matchesPropertyNames = true;
          const visited = visit(sub, `${where}/${pattern}`);
          if (fixed !== pattern || visited !== sub) changed = true;
          setOwnProperty(kept, fixed, visited);
        }
        if (changed) set(key, kept);
      } else if (key === '$ref' && typeof value === 'string') {
        if (!resolvable(schema, value, ids)) {
          repairs.push(`${where}: "${value}" cannot be resolved; accepts anything`);
          set(key, undefined);
        }
      } else if (key === 'enum' && Array.isArray(value)) {
        const unique = dedupe(value);
        if (unique !== undefined) set(key, unique);
      } else if (key === 'type') {
        const types = Array.isArray(value) ? value : [value];
        const known = types.filter((type) => typeof type === 'string' && knownTypes.has(type));
        if (known.length !== types.length) {
          repairs.push(`${where}: unknown type ${JSON.stringify(value)}; not checked`);
          set(key, known.length === 0 ? undefined : Array.isArray(value) ? known : known[0]);
        }
      } else if (
        (key === 'exclusiveMinimum' || key === 'exclusiveMaximum') &&
        typeof value === 'boolean'
      ) {
        // Draft 4 (and OpenAPI 3.0): a flag on minimum/maximum; later drafts: the bound itself.
        const bound = key === 'exclusiveMinimum' ? 'minimum' : 'maximum';
        const limit = (node as Record<string, unknown>)[bound];
        if (value && typeof limit === 'number') {
          set(key, limit);
          set(bound, undefined);
        } else {
          set(key, undefined);
        }
      } else if (key === 'required' && !Array.isArray(value)) {
        // Draft 3's `required: true` and other non-arrays: the validator would throw on them.
        set(key, undefined);
      } else if (schemaListKeywords.has(key) && Array.isArray(value)) {
        const items = value.map((item, index) => visit(item, `${where}/${index}`));
        if (items.some((item, index) => item !== value[index])) set(key, items);
      } else if (schemaKeywords.has(key)) {
        const visited = visit(value, where);
        if (visited !== value) set(key, visited);
      } else if (schemaMapKeywords.has(key)) {
        const visited = visitMap(value, where);
        if (visited !== value) set(key, visited);
      }
    }
    // The first stands where `format` was (when it is free), the others join `allOf`.
    for (const name of linearFormats) {
      const current = (copy ?? (node as Record<string, unknown>)) as Record<string, unknown>;
      if (current.format === undefined) set('format', name);
      else set('allOf', [...(Array.isArray(current.allOf) ? current.allOf : []), { format: name }]);
    }
    return copy ?? node;
  }
}
