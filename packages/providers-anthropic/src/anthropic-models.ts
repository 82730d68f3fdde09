import { findModelByPrefix, type Usage, withCost } from '@agent/core';

/** What we know about one model: limits in tokens, prices in US dollars per million tokens. */
export interface AnthropicModelInfo {
  /** Model id (or the id prefix its dated versions share). */
  id: string;
  /** Context window in tokens. */
  contextWindow: number;
  /** Output-token ceiling of one call. */
  maxOutputTokens: number;
  /** Prices in US dollars per million tokens (5-minute cache writes). */
  pricing: { input: number; output: number; cacheRead: number; cacheWrite: number };
  /** Takes deferred tools (`defer_loading`, loaded by `tool_reference`): Opus and Sonnet 4.5 and later. */
  toolSearch?: boolean;
}

/**
 * Public list prices (anthropic.com/pricing, standard tier, 5-minute cache writes) and limits.
 * Dated ids (`claude-sonnet-4-5-20250929`) match their family entry by prefix.
 */
export const anthropicModels: readonly AnthropicModelInfo[] = [
  model('claude-opus-4-6', 200_000, 128_000, [5, 25, 0.5, 6.25], true),
  model('claude-sonnet-4-6', 200_000, 64_000, [3, 15, 0.3, 3.75], true),
  model('claude-opus-4-5', 200_000, 64_000, [5, 25, 0.5, 6.25], true),
  model('claude-opus-4-1', 200_000, 32_000, [15, 75, 1.5, 18.75]),
  model('claude-opus-4', 200_000, 32_000, [15, 75, 1.5, 18.75]),
  model('claude-sonnet-4-5', 200_000, 64_000, [3, 15, 0.3, 3.75], true),
  model('claude-sonnet-4', 200_000, 64_000, [3, 15, 0.3, 3.75]),
  model('claude-3-7-sonnet', 200_000, 64_000, [3, 15, 0.3, 3.75]),
  model('claude-haiku-4-5', 200_000, 64_000, [1, 5, 0.1, 1.25]),
  model('claude-3-5-haiku', 200_000, 8_192, [0.8, 4, 0.08, 1]),
  model('claude-3-haiku', 200_000, 4_096, [0.25, 1.25, 0.03, 0.3]),
];

function model(
  id: string,
  contextWindow: number,
  maxOutputTokens: number,
  [input, output, cacheRead, cacheWrite]: [number, number, number, number],
  toolSearch = false,
): AnthropicModelInfo {
  return {
    id,
    contextWindow,
    maxOutputTokens,
    pricing: { input, output, cacheRead, cacheWrite },
    ...(toolSearch ? { toolSearch } : {}),
  };
}

/** The catalogue entry of a model id (exact, else the longest id prefix), or `undefined` when unknown. */
export function findAnthropicModel(id: string): AnthropicModelInfo | undefined {
  return findModelByPrefix(anthropicModels, id);
}

/** Fills `usage.cost` (US dollars) from the model's prices; leaves it unset for unknown models. */
export function withAnthropicCost(usage: Usage, modelId: string): Usage {
  return withCost(usage, findAnthropicModel(modelId)?.pricing);
}
