import type { Usage } from '@agent/core';

/** Prices in US dollars per million tokens. */
export interface OpenAIModelPrices {
  input: number;
  output: number;
  /** Price of input tokens served from the prompt cache. */
  cachedInput: number;
}

/** What is known about one model. */
export interface OpenAIModelInfo {
  id: string;
  /** Context window in tokens. */
  contextWindow: number;
  /** Output-token limit. */
  maxOutputTokens: number;
  /** Whether the model takes a reasoning effort (and may return reasoning items). */
  reasoning: boolean;
  /** Public list prices, when the model has them (open-weight models do not). */
  prices?: OpenAIModelPrices;
}

// Public list prices (standard tier, USD per 1M tokens) as published on openai.com.
const catalogue: readonly OpenAIModelInfo[] = [
  model('gpt-5.1', 400_000, 128_000, true, [1.25, 10, 0.125]),
  model('gpt-5', 400_000, 128_000, true, [1.25, 10, 0.125]),
  model('gpt-5-mini', 400_000, 128_000, true, [0.25, 2, 0.025]),
  model('gpt-5-nano', 400_000, 128_000, true, [0.05, 0.4, 0.005]),
  model('gpt-4.1', 1_047_576, 32_768, false, [2, 8, 0.5]),
  model('gpt-4.1-mini', 1_047_576, 32_768, false, [0.4, 1.6, 0.1]),
  model('gpt-4.1-nano', 1_047_576, 32_768, false, [0.1, 0.4, 0.025]),
  model('gpt-4o', 128_000, 16_384, false, [2.5, 10, 1.25]),
  model('gpt-4o-mini', 128_000, 16_384, false, [0.15, 0.6, 0.075]),
  model('o3', 200_000, 100_000, true, [2, 8, 0.5]),
  model('o3-mini', 200_000, 100_000, true, [1.1, 4.4, 0.55]),
  model('o4-mini', 200_000, 100_000, true, [1.1, 4.4, 0.275]),
  model('gpt-oss-120b', 131_072, 131_072, true),
  model('gpt-oss-20b', 131_072, 131_072, true),
];

const byId = new Map(catalogue.map((info) => [info.id, info]));

function model(
  id: string,
  contextWindow: number,
  maxOutputTokens: number,
  reasoning: boolean,
  prices?: [input: number, output: number, cachedInput: number],
): OpenAIModelInfo {
  const info: OpenAIModelInfo = { id, contextWindow, maxOutputTokens, reasoning };
  if (prices !== undefined)
    info.prices = { input: prices[0], output: prices[1], cachedInput: prices[2] };
  return info;
}

/** Every model of the catalogue. */
export function listOpenAIModels(): readonly OpenAIModelInfo[] {
  return catalogue;
}

/**
 * What the catalogue knows about a model id, or `undefined` for an unknown id (which still
 * works; it only has no cost). Accepts dated snapshots (`gpt-4o-2024-08-06`) and router
 * prefixes (`openai/gpt-4o`).
 */
export function getOpenAIModel(id: string): OpenAIModelInfo | undefined {
  const bare = id.slice(id.lastIndexOf('/') + 1).toLowerCase();
  return byId.get(bare) ?? byId.get(bare.replace(/-\d{4}-\d{2}-\d{2}$/, ''));
}

/** Fills `usage.cost` (USD) from the catalogue's prices; leaves it unset for unpriced models. */
export function addCost(usage: Usage, modelId: string): Usage {
  const prices = getOpenAIModel(modelId)?.prices;
  if (prices === undefined) return usage;
  const input = (usage.input * prices.input) / 1e6;
  const output = (usage.output * prices.output) / 1e6;
  const cacheRead = (usage.cacheRead * prices.cachedInput) / 1e6;
  // OpenAI bills prompt-cache writes as ordinary input.
  const cacheWrite = (usage.cacheWrite * prices.input) / 1e6;
  usage.cost = {
    input,
    output,
    cacheRead,
    cacheWrite,
    total: input + output + cacheRead + cacheWrite,
  };
  return usage;
}

/**
 * Whether a model takes the Responses API's `tool_search` (gpt-5.4 and later, per OpenAI's
 * tool search guide): `gpt-5.4`, `gpt-5.4-mini`, `gpt-5.10`, `gpt-6`… — not `gpt-5.1` or `gpt-5`.
 */
export function supportsToolSearch(model: string): boolean {
  const match = /^gpt-(\d+)(?:\.(\d+))?(?:$|-)/.exec(model);
  if (match === null) return false;
  const major = Number(match[1]);
  const minor = Number(match[2] ?? 0);
  return major > 5 || (major === 5 && minor >= 4);
}
