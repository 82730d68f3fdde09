import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { Agent } from './agent.js';
import type { AgentEvent } from './agent-events.js';
import type { AgentHooks } from './agent-options.js';
import { defineTool } from './define-tool.js';
import { toolCallsOf } from './messages.js';
import { ResourceLocks } from './resource-locks.js';
import type { ToolExecutionStrategy } from './strategy.js';
import { createScriptedProvider, type ScriptedTurn } from './testing/scripted-provider.js';
import { toolResults } from './testing/test-helpers.js';
import type { AnyAgentTool } from './tool.js';

// Seeded fuzz of the loop with an abort injected at every kind of await point: the permission
// gate, each hook, an event listener (at a chosen event), inside a tool (a sibling aborting the
// run mid-batch), and between batches. Invariants: exactly one result per call, in the model's
// order; no execute starts after the run was aborted; the lock table is empty after the run;
// `exclusive` never overlaps anything. fast-check prints the failing seed and path to replay
// (`{ seed, path }`); AGENT_FUZZ_RUNS raises the number of runs.

const runs = Number(process.env.AGENT_FUZZ_RUNS ?? 250);

type Point =
  | { kind: 'gate'; at: number }
  | { kind: 'before-hook'; at: number }
  | { kind: 'after-hook'; at: number }
  | { kind: 'listener'; event: AgentEvent['type']; at: number; later: boolean }
  | { kind: 'tool'; at: number }
  | { kind: 'none' };

const point: fc.Arbitrary<Point> = fc.oneof(
  fc.record({ kind: fc.constant('gate' as const), at: fc.nat(6) }),
  fc.record({ kind: fc.constant('before-hook' as const), at: fc.nat(6) }),
  fc.record({ kind: fc.constant('after-hook' as const), at: fc.nat(6) }),
  fc.record({
    kind: fc.constant('listener' as const),
    event: fc.constantFrom<AgentEvent['type']>(
      'turn-start',
      'message-end',
      'tool-execution-start',
      'tool-execution-end',
      'turn-end',
    ),
    at: fc.nat(4),
    later: fc.boolean(),
  }),
  fc.record({ kind: fc.constant('tool' as const), at: fc.nat(6) }),
  fc.constant({ kind: 'none' as const }),
);

const behaviours = ['ok', 'slow', 'exclusive', 'ignores-signal', 'throws'] as const;

describe('Agent with aborts at every await point (property)', () => {
  it('one result per call in order, no execute after abort, empty lock table, exclusive alone', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.array(fc.record({ behaviour: fc.constantFrom(...behaviours), key: fc.nat(2) }), {
            minLength: 1,
            maxLength: 5,
          }),
          { minLength: 1, maxLength: 3 },
        ),
        fc.constantFrom<ToolExecutionStrategy>(
          { type: 'parallel' },
          { type: 'sequential' },
          { type: 'batched', size: 2 },
        ),
        point,
        async (turns, toolExecution, abortAt) => {
          let aborted = false;
          let abortRun: () => void = () => undefined;
          const abort = () => {
            aborted = true;
            abortRun();
          };
          let executesAfterAbort = 0;
          let running = 0;
          let exclusiveOverlap = false;
          let exclusiveRunning = false;
          let toolCalls = 0;
          const tools: AnyAgentTool[] = behaviours.map((behaviour) =>
            defineTool({
              name: behaviour.replaceAll('-', '_'),
              description: behaviour,
              input: z.object({ key: z.number() }),
              policy: {
                timeoutMs: 30,
                resourceKey: ({ key }) => `k${key}`,
                ...(behaviour === 'exclusive' ? { exclusive: true } : {}),
              },
              execute: async (_args, ctx) => {
                if (aborted || ctx.signal.aborted) executesAfterAbort += 1;
                const index = toolCalls++;
                running += 1;
                if (behaviour === 'exclusive') {
                  if (running > 1) exclusiveOverlap = true;
                  exclusiveRunning = true;
                } else if (exclusiveRunning) exclusiveOverlap = true;
                try {
                  if (abortAt.kind === 'tool' && abortAt.at === index) abort();
                  switch (behaviour) {
                    case 'slow':
                    case 'exclusive':
                      await new Promise((resolve) => setTimeout(resolve, 2));
                      return 'done';
                    case 'ignores-signal':
                      await new Promise((resolve) => setTimeout(resolve, 40));
                      return 'late';
                    case 'throws':
                      throw new Error('boom');
                    default:
                      return 'ok';
                  }
                } finally {
                  running -= 1;
                  if (behaviour === 'exclusive') exclusiveRunning = false;
                }
              },
            }),
          );
          let gateCalls = 0;
          let beforeCalls = 0;
          let afterCalls = 0;
          const hooks: AgentHooks = {
            beforeToolExecution: async () => {
              if (abortAt.kind === 'before-hook' && abortAt.at === beforeCalls) abort();
              beforeCalls += 1;
              return undefined;
            },
            afterToolExecution: async (_call, result) => {
              if (abortAt.kind === 'after-hook' && abortAt.at === afterCalls) abort();
              afterCalls += 1;
              return result;
            },
          };
          const script: ScriptedTurn[] = turns.map((calls) => ({
            toolCalls: calls.map(({ behaviour, key }) => ({
              name: behaviour.replaceAll('-', '_'),
              arguments: { key },
            })),
          }));
          script.push({ text: 'finished' });
          const locks = new ResourceLocks();
          let seen = 0;
          const agent = new Agent({
            provider: createScriptedProvider(script, { recordRequests: false }),
            model: 'm',
            tools,
            toolExecution,
            hooks,
            resourceLocks: locks,
            abortGraceMs: 200,
            loopDetection: false,
            permissionGate: async () => {
              if (abortAt.kind === 'gate' && abortAt.at === gateCalls) abort();
              gateCalls += 1;
              return { behavior: 'allow' };
            },
            onEvent: (event) => {
              if (abortAt.kind !== 'listener' || event.type !== abortAt.event) return;
              if (seen++ !== abortAt.at) return;
              if (abortAt.later) queueMicrotask(abort);
              else abort();
            },
          });
          const run = agent.run('go');
          abortRun = () => run.abort();
          const result = await run.result;

          const messages = agent.messages;
          const asked = messages.flatMap((message) =>
            message.role === 'assistant' ? toolCallsOf(message) : [],
          );
          expect(toolResults(messages).map((message) => message.toolCallId)).toEqual(
            asked.map((call) => call.id),
          );
          // An abort that comes after the last model call finished may still end as `completed`.
          if (aborted) expect(['aborted', 'completed']).toContain(result.stopReason);
          expect(executesAfterAbort).toBe(0);
          expect(locks.size).toBe(0);
          expect(exclusiveOverlap).toBe(false);
        },
      ),
      { numRuns: runs },
    );
  }, 120_000);
});
