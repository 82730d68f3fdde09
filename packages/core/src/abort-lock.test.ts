import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { Agent } from './agent.js';
import type { AgentEvent } from './agent-events.js';
import { defineTool } from './define-tool.js';
import { ResourceLocks } from './resource-locks.js';
import { createScriptedProvider } from './testing/scripted-provider.js';
import { deferred, runToEnd, toolResults } from './testing/test-helpers.js';

// Regression tests for three bugs a seeded fuzz of the loop found: a lock leaked by an abort at an
// approval prompt, a tool started after its run was aborted, and a timed-out tool that ignored its
// signal losing its key while still running.

function writer(log: string[]) {
  return defineTool({
    name: 'write_notes',
    description: 'writes notes.txt',
    input: z.object({ text: z.string() }),
    policy: { resourceKey: () => 'file:notes.txt' },
    execute: async ({ text }) => {
      log.push(`write:${text}`);
      return 'written';
    },
  });
}

describe('ResourceLocks', () => {
  it('an acquire with an already-aborted signal rejects and leaves no slot behind', async () => {
    const locks = new ResourceLocks();
    const controller = new AbortController();
    controller.abort(new Error('gone'));
    await expect(locks.acquire('k', controller.signal)).rejects.toThrow('gone');
    expect(locks.size).toBe(0);
    const release = await locks.acquire('k');
    release();
    expect(locks.size).toBe(0);
  });

  it('a waiter that aborts gives up its place; the line behind it still moves', async () => {
    const locks = new ResourceLocks();
    const first = await locks.acquire('k');
    const controller = new AbortController();
    const waiting = locks.acquire('k', controller.signal);
    const third = locks.acquire('k');
    controller.abort(new Error('stop'));
    await expect(waiting).rejects.toThrow('stop');
    first();
    (await third)();
    expect(locks.size).toBe(0);
  });
});

describe('Agent: abort and lock semantics', () => {
  it('an abort at the approval prompt of a parallel batch leaks no lock: a later write of the same file runs', async () => {
    const locks = new ResourceLocks();
    const log: string[] = [];
    const asker = defineTool({
      name: 'bash',
      description: 'needs approval',
      input: z.object({ command: z.string() }),
      execute: async () => 'ran',
    });
    const provider = createScriptedProvider([
      {
        toolCalls: [
          { id: 'w', name: 'write_notes', arguments: { text: 'one' } },
          { id: 'b', name: 'bash', arguments: { command: 'make' } },
        ],
      },
      { text: 'never' },
    ]);
    let abortRun: (() => void) | undefined;
    const agent = new Agent({
      provider,
      model: 'test',
      tools: [writer(log), asker],
      resourceLocks: locks,
      // The user aborts while the bash approval is on screen.
      permissionGate: async (request) => {
        if (request.toolName !== 'bash') return { behavior: 'allow' };
        abortRun?.();
        return new Promise(() => {});
      },
    });
    const run = agent.run('go');
    abortRun = () => run.abort(new Error('user pressed Ctrl-C'));
    const result = await run.result;
    expect(result.stopReason).toBe('aborted');
    expect(toolResults(result.messages)).toHaveLength(2);
    expect(locks.size).toBe(0);

    // Any later agent sharing the lock table can still write the file.
    const later = new Agent({
      provider: createScriptedProvider([
        { toolCalls: [{ name: 'write_notes', arguments: { text: 'two' } }] },
        { text: 'done' },
      ]),
      model: 'test',
      tools: [writer(log)],
      resourceLocks: locks,
    });
    const second = await later.run('again').result;
    expect(second.stopReason).toBe('completed');
    expect(log).toContain('write:two');
    expect(locks.size).toBe(0);
  });

  it.each([
    ['in the same step', (abort: () => void) => abort()],
    [
      'a microtask later (the old gap before execute)',
      (abort: () => void) => queueMicrotask(abort),
    ],
  ])(
    'an abort from a tool-execution-start listener %s: no execute starts after it',
    async (_name, schedule) => {
      const entries: boolean[] = [];
      const tool = {
        name: 'spawn',
        description: 'would start a process',
        parameters: { type: 'object' as const, properties: {} },
        // Plain AgentTool: record, synchronously on entry, whether the call was already aborted.
        execute: async (_args: unknown, ctx: { signal: AbortSignal }) => {
          entries.push(ctx.signal.aborted);
          return { content: [{ type: 'text' as const, text: 'spawned' }] };
        },
      };
      const agent = new Agent({
        provider: createScriptedProvider([
          { toolCalls: [{ name: 'spawn', arguments: {} }] },
          { text: 'never' },
        ]),
        model: 'test',
        tools: [tool],
      });
      const run = agent.run('go');
      agent.subscribe((event) => {
        if (event.type === 'tool-execution-start') schedule(() => run.abort());
      });
      const result = await run.result;
      expect(result.stopReason).toBe('aborted');
      expect(entries.filter((aborted) => aborted)).toEqual([]);
      expect(toolResults(result.messages)).toHaveLength(1);
    },
  );

  it('a timed-out tool that ignores its signal keeps its key until it settles, and is reported', async () => {
    const locks = new ResourceLocks();
    const order: string[] = [];
    const stuck = deferred();
    const slow = defineTool({
      name: 'slow',
      description: 'ignores its signal',
      input: z.object({ id: z.string() }),
      policy: { resourceKey: () => 'file:shared', timeoutMs: 20 },
      execute: async ({ id }) => {
        order.push(`start:${id}`);
        if (id === 'first') await stuck.promise;
        order.push(`end:${id}`);
        return id;
      },
    });
    const events: AgentEvent[] = [];
    const agent = new Agent({
      provider: createScriptedProvider([
        { toolCalls: [{ name: 'slow', arguments: { id: 'first' } }] },
        { toolCalls: [{ name: 'slow', arguments: { id: 'second' } }] },
        { text: 'done' },
      ]),
      model: 'test',
      tools: [slow],
      resourceLocks: locks,
      abortGraceMs: 10,
      onEvent: (event) => {
        events.push(event);
        // The first call's result is in; let the stuck tool finish a little later.
        if (event.type === 'turn-end' && event.turn === 1) setTimeout(() => stuck.resolve(), 30);
      },
    });
    const { result } = await runToEnd(agent, 'go');
    const [first, second] = toolResults(result.messages);
    expect(first?.errorKind).toBe('timeout');
    expect(
      first?.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n'),
    ).toContain('did not stop within 10 ms');
    expect(second?.isError).toBe(false);
    // The second call on the same key started only after the first really ended.
    expect(order).toEqual(['start:first', 'end:first', 'start:second', 'end:second']);
    expect(events.filter((event) => event.type === 'tool-execution-orphaned')).toEqual([
      expect.objectContaining({ toolName: 'slow', graceMs: 10, resourceKey: 'file:shared' }),
    ]);
    expect(locks.size).toBe(0);
  });
});
