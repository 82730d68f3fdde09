import { AgentError } from './errors.js';

/** How the tool calls of one assistant message are scheduled. */
export type ToolExecutionStrategy =
  | { type: 'sequential' }
  | { type: 'parallel' }
  | { type: 'batched'; size: number };

/** One call at a time; steering is checked between calls. */
export function sequential(): ToolExecutionStrategy {
  return { type: 'sequential' };
}

/** All calls at once (the default); steering is checked after the batch. */
export function parallel(): ToolExecutionStrategy {
  return { type: 'parallel' };
}

/** Batches of `size` (an integer ≥ 1) calls; steering is checked between batches. */
export function batched(size: number): ToolExecutionStrategy {
  const strategy: ToolExecutionStrategy = { type: 'batched', size };
  assertValidStrategy(strategy);
  return strategy;
}

/** Throws an `AgentError` for an unknown strategy or a batch size that is not an integer ≥ 1. */
export function assertValidStrategy(strategy: ToolExecutionStrategy): void {
  switch (strategy.type) {
    case 'sequential':
    case 'parallel':
      return;
    case 'batched':
      if (!Number.isInteger(strategy.size) || strategy.size < 1) {
        throw new AgentError(
          `batched(size) needs an integer size >= 1, got ${String(strategy.size)}`,
        );
      }
      return;
    default: {
      const unknown: never = strategy;
      throw new AgentError(`Unknown tool execution strategy: ${JSON.stringify(unknown)}`);
    }
  }
}
