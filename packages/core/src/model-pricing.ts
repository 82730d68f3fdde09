import type { Usage } from './messages.js';

/** Prices in US dollars per million tokens. */
export interface ModelPricing {
  input: number;
  output: number;
  /** Input tokens served from the prompt cache. */
  cacheRead: number;
  /** Input tokens written to the prompt cache. */
  cacheWrite: number;
}

/** What a provider's catalogue knows about a model: limits in tokens, prices when public. */
export interface ModelInfo {
  /** Model id (or the id prefix its dated versions share). */
  id: string;
  /** Context window in tokens. */
  contextWindow: number;
  /** Output-token ceiling of one call. */
  maxOutputTokens: number;
  pricing?: ModelPricing;
}

/** A copy of `usage` with `cost` filled from the prices (US dollars); unchanged when `pricing` is undefined. */
export function withCost(usage: Usage, pricing: ModelPricing | undefined): Usage {
  if (pricing === undefined) return usage;
  const input = (usage.input * pricing.input) / 1_000_000;
  const output = (usage.output * pricing.output) / 1_000_000;
  const cacheRead = (usage.cacheRead * pricing.cacheRead) / 1_000_000;
  const cacheWrite = (usage.cacheWrite * pricing.cacheWrite) / 1_000_000;
  return {
    ...usage,
    cost: { input, output, cacheRead, cacheWrite, total: input + output + cacheRead + cacheWrite },
  };
}

/**
 * The catalogue entry for a model id: an exact match, else the longest entry id that the id
 * extends with `-…` (dated versions such as `claude-sonnet-4-5-20250929`).
 */
export function findModelByPrefix<T extends { id: string }>(
  catalogue: readonly T[],
  id: string,
): T | undefined {
  let best: T | undefined;
  for (const entry of catalogue) {
    if (id === entry.id) return entry;
    if (id.startsWith(`${entry.id}-`) && (best === undefined || entry.id.length > best.id.length))
      best = entry;
  }
  return best;
}
