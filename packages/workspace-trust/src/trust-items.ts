import { createHash } from 'node:crypto';

/**
 * What a piece of a folder's configuration would do if applied: run something (`hook`,
 * `mcp-server`), reach somewhere, or widen what the agent may do (`allow-rule`,
 * `permission-mode`, `sandbox`, `env`, …). Open union: a front end may add its own kinds.
 */
export type TrustItemKind =
  | 'hook'
  | 'mcp-server'
  | 'env'
  | 'pass-env'
  | 'allow-rule'
  | 'permission-mode'
  | 'sandbox'
  | 'keep-grants'
  | 'provider'
  | 'model'
  | (string & {});

/** One thing a folder's configuration would execute or widen; trust is pinned to each one. */
export interface TrustItem {
  kind: TrustItemKind;
  /**
   * Its identity within the folder (e.g. `.agent/settings.json hooks.PreToolUse[0].hooks[0]`):
   * the same key at a later start is the same item, changed when its value differs.
   */
  key: string;
  /** The file it comes from. */
  source: string;
  /** One line for the user saying exactly what would run or change (no secret values). */
  description: string;
  /** What is pinned (any JSON value): a hook's command, a server's command and arguments, an env value. */
  value: unknown;
}

/** JSON with object keys sorted, so equal values digest the same whatever their key order. */
function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, item]) => item !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
}

/** The SHA-256 (hex) of an item's kind, key and value: what a stored trust is pinned to. */
export function trustItemDigest(item: Pick<TrustItem, 'kind' | 'key' | 'value'>): string {
  return createHash('sha256')
    .update(canonicalJson({ kind: item.kind, key: item.key, value: item.value }))
    .digest('hex');
}
