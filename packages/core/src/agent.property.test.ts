import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { Agent } from './agent.js';
import { defineTool } from './define-tool.js';
import { ToolError } from './errors.js';
import { toolCallsOf } from './messages.js';
import { ResourceLocks } from './resource-locks.js';
import type { ToolExecutionStrategy } from './strategy.js';
import { createScriptedProvider, type ScriptedTurn } from './testing/scripted-provider.js';
import { toolResults } from './testing/test-helpers.js';
import type { AnyAgentTool } from './tool.js';

const behaviours = [
  'ok',
  'throw',
  'throw-tool-error',
  'hang',
  'hang-ignoring-signal',
  'huge',
  'invalid-result',
  'slow',
] as const;

const tools: AnyAgentTool[] = behaviours.map((behaviour) =>
  defineTool({
    name: `tool_${behaviour.replaceAll('-', '_')}`,
    description: behaviour,
    input: z.object({ n: z.number().int().optional(), s: z.string().optional() }),
    policy: {
      timeoutMs: 25,
      ...(behaviour === 'slow' ? { exclusive: true } : {}),
      ...(behaviour === 'throw' ? { abortsSiblingsOnError: true } : {}),
      resourceKey: (args: { n?: number | undefined }) =>
        args.n === undefined ? undefined : `k${args.n % 3}`,
    },
    execute: async (_args, ctx) => {
      switch (behaviour) {
        case 'ok':
          return 'fine';
        case 'throw':
          throw new Error('plain failure');
        case 'throw-tool-error':
          throw new ToolError('typed failure', { kind: 'failed' });
        case 'hang':
          return new Promise((_, reject) =>
            ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason)),
          );
        case 'hang-ignoring-signal':
          // Ignores its signal and ends on its own much later than its timeout: it keeps its
          // resource key until then (a tool that never ends would keep it forever, by design).
          return new Promise((resolve) => setTimeout(() => resolve('late'), 60));
        case 'huge':
          return 'y'.repeat(200_000);
        case 'invalid-result':
          return { nope: true } as never;
        case 'slow':
          await new Promise((resolve) => setTimeout(resolve, 3));
          return 'slow done';
      }
    },
  }),
);

const toolName = fc.oneof(
  fc.constantFrom(...tools.map((tool) => tool.name)),
  fc.string({ minLength: 0, maxLength: 12 }),
);
const rawArguments = fc.oneof(
  fc
    .record({ n: fc.integer(), s: fc.string() }, { requiredKeys: [] })
    .map((value) => JSON.stringify(value)),
  fc.string({ maxLength: 40 }),
  fc.json(),
  fc.constant('{"n": "not a number"}'),
  fc.constant('{"n": 1, "s": '),
  fc.constant(''),
);
const call = fc.record({ name: toolName, arguments: rawArguments });
const strategy: fc.Arbitrary<ToolExecutionStrategy> = fc.oneof(
  fc.constant({ type: 'sequential' } as const),
  fc.constant({ type: 'parallel' } as const),
  fc.integer({ min: 1, max: 4 }).map((size) => ({ type: 'batched', size }) as const),
);

describe('Agent under random tool-call batches (property)', () => {
  it('never throws out of the loop and gives every call exactly one result', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(call, { minLength: 1, maxLength: 8 }), { minLength: 1, maxLength: 3 }),
        strategy,
        fc.option(fc.integer({ min: 0, max: 30 }), { nil: undefined }),
        fc.option(fc.integer({ min: 1, max: 6 }), { nil: undefined }),
        async (turns, toolExecution, abortAfterMs, maxToolCallsPerTurn) => {
          const script: ScriptedTurn[] = turns.map((calls) => ({ toolCalls: calls }));
          script.push({ text: 'finished' });
          const provider = createScriptedProvider(script, { recordRequests: false });
          const locks = new ResourceLocks();
          const agent = new Agent({
            provider,
            model: 'm',
            tools,
            toolExecution,
            maxResultChars: 1_000,
            // A lock table per run; a grace longer than the ignoring tool takes, so the run ends
            // only after every tool has settled.
            resourceLocks: locks,
            abortGraceMs: 200,
            ...(maxToolCallsPerTurn === undefined ? {} : { maxToolCallsPerTurn }),
          });
          const run = agent.run('go');
          const timer =
            abortAfterMs === undefined ? undefined : setTimeout(() => run.abort(), abortAfterMs);
          const result = await run.result;
          clearTimeout(timer);

          expect(['completed', 'aborted', 'error', 'terminated', 'loop-detected']).toContain(
            result.stopReason,
          );
          if (result.stopReason === 'error') expect(result.error).toBeDefined();
          const messages = agent.messages;
          const results = toolResults(messages);
          const asked = messages.flatMap((message) =>
            message.role === 'assistant' ? toolCallsOf(message) : [],
          );
          expect(results.map((r) => r.toolCallId)).toEqual(asked.map((c) => c.id));
          for (const r of results) expect(r.content.length).toBeGreaterThan(0);
          // Each assistant message with calls is followed directly by its results, in order.
          messages.forEach((message, index) => {
            if (message.role !== 'assistant') return;
            const ids = toolCallsOf(message).map((c) => c.id);
            const following = messages
              .slice(index + 1, index + 1 + ids.length)
              .map((m) => (m.role === 'toolResult' ? m.toolCallId : m.role));
            expect(following).toEqual(ids);
          });
          expect(agent.isRunning).toBe(false);
          // The lock table is empty after every run.
          expect(locks.size).toBe(0);
        },
      ),
      { numRuns: 80 },
    );
  }, 60_000);
});
