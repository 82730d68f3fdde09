// How the loop runs a batch of calls: strategies, hooks and updates, cancellation.
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { Agent } from './agent.js';
import { defineTool } from './define-tool.js';
import { batched, sequential } from './strategy.js';
import { createScriptedProvider } from './testing/scripted-provider.js';
import {
  activeTimers,
  agentWith,
  deferred,
  echo,
  resultText,
  runToEnd,
  toolResults,
  waitTool,
} from './testing/test-helpers.js';

describe('Agent: scheduling', () => {
  it('emits end events in completion order but result messages in call order', async () => {
    // Each call ends after the one it names has ended (and every microtask after it has run), so
    // the order is b, c, a however slowly the calls start (timers of 1, 30 and 60 ms did not hold
    // it on a loaded CI: c's timer was armed over 30 ms after a's).
    const ended = new Map<string, ReturnType<typeof deferred<void>>>();
    const endOf = (id: string) => {
      let found = ended.get(id);
      if (found === undefined) {
        found = deferred<void>();
        ended.set(id, found);
      }
      return found;
    };
    const inOrder = defineTool({
      name: 'wait',
      description: 'ends after another call ended',
      input: z.object({ id: z.string(), after: z.string().optional() }),
      execute: async ({ id, after }) => {
        if (after !== undefined) {
          await endOf(after).promise;
          await new Promise((resolve) => setImmediate(resolve));
        }
        endOf(id).resolve();
        return `done ${id}`;
      },
    });
    const { agent } = agentWith(
      [
        {
          toolCalls: [
            { id: 'a', name: 'wait', arguments: { id: 'a', after: 'c' } },
            { id: 'b', name: 'wait', arguments: { id: 'b' } },
            { id: 'c', name: 'wait', arguments: { id: 'c', after: 'b' } },
          ],
        },
        { text: 'ok' },
      ],
      [inOrder],
    );
    const { events } = await runToEnd(agent, 'go');
    const ends = events.flatMap((e) => (e.type === 'tool-execution-end' ? [e.toolCallId] : []));
    expect(ends).toEqual(['b', 'c', 'a']);
    expect(toolResults(agent.messages).map((r) => r.toolCallId)).toEqual(['a', 'b', 'c']);
    const resultEvents = events.flatMap((e) =>
      e.type === 'message-end' && e.message.role === 'toolResult' ? [e.message.toolCallId] : [],
    );
    expect(resultEvents).toEqual(['a', 'b', 'c']);
  });

  it('rejects batched(0) and non-integer sizes', () => {
    expect(() => batched(0)).toThrow(/integer size >= 1/);
    expect(() => batched(1.5)).toThrow(/integer size >= 1/);
    const provider = createScriptedProvider([]);
    expect(
      () => new Agent({ provider, model: 'm', toolExecution: { type: 'batched', size: 0 } }),
    ).toThrow(/integer size >= 1/);
  });

  it('runs a parallel batch sequentially when it contains an exclusive tool', async () => {
    const log: string[] = [];
    const exclusive = waitTool('exclusive', log, { ms: 5, policy: { exclusive: true } });
    const normal = waitTool('normal', log, { ms: 5 });
    const { agent } = agentWith(
      [
        {
          toolCalls: [
            { name: 'normal', arguments: { id: '1' } },
            { name: 'exclusive', arguments: { id: '2' } },
            { name: 'normal', arguments: { id: '3' } },
          ],
        },
        { text: 'ok' },
      ],
      [exclusive, normal],
    );
    await runToEnd(agent, 'go');
    expect(log).toEqual(['start:1', 'end:1', 'start:2', 'end:2', 'start:3', 'end:3']);
  });

  it('runs a parallel batch without exclusive tools concurrently', async () => {
    const log: string[] = [];
    const normal = waitTool('normal', log, { ms: 5 });
    const { agent } = agentWith(
      [
        {
          toolCalls: [
            { name: 'normal', arguments: { id: '1' } },
            { name: 'normal', arguments: { id: '2' } },
          ],
        },
        { text: 'ok' },
      ],
      [normal],
    );
    await runToEnd(agent, 'go');
    expect(log.slice(0, 2)).toEqual(['start:1', 'start:2']);
  });

  it('never overlaps two calls with the same resourceKey, but overlaps different keys', async () => {
    const intervals: Array<{ key: string; start: number; end: number }> = [];
    const keyed = defineTool({
      name: 'keyed',
      description: 'holds a resource',
      input: z.object({ key: z.string() }),
      policy: { resourceKey: ({ key }) => `file:${key}` },
      execute: async ({ key }) => {
        const start = performance.now();
        await new Promise((resolve) => setTimeout(resolve, 15));
        intervals.push({ key, start, end: performance.now() });
        return key;
      },
    });
    const { agent } = agentWith(
      [
        {
          toolCalls: ['a', 'a', 'b', 'a', 'b'].map((key, index) => ({
            id: `c${index}`,
            name: 'keyed',
            arguments: { key },
          })),
        },
        { text: 'ok' },
      ],
      [keyed],
    );
    await runToEnd(agent, 'go');
    expect(intervals).toHaveLength(5);
    for (const key of ['a', 'b']) {
      const same = intervals.filter((i) => i.key === key).sort((x, y) => x.start - y.start);
      for (let i = 1; i < same.length; i++)
        expect(same[i]?.start).toBeGreaterThanOrEqual(same[i - 1]?.end ?? Number.POSITIVE_INFINITY);
    }
    const a0 = intervals.find((i) => i.key === 'a');
    const b0 = intervals.find((i) => i.key === 'b');
    expect(a0 && b0 && a0.start < b0.end && b0.start < a0.end).toBe(true);
  });
});

describe('Agent: hooks and updates', () => {
  it('fires each hook strictly before its paired event; a suppressed update is not emitted but the tool goes on', async () => {
    const order: string[] = [];
    const streaming = defineTool({
      name: 'streaming',
      description: 'reports partial results',
      input: z.object({}),
      execute: async (_args, ctx) => {
        ctx.onUpdate({ content: [{ type: 'text', text: 'part 1' }] });
        ctx.onUpdate({ content: [{ type: 'text', text: 'secret part' }] });
        ctx.onUpdate({ content: [{ type: 'text', text: 'part 3' }] });
        ctx.onProgress('almost', 0.9);
        order.push('tool:finished');
        return 'all parts';
      },
    });
    const { agent } = agentWith(
      [{ toolCalls: [{ id: 't', name: 'streaming', arguments: {} }] }, { text: 'ok' }],
      [streaming],
      {
        hooks: {
          beforeToolExecution: () => {
            order.push('hook:before');
            return undefined;
          },
          beforeToolExecutionUpdate: async (_call, partial) => {
            const text = partial.content[0]?.type === 'text' ? partial.content[0].text : '';
            order.push(`hook:before-update:${text}`);
            return text !== 'secret part';
          },
          afterToolExecutionUpdate: (_call, partial) => {
            order.push(
              `hook:after-update:${partial.content[0]?.type === 'text' ? partial.content[0].text : ''}`,
            );
          },
          afterToolExecution: (_call, result) => {
            order.push('hook:after');
            return { ...result, content: [{ type: 'text', text: 'rewritten by hook' }] };
          },
        },
        onEvent: (event) => {
          if (event.type === 'tool-execution-start') order.push('event:start');
          if (event.type === 'tool-execution-update')
            order.push(
              `event:update:${event.partial.content[0]?.type === 'text' ? event.partial.content[0].text : ''}`,
            );
          if (event.type === 'progress')
            order.push(`event:progress:${event.text}:${event.progress}`);
          if (event.type === 'tool-execution-end') order.push('event:end');
          if (event.type === 'message-end' && event.message.role === 'toolResult')
            order.push('event:result');
        },
      },
    );
    await runToEnd(agent, 'go');
    expect(order).toEqual([
      'hook:before',
      'event:start',
      'event:progress:almost:0.9',
      'tool:finished',
      'hook:before-update:part 1',
      'event:update:part 1',
      'hook:after-update:part 1',
      'hook:before-update:secret part',
      'hook:before-update:part 3',
      'event:update:part 3',
      'hook:after-update:part 3',
      'event:end',
      'hook:after',
      'event:result',
    ]);
    expect(resultText(toolResults(agent.messages)[0])).toBe('rewritten by hook');
  });

  it('turns a throwing hook into an error result instead of crashing the run', async () => {
    const { agent } = agentWith(
      [{ toolCalls: [{ id: 'a', name: 'echo', arguments: { text: 'x' } }] }, { text: 'ok' }],
      [echo],
      {
        hooks: {
          beforeToolExecution: () => {
            throw new Error('hook bug');
          },
        },
      },
    );
    const { result } = await runToEnd(agent, 'go');
    expect(result.stopReason).toBe('completed');
    expect(resultText(toolResults(agent.messages)[0])).toBe(
      'Not executed: the beforeToolExecution hook failed: hook bug',
    );
  });
});
describe('Agent: cancellation', () => {
  it('aborting mid-tool ends the run with stop reason aborted, every call answered, no timers left', async () => {
    const timersBefore = activeTimers();
    const log: string[] = [];
    const started = deferred();
    const slow = defineTool({
      name: 'slow',
      description: 'waits for a long time',
      input: z.object({ id: z.string() }),
      execute: async ({ id }, ctx) => {
        log.push(`start:${id}`);
        started.resolve();
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(resolve, 60_000);
          ctx.signal.addEventListener('abort', () => {
            clearTimeout(timer);
            log.push(`aborted:${id}`);
            reject(new Error('stopped'));
          });
        });
        return 'never';
      },
    });
    const { agent, provider } = agentWith(
      [
        {
          toolCalls: [
            { id: 'a', name: 'slow', arguments: { id: 'a' } },
            { id: 'b', name: 'slow', arguments: { id: 'b' } },
          ],
        },
        { text: 'unreachable' },
      ],
      [slow],
      { toolExecution: sequential() },
    );
    const run = agent.run('go');
    await started.promise;
    run.abort();
    const result = await run.result;
    expect(result.stopReason).toBe('aborted');
    const results = toolResults(agent.messages);
    expect(results.map((r) => [r.toolCallId, resultText(r)])).toEqual([
      ['a', 'Cancelled'],
      ['b', 'Cancelled'],
    ]);
    expect(log).toEqual(['start:a', 'aborted:a']);
    expect(provider.calls).toBe(1);
    expect(agent.isRunning).toBe(false);
    expect(activeTimers()).toBe(timersBefore);
  });

  it('aborting during the model stream ends promptly with aborted and answers the partial calls', async () => {
    const provider = createScriptedProvider(
      [
        {
          text: 'thinking out loud for a while',
          toolCalls: [{ id: 'a', name: 'echo', arguments: { text: 'x' } }],
          delayMs: 20,
        },
      ],
      { chunkSize: 2 },
    );
    const agent = new Agent({ provider, model: 'm', tools: [echo] });
    const run = agent.run('go');
    for await (const event of run) {
      if (event.type === 'message-update') {
        run.abort();
        break;
      }
    }
    const result = await run.result;
    expect(result.stopReason).toBe('aborted');
    expect(result.finalMessage?.stopReason).toBe('aborted');
  });

  it('honours an external signal passed to run()', async () => {
    const controller = new AbortController();
    controller.abort();
    const { agent } = agentWith([{ text: 'never' }], []);
    const result = await agent.run('go', { signal: controller.signal }).result;
    expect(result.stopReason).toBe('aborted');
  });
});
