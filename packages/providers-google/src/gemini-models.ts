import { findModelByPrefix, type Usage, withCost } from '@agent/core';

/** What we know about one model: limits in tokens, prices in US dollars per million tokens. */
export interface GeminiModelInfo {
  /** Model id (or the id prefix its versions share). */
  id: string;
  /** Context window (input) in tokens. */
  contextWindow: number;
  /** Output-token ceiling of one call. */
  maxOutputTokens: number;
  /** Prices per million tokens (prompts up to 200k tokens; thinking billed as output). */
  pricing: { input: number; output: number; cacheRead: number; cacheWrite: number };
  /** Whether the model takes `thinkingLevel` (Gemini 3) rather than `thinkingBudget`. */
  thinkingLevels?: boolean;
}

/**
 * Public list prices (ai.google.dev/gemini-api/docs/pricing, paid tier, text input, prompts up
 * to 200k tokens) and limits. Versioned ids (`gemini-2.5-flash-preview-09-2025`) match by prefix.
 */
export const geminiModels: readonly GeminiModelInfo[] = [
  model('gemini-3-pro', 1_048_576, 65_536, [2, 12, 0.2], true),
  model('gemini-3-flash', 1_048_576, 65_536, [0.5, 3, 0.05], true),
  model('gemini-2.5-pro', 1_048_576, 65_536, [1.25, 10, 0.125]),
  model('gemini-2.5-flash', 1_048_576, 65_536, [0.3, 2.5, 0.03]),
  model('gemini-2.5-flash-lite', 1_048_576, 65_536, [0.1, 0.4, 0.01]),
  model('gemini-2.0-flash', 1_048_576, 8_192, [0.1, 0.4, 0.025]),
  model('gemini-2.0-flash-lite', 1_048_576, 8_192, [0.075, 0.3, 0.01875]),
];

function model(
  id: string,
  contextWindow: number,
  maxOutputTokens: number,
  [input, output, cacheRead]: [number, number, number],
  thinkingLevels = false,
): GeminiModelInfo {
  const info: GeminiModelInfo = {
    id,
    contextWindow,
    maxOutputTokens,
    // Implicit caching has no write charge; explicit cache storage is billed per hour, not here.
    pricing: { input, output, cacheRead, cacheWrite: 0 },
  };
  if (thinkingLevels) info.thinkingLevels = true;
  return info;
}

/** The catalogue entry of a model id (`models/` prefix allowed), or `undefined` when unknown. */
export function findGeminiModel(id: string): GeminiModelInfo | undefined {
  return findModelByPrefix(
    geminiModels,
    id.startsWith('models/') ? id.slice('models/'.length) : id,
  );
}

/** Fills `usage.cost` (US dollars) from the model's prices; leaves it unset for unknown models. */
export function withGeminiCost(usage: Usage, modelId: string): Usage {
  return withCost(usage, findGeminiModel(modelId)?.pricing);
}
