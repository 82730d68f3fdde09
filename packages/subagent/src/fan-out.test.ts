// A model that asks for many sub-agents in one turn gets them a few at a time (maxConcurrentRuns),
// per calling run — so a child calling the same sub-agent never waits for its ancestors' slots —
// and calls still waiting when the run is aborted never start. Through the real loop.
import { Agent, defineTool, type ProviderRequest } from '@agent/core';
import { createScriptedProvider, type ScriptedTurn } from '@agent/core/testing';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { createSubAgentTool } from './index.js';
import { deferred, everyCallAnswered, toolResults } from './test-helpers.js';

/** A tool that counts how many calls are inside it at once; all wait until `enough` are. */
function overlapTool(enough: number) {
  let active = 0;
  let most = 0;
  let entered = 0;
  const gate = deferred();
  const tool = defineTool({
    name: 'hold',
    description: 'Holds until enough calls are in.',
    input: z.object({}),
    policy: { permission: 'read-only' },
    execute: async () => {
      active += 1;
      entered += 1;
      most = Math.max(most, active);
      if (active >= enough) gate.resolve();
      await gate.promise;
      // Let every call that could start now start before this one leaves.
      for (let turn = 0; turn < 20; turn++) await Promise.resolve();
      active -= 1;
      return 'held';
    },
  });
  return { tool, most: () => most, entered: () => entered, reached: gate.promise };
}

/** A child model: call `tool`, then answer. One provider serves every child run. */
function childModel(tool: string, runs: number) {
  const step = (request: ProviderRequest): ScriptedTurn =>
    request.messages.some((message) => message.role === 'toolResult')
      ? { text: 'done' }
      : { toolCalls: [{ name: tool, arguments: tool === 'helper' ? { task: 'deeper' } : {} }] };
  return createScriptedProvider(Array.from({ length: runs * 2 }, () => step));
}

/** A parent that asks for `calls` runs of `helper` in one turn, then answers. */
function fanningParent(calls: number) {
  return createScriptedProvider([
    {
      toolCalls: Array.from({ length: calls }, (_, index) => ({
        id: `call_${index}`,
        name: 'helper',
        arguments: { task: `part ${index}` },
      })),
    },
    { text: 'all done' },
  ]);
}

describe('maxConcurrentRuns', () => {
  it.each([
    [10, undefined, 4],
    [10, 2, 2],
    [6, 1, 1],
    [10, Number.POSITIVE_INFINITY, 10],
  ])(
    '%i calls in one turn, limit %s: at most %i children at once, every call answered',
    async (calls, limit, expected) => {
      const overlap = overlapTool(expected);
      const helper = createSubAgentTool({
        name: 'helper',
        description: 'Holds.',
        provider: childModel('hold', calls),
        model: 'child',
        tools: [overlap.tool],
        ...(limit === undefined ? {} : { maxConcurrentRuns: limit }),
      });
      const parent = new Agent({ provider: fanningParent(calls), model: 'p', tools: [helper] });
      const result = await parent.run('go').result;
      expect(result.stopReason).toBe('completed');
      expect(overlap.most()).toBe(expected);
      expect(overlap.entered()).toBe(calls);
      expect(everyCallAnswered(result.messages)).toBe(true);
      expect(toolResults(result.messages).every((message) => message.isError === false)).toBe(true);
    },
  );

  it("a child's own calls of the same sub-agent are counted for the child: no waiting for ever", async () => {
    // Limit 1: both parent slots taken by children that each call helper again (one level deeper).
    const overlap = overlapTool(1);
    const tools: Parameters<typeof createSubAgentTool>[0]['tools'] = [];
    const helper = createSubAgentTool({
      name: 'helper',
      description: 'Delegates once, then holds.',
      provider: createScriptedProvider(
        Array.from({ length: 20 }, () => (request: ProviderRequest): ScriptedTurn => {
          if (request.messages.some((message) => message.role === 'toolResult'))
            return { text: 'done' };
          // Depth from the task: the grandchild holds, the child delegates.
          const task = request.messages[0]?.role === 'user' ? request.messages[0].content : '';
          return task === 'deeper'
            ? { toolCalls: [{ name: 'hold', arguments: {} }] }
            : { toolCalls: [{ name: 'helper', arguments: { task: 'deeper' } }] };
        }),
      ),
      model: 'child',
      tools,
      maxConcurrentRuns: 1,
      maxDepth: 2,
    });
    (tools as unknown[]).push(helper, overlap.tool);
    const parent = new Agent({ provider: fanningParent(1), model: 'p', tools: [helper] });
    const result = await parent.run('go').result;
    expect(result.stopReason).toBe('completed');
    expect(overlap.entered()).toBe(1);
  });

  it('calls still waiting when the run is aborted never start a child, and get Cancelled', async () => {
    const started = deferred();
    let childRuns = 0;
    const block = defineTool({
      name: 'hold',
      description: 'Runs until cancelled.',
      input: z.object({}),
      policy: { permission: 'read-only' },
      execute: (_args, ctx) =>
        new Promise<string>((_resolve, reject) => {
          childRuns += 1;
          if (childRuns === 2) started.resolve();
          ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true });
        }),
    });
    const progress: string[] = [];
    const helper = createSubAgentTool({
      name: 'helper',
      description: 'Holds.',
      provider: childModel('hold', 8),
      model: 'child',
      tools: [block],
      maxConcurrentRuns: 2,
    });
    const parent = new Agent({ provider: fanningParent(8), model: 'p', tools: [helper] });
    parent.subscribe((event) => {
      if (event.type === 'progress') progress.push(event.text);
    });
    const run = parent.run('go');
    await started.promise;
    run.abort();
    const result = await run.result;
    expect(result.stopReason).toBe('aborted');
    expect(childRuns).toBe(2);
    expect(progress).toContain('waiting: 2 runs of helper already going (maxConcurrentRuns)');
    const results = toolResults(result.messages);
    expect(results).toHaveLength(8);
    expect(results.every((message) => message.isError)).toBe(true);
  });

  it.each([0, -1, 1.5, Number.NaN])('refuses maxConcurrentRuns %s at creation', (limit) => {
    expect(() =>
      createSubAgentTool({
        name: 'helper',
        description: 'd',
        provider: createScriptedProvider([]),
        model: 'm',
        maxConcurrentRuns: limit,
      }),
    ).toThrow(/maxConcurrentRuns must be an integer >= 1 or Infinity/);
  });
});
