import type { ParsedOptions } from './option-specs.js';
import { UsageError } from './usage-error.js';

/** `agent mcp serve`'s caps (see `ToolServerOptions` and `HttpServeOptions` of @agent/tools-mcp). */
export interface ServeLimits {
  /** Tool calls running at once per token (stdio: for the client) [8]. */
  maxConcurrentCalls?: number;
  /** Calls waiting for a turn past those; more get a JSON-RPC error [32]. */
  maxQueuedCalls?: number;
  /** `--http`: requests one connection may have unanswered; past it the connection is closed [16]. */
  maxPipelinedRequests?: number;
  /** `--http`: minutes a client session may go unused before it is forgotten (its id then gets 404) [30]. */
  sessionIdleMinutes?: number;
}

/** The flags of a {@link ServeLimits} key, and the least each takes. */
export const serveLimitFlags = {
  maxConcurrentCalls: { flag: 'max-concurrent-calls', least: 1 },
  maxQueuedCalls: { flag: 'max-queued-calls', least: 0 },
  maxPipelinedRequests: { flag: 'max-pipelined-requests', least: 1 },
  sessionIdleMinutes: { flag: 'session-idle-minutes', least: 1 },
} as const;

/** The caps `agent mcp serve` was given; undefined when none. */
export function parseServeLimits(
  values: ParsedOptions,
  overHttp: boolean,
): ServeLimits | undefined {
  const limits: ServeLimits = {};
  for (const [key, { flag, least }] of Object.entries(serveLimitFlags)) {
    const text = values[flag];
    if (typeof text !== 'string') continue;
    const value = Number(text);
    if (text.trim() === '' || !Number.isInteger(value) || value < least)
      throw new UsageError(`--${flag} must be a whole number >= ${least}, got "${text}"`);
    limits[key as keyof ServeLimits] = value;
  }
  for (const key of ['maxPipelinedRequests', 'sessionIdleMinutes'] as const)
    if (limits[key] !== undefined && !overHttp)
      throw new UsageError(
        `--${serveLimitFlags[key].flag} is for agent mcp serve --http (stdio has one client)`,
      );
  return Object.keys(limits).length === 0 ? undefined : limits;
}
