/**
 * `think`: a scratchpad. The model writes a reasoning step as a tool call; nothing runs, the
 * thought is recorded (`details.thought`, and `onThought` for an app's log) and the result only
 * acknowledges it. Kiro's `thinking {thought}` reaches it by that name.
 */
import { type DefinedTool, defineTool } from '@agent/core';
import * as z from 'zod';

/** Options of {@link createThinkTool}. */
export interface ThinkToolOptions {
  /** Called with each thought (for a UI or a log); errors it throws are ignored. */
  onThought?: (thought: string) => void;
}

/** `details` of a think result. */
export interface ThinkDetails {
  /** The thought as the model wrote it. */
  thought: string;
}

/**
 * The `think` tool: records a reasoning step and changes nothing (read-only, never counted
 * toward the per-turn tool-call cap, so thinking does not crowd out work).
 */
export function createThinkTool(
  options: ThinkToolOptions = {},
): DefinedTool<{ thought: string }, ThinkDetails> {
  return defineTool({
    name: 'think',
    label: 'Think',
    description:
      'Writes down a reasoning step: planning a multi-step change, weighing trade-offs, or making ' +
      'sense of earlier tool results. It changes nothing and fetches nothing; the thought is kept ' +
      'in the conversation. Skip it for simple tasks.',
    // Kiro's `thinking {thought}`.
    aliases: ['thinking'],
    input: z.object({
      thought: z.string().trim().min(1).describe('The reasoning step, in full sentences.'),
    }),
    source: 'builtin',
    policy: {
      permission: 'read-only',
      countsTowardToolCallLimit: false,
      parallelSafePerTurn: true,
    },
    execute: async ({ thought }) => {
      try {
        options.onThought?.(thought);
      } catch {
        // A display callback must not fail the call.
      }
      return { content: [{ type: 'text', text: 'Thought recorded.' }], details: { thought } };
    },
  });
}
