import type { AgentEvent, Compaction, ContextUsage } from '@agent/core';

/** Tokens for people: `812`, `12.3k`, `1.2M`. */
export function formatTokens(tokens: number): string {
  if (tokens < 1_000) return String(Math.round(tokens));
  if (tokens < 1_000_000) return `${(tokens / 1_000).toFixed(tokens < 10_000 ? 1 : 0)}k`;
  return `${(tokens / 1_000_000).toFixed(1)}M`;
}

const why: Record<Compaction['reason'], string> = {
  threshold: 'the context is near the model’s window',
  overflow: 'the model refused the request as too long; it is sent again after this',
  manual: 'asked with /compact',
};

/** The transcript line of a compaction event (undefined for other events). */
export function compactionLine(event: AgentEvent): string | undefined {
  if (event.type === 'compaction-start')
    return `  ⋯ compacting the conversation (~${formatTokens(event.tokensBefore)} tokens): ${why[event.reason]}`;
  if (event.type !== 'compaction-end') return undefined;
  const { compaction } = event;
  if (compaction === undefined) return `  ⋯ compaction failed: ${event.error ?? 'no reason given'}`;
  const focus = compaction.focus === undefined ? '' : ` (focus: ${compaction.focus})`;
  return `  ⋯ compacted${focus}: messages before #${compaction.firstKeptIndex + 1} summarised, ~${formatTokens(compaction.tokensBefore)} → ~${formatTokens(compaction.tokensAfter)} tokens sent; the saved conversation keeps them all`;
}

/** The `/cost` line about the context: how full it is, where it compacts, compactions so far. */
export function contextLine(usage: ContextUsage): string {
  const window =
    usage.contextWindow === undefined
      ? 'the model’s window is unknown (compacts only if the model refuses a request as too long, or on /compact)'
      : `of ${formatTokens(usage.contextWindow)} (${Math.round((usage.tokens / usage.contextWindow) * 100)}%)${usage.thresholdTokens === undefined ? '' : `; compacts past ~${formatTokens(usage.thresholdTokens)}`}`;
  const compacted =
    usage.compactions === 0
      ? ''
      : `; compacted ${usage.compactions} time${usage.compactions === 1 ? '' : 's'}`;
  return `context: ~${formatTokens(usage.tokens)} tokens ${window}${compacted}`;
}
