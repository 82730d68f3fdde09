import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { Agent } from './agent.js';
import { defineTool } from './define-tool.js';
import { executeTool } from './execute-tool.js';
import { createScriptedProvider, type ScriptedTurn } from './testing/scripted-provider.js';
import {
  activeTimers,
  agentWith,
  resultText,
  runToEnd,
  toolResults,
} from './testing/test-helpers.js';
import type { AnyAgentTool } from './tool.js';

// The calls of a batch that arm the same timeout together share one timer (run-call.ts). These
// tests pin what that must not change: each call still times out on its own terms, a call that
// finished is never aborted afterwards, a later call gets its whole timeout, and no timer outlives
// its batch.

const input = z.object({ id: z.string() });

/** A tool that ignores its signal and settles after `ms` (never, when undefined). */
function stubborn(name: string, timeoutMs: number, ms?: number): AnyAgentTool {
  return defineTool({
    name,
    description: `settles after ${ms ?? 'never'} ms, ignoring its signal`,
    input,
    policy: { timeoutMs },
    execute: ({ id }) =>
      new Promise<string>((resolve) => {
        if (ms !== undefined) setTimeout(() => resolve(`done ${id}`), ms);
      }),
  });
}

/** An agent whose aborted tools are reported at once. */
function quickAgent(turns: ScriptedTurn[], tools: AnyAgentTool[]): Agent {
  return agentWith(turns, tools, { model: 'test', abortGraceMs: 0 }).agent;
}

describe('runCall: timeouts on a shared timer', () => {
  it('every call of a parallel batch that overruns gets its own timeout; one that finished is not aborted afterwards', async () => {
    const signals = new Map<string, AbortSignal>();
    const quick = defineTool({
      name: 'quick',
      description: 'answers at once',
      input,
      policy: { timeoutMs: 40 },
      execute: async ({ id }, ctx) => {
        signals.set(id, ctx.signal);
        return `quick ${id}`;
      },
    });
    const hang = defineTool({
      name: 'hang',
      description: 'waits for its signal',
      input,
      policy: { timeoutMs: 40 },
      execute: ({ id }, ctx) => {
        signals.set(id, ctx.signal);
        return new Promise<string>((_, reject) => {
          ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true });
        });
      },
    });
    const agent = quickAgent(
      [
        {
          toolCalls: [
            { id: 'a', name: 'hang', arguments: { id: 'a' } },
            { id: 'b', name: 'quick', arguments: { id: 'b' } },
            { id: 'c', name: 'hang', arguments: { id: 'c' } },
          ],
        },
        { text: 'ok' },
      ],
      [quick, hang],
    );
    const { result } = await runToEnd(agent, 'go');
    const results = toolResults(agent.messages);
    expect(results.map((message) => message.errorKind)).toEqual(['timeout', undefined, 'timeout']);
    expect(resultText(results[0])).toBe('Tool exceeded timeout of 40 ms');
    expect(resultText(results[1])).toBe('quick b');
    expect(resultText(results[2])).toBe('Tool exceeded timeout of 40 ms');
    expect(signals.get('a')?.aborted).toBe(true);
    expect(signals.get('c')?.aborted).toBe(true);
    // The quick call's signal stays quiet although its siblings' shared timer fired later.
    expect(signals.get('b')?.aborted).toBe(false);
    expect(result.stopReason).toBe('completed');
  });

  it('a tool that never reads its signal is still timed out', async () => {
    const agent = quickAgent(
      [{ toolCalls: [{ id: 'a', name: 'deaf', arguments: { id: 'a' } }] }, { text: 'ok' }],
      [stubborn('deaf', 30)],
    );
    await runToEnd(agent, 'go');
    const [result] = toolResults(agent.messages);
    expect(result?.errorKind).toBe('timeout');
    expect(resultText(result)).toBe('Tool exceeded timeout of 30 ms');
  });

  it("a short timeout in a batch does not cut a sibling's longer one", async () => {
    const agent = quickAgent(
      [
        {
          toolCalls: [
            { id: 'a', name: 'short', arguments: { id: 'a' } },
            { id: 'b', name: 'long', arguments: { id: 'b' } },
          ],
        },
        { text: 'ok' },
      ],
      // `long` is still running when `short`'s timer fires, and finishes well inside its own.
      [stubborn('short', 20), stubborn('long', 5_000, 150)],
    );
    await runToEnd(agent, 'go');
    const results = toolResults(agent.messages);
    expect(results[0]?.errorKind).toBe('timeout');
    expect(results[1]?.isError).toBe(false);
    expect(resultText(results[1])).toBe('done b');
  });

  it('a call armed after a long synchronous sibling gets its whole timeout, not what is left of the sibling’s', async () => {
    // `busy` holds the thread for 150 ms before `late` arms its timer in the same synchronous
    // step; `late` needs 200 of its 300 ms. Sharing `busy`'s timer would cut it at ~150 ms.
    const busy = defineTool({
      name: 'busy',
      description: 'blocks the thread, then never settles',
      input,
      policy: { timeoutMs: 300 },
      execute: () => {
        const until = performance.now() + 150;
        while (performance.now() < until) {
          // Busy on purpose: no timer can fire in between.
        }
        return new Promise<string>(() => {});
      },
    });
    const agent = quickAgent(
      [
        {
          toolCalls: [
            { id: 'a', name: 'busy', arguments: { id: 'a' } },
            { id: 'b', name: 'late', arguments: { id: 'b' } },
          ],
        },
        { text: 'ok' },
      ],
      [busy, stubborn('late', 300, 200)],
    );
    await runToEnd(agent, 'go');
    const results = toolResults(agent.messages);
    expect(results[0]?.errorKind).toBe('timeout');
    expect(results[1]?.isError).toBe(false);
    expect(resultText(results[1])).toBe('done b');
  });

  it('each call of a sequential batch gets its whole timeout', async () => {
    const agent = new Agent({
      provider: createScriptedProvider([
        {
          toolCalls: [
            { id: 'a', name: 'step', arguments: { id: 'a' } },
            { id: 'b', name: 'step', arguments: { id: 'b' } },
          ],
        },
        { text: 'ok' },
      ]),
      model: 'test',
      tools: [stubborn('step', 200, 120)],
      toolExecution: { type: 'sequential' },
    });
    await runToEnd(agent, 'go');
    const results = toolResults(agent.messages);
    expect(results.map((message) => message.isError)).toEqual([false, false]);
  });

  it('leaves no timer behind when its calls finish before their (default, 10-minute) timeout', async () => {
    const before = activeTimers();
    const agent = quickAgent(
      [
        {
          toolCalls: [
            { id: 'a', name: 'fast', arguments: { id: 'a' } },
            { id: 'b', name: 'fast', arguments: { id: 'b' } },
          ],
        },
        { text: 'ok' },
      ],
      [stubborn('fast', 600_000, 1)],
    );
    await runToEnd(agent, 'go');
    expect(toolResults(agent.messages).map((message) => message.isError)).toEqual([false, false]);
    // At most as many as before: a timer of an earlier test may end meanwhile; a leaked
    // 10-minute timer would not.
    expect(activeTimers()).toBeLessThanOrEqual(before);
    expect(await executeTool(stubborn('fast', 600_000, 1), { id: 'c' })).toMatchObject({
      isError: false,
    });
    expect(activeTimers()).toBeLessThanOrEqual(before);
  });

  it('a run abort reaches every call of the batch, the timed and the untimed', async () => {
    const seen: AbortSignal[] = [];
    const listener = (timeoutMs: number) =>
      defineTool({
        name: `wait_${timeoutMs}`,
        description: 'waits for its signal',
        input,
        policy: { timeoutMs },
        execute: (_, ctx) => {
          seen.push(ctx.signal);
          if (seen.length === 3) queueMicrotask(() => agent.abort('stop'));
          return new Promise<string>((_, reject) => {
            ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true });
          });
        },
      });
    const agent = quickAgent(
      [
        {
          toolCalls: [
            { id: 'a', name: 'wait_60000', arguments: { id: 'a' } },
            { id: 'b', name: 'wait_0', arguments: { id: 'b' } },
            { id: 'c', name: 'wait_60000', arguments: { id: 'c' } },
          ],
        },
        { text: 'never' },
      ],
      [listener(60_000), listener(0)],
    );
    const { result } = await runToEnd(agent, 'go');
    expect(result.stopReason).toBe('aborted');
    expect(seen.map((signal) => signal.aborted)).toEqual([true, true, true]);
    expect(toolResults(agent.messages).map((message) => message.errorKind)).toEqual([
      'cancelled',
      'cancelled',
      'cancelled',
    ]);
  });
});

describe('runCall: defineTool tools run their body directly', () => {
  it('a wrapper that replaces execute still runs; one that spreads the tool runs the same body', async () => {
    const log: string[] = [];
    const tool = defineTool({
      name: 'echo',
      description: 'echoes',
      input,
      execute: async ({ id }) => `echo ${id}`,
    });
    const wrapped: AnyAgentTool = {
      ...tool,
      execute: async (args, ctx) => {
        log.push('wrapper');
        const result = await tool.execute(args as { id: string }, ctx);
        return { ...result, content: [...result.content, { type: 'text', text: 'wrapped' }] };
      },
    };
    const viaWrapper = await executeTool(wrapped, { id: 'a' });
    expect(log).toEqual(['wrapper']);
    expect(viaWrapper.content).toEqual([
      { type: 'text', text: 'echo a' },
      { type: 'text', text: 'wrapped' },
    ]);
    expect((await executeTool({ ...tool }, { id: 'b' })).content).toEqual([
      { type: 'text', text: 'echo b' },
    ]);
  });

  it('the body runs as a method of its config, and details that break the output schema are an error result', async () => {
    const config = {
      name: 'counter',
      description: 'counts',
      input,
      output: z.object({ count: z.number() }),
      prefix: 'count',
      async execute(this: { prefix: string }, { id }: { id: string }) {
        return {
          content: [{ type: 'text' as const, text: `${this.prefix} ${id}` }],
          details: id === 'bad' ? { count: 'many' as unknown as number } : { count: 1 },
        };
      },
    };
    const tool = defineTool(config);
    const good = await executeTool(tool, { id: 'a' });
    expect(good).toMatchObject({ isError: false, details: { count: 1 } });
    expect(good.content).toEqual([{ type: 'text', text: 'count a' }]);
    const bad = await executeTool(tool, { id: 'bad' });
    expect(bad).toMatchObject({ isError: true, errorKind: 'failed' });
    expect(resultText(bad)).toContain('returned details that do not match its output schema');
  });
});
