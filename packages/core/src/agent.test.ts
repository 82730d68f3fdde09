import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { Agent } from './agent.js';
import type { AgentEvent } from './agent-events.js';
import { defineTool } from './define-tool.js';
import { ToolError } from './errors.js';
import type { Message } from './messages.js';
import { batched, sequential } from './strategy.js';
import { createScriptedProvider } from './testing/scripted-provider.js';
import {
  activeTimers,
  agentWith,
  deferred,
  resultText,
  runToEnd,
  toolResults,
  waitTool,
} from './testing/test-helpers.js';

const echo = defineTool({
  name: 'echo',
  description: 'Echoes text',
  aliases: ['say'],
  input: z.object({ text: z.string(), limit: z.number().optional() }),
  execute: async ({ text }) => text,
});

describe('Agent: one result per call', () => {
  it('answers every failure path with exactly one result, in call order', async () => {
    const failing = defineTool({
      name: 'boom',
      description: 'throws',
      input: z.object({}),
      execute: async () => {
        throw new Error('kaboom');
      },
    });
    const { agent } = agentWith(
      [
        {
          toolCalls: [
            { id: 'a', name: 'echo', arguments: { text: 'hi' } },
            { id: 'b', name: 'missing', arguments: {} },
            { id: 'c', name: 'echo', arguments: '{"text": "unterminated' },
            { id: 'd', name: 'echo', arguments: { text: 'x', limit: '50' } },
            { id: 'e', name: 'boom', arguments: {} },
            { id: 'f', name: 'say', arguments: { text: 'via alias' } },
            { id: 'g', name: 'echo', arguments: '[1,2]' },
          ],
        },
        { text: 'ok' },
      ],
      [echo, failing],
    );
    const { result } = await runToEnd(agent, 'go');
    expect(result.stopReason).toBe('completed');
    const results = toolResults(agent.messages);
    expect(results.map((r) => r.toolCallId)).toEqual(['a', 'b', 'c', 'd', 'e', 'f', 'g']);
    expect(results.map((r) => r.isError)).toEqual([false, true, true, true, true, false, true]);
    expect(resultText(results[0])).toBe('hi');
    expect(resultText(results[1])).toBe('Tool not found: missing. Available tools: echo, boom');
    expect(results[1]?.errorKind).toBe('not-found');
    expect(resultText(results[2])).toMatch(
      /^Invalid arguments: the arguments are not valid JSON .*Received: "\{\\"text\\": \\"unterminated"$/,
    );
    expect(resultText(results[3])).toBe(
      'Invalid arguments: at "limit": expected number, received string "50" (hint: send 50 as a number, without quotes)',
    );
    expect(results[3]?.errorKind).toBe('invalid-args');
    expect(resultText(results[4])).toBe('kaboom');
    expect(results[5]?.toolName).toBe('echo');
    expect(resultText(results[5])).toBe('via alias');
    expect(resultText(results[6])).toContain('Invalid arguments');
  });

  it('quotes at most 1,024 characters of malformed arguments and says when the token limit cut them', async () => {
    const raw = `{"text": "${'x'.repeat(5000)}`;
    const { agent } = agentWith(
      [
        { toolCalls: [{ id: 'a', name: 'echo', arguments: raw }], stopReason: 'length' },
        { text: 'ok' },
      ],
      [echo],
    );
    await runToEnd(agent, 'go');
    const text = resultText(toolResults(agent.messages)[0]);
    expect(text).toContain('cut off by the output-token limit');
    expect(text).toContain(`… (${raw.length} characters in all)`);
    expect(text.length).toBeLessThan(1400);
  });

  it('times a tool out with its policy timeout and the loop goes on', async () => {
    const log: string[] = [];
    const slow = waitTool('slow', log, { ms: 10_000, policy: { timeoutMs: 30 } });
    const { agent } = agentWith(
      [
        {
          toolCalls: [
            { id: 'a', name: 'slow', arguments: { id: '1' } },
            { id: 'b', name: 'echo', arguments: { text: 'fine' } },
          ],
        },
        { text: 'ok' },
      ],
      [slow, echo],
    );
    const { result } = await runToEnd(agent, 'go');
    const results = toolResults(agent.messages);
    expect(results).toHaveLength(2);
    expect(resultText(results[0])).toBe('Tool exceeded timeout of 30 ms');
    expect(results[0]?.errorKind).toBe('timeout');
    expect(resultText(results[1])).toBe('fine');
    expect(result.stopReason).toBe('completed');
  });

  it('a timeout longer than a Node timer holds (2^31 ms) is no limit, not an instant timeout', async () => {
    const log: string[] = [];
    const slow = waitTool('slow', log, { ms: 20, policy: { timeoutMs: 30 * 24 * 3600 * 1000 } });
    const { agent } = agentWith(
      [{ toolCalls: [{ id: 'a', name: 'slow', arguments: { id: '1' } }] }, { text: 'ok' }],
      [slow],
    );
    await runToEnd(agent, 'go');
    const results = toolResults(agent.messages);
    expect(results[0]?.isError).not.toBe(true);
    expect(results[0]?.errorKind).toBeUndefined();
  });

  it('stops a tool that ignores its signal at the timeout without waiting for it', async () => {
    const never = defineTool({
      name: 'never',
      description: 'never settles',
      input: z.object({}),
      policy: { timeoutMs: 20 },
      execute: () => new Promise<string>(() => {}),
    });
    const { agent } = agentWith(
      [{ toolCalls: [{ name: 'never', arguments: {} }] }, { text: 'ok' }],
      [never],
    );
    const { result } = await runToEnd(agent, 'go');
    expect(result.stopReason).toBe('completed');
    expect(resultText(toolResults(agent.messages)[0])).toBe('Tool exceeded timeout of 20 ms');
  });

  it('gives calls over maxToolCallsPerTurn a not-executed result, not counting exempt tools', async () => {
    const free = defineTool({
      name: 'free',
      description: 'exempt',
      input: z.object({}),
      policy: { countsTowardToolCallLimit: false },
      execute: async () => 'free',
    });
    const { agent } = agentWith(
      [
        {
          toolCalls: [
            { id: '1', name: 'echo', arguments: { text: '1' } },
            { id: '2', name: 'free', arguments: {} },
            { id: '3', name: 'echo', arguments: { text: '3' } },
            { id: '4', name: 'echo', arguments: { text: '4' } },
          ],
        },
        { text: 'ok' },
      ],
      [echo, free],
      { maxToolCallsPerTurn: 2 },
    );
    await runToEnd(agent, 'go');
    const results = toolResults(agent.messages);
    expect(results.map((r) => resultText(r))).toEqual([
      '1',
      'free',
      '3',
      expect.stringContaining('Not executed: a turn may run at most 2 tool calls'),
    ]);
  });

  it('cancels siblings when a tool with abortsSiblingsOnError fails', async () => {
    const log: string[] = [];
    const critical = defineTool({
      name: 'critical',
      description: 'fails fast',
      input: z.object({}),
      policy: { abortsSiblingsOnError: true },
      execute: async () => {
        await new Promise((resolve) => setTimeout(resolve, 10));
        throw new ToolError('disk on fire');
      },
    });
    const slow = waitTool('slow', log, { ms: 5_000 });
    const { agent } = agentWith(
      [
        {
          toolCalls: [
            { id: 's1', name: 'slow', arguments: { id: '1' } },
            { id: 'c', name: 'critical', arguments: {} },
            { id: 's2', name: 'slow', arguments: { id: '2' } },
          ],
        },
        { text: 'ok' },
      ],
      [critical, slow],
    );
    const started = Date.now();
    await runToEnd(agent, 'go');
    expect(Date.now() - started).toBeLessThan(2_000);
    const results = toolResults(agent.messages);
    expect(results.map((r) => r.toolCallId)).toEqual(['s1', 'c', 's2']);
    expect(resultText(results[0])).toBe("Cancelled: aborted because sibling 'critical' failed");
    expect(resultText(results[1])).toBe('disk on fire');
    expect(resultText(results[2])).toBe("Cancelled: aborted because sibling 'critical' failed");
    expect(log).toEqual(['start:1', 'start:2']);
  });

  it('skips calls not yet started when a steering message is queued (sequential)', async () => {
    const log: string[] = [];
    let agentRef: Agent | undefined;
    const steerer = defineTool({
      name: 'steerer',
      description: 'queues a steering message',
      input: z.object({}),
      execute: async () => {
        agentRef?.steer('stop that, do this instead');
        return 'steered';
      },
    });
    const { agent, provider } = agentWith(
      [
        {
          toolCalls: [
            { id: '1', name: 'steerer', arguments: {} },
            { id: '2', name: 'slow', arguments: { id: 'x' } },
            { id: '3', name: 'slow', arguments: { id: 'y' } },
          ],
        },
        { text: 'ok' },
      ],
      [steerer, waitTool('slow', log)],
      { toolExecution: sequential() },
    );
    agentRef = agent;
    await runToEnd(agent, 'go');
    const results = toolResults(agent.messages);
    expect(results.map((r) => resultText(r))).toEqual([
      'steered',
      'Skipped due to queued user message.',
      'Skipped due to queued user message.',
    ]);
    expect(log).toEqual([]);
    const lastRequest = provider.requests[1]?.messages ?? [];
    expect(lastRequest.at(-1)).toMatchObject({
      role: 'user',
      content: 'stop that, do this instead',
    });
  });

  it('checks steering only between batches with batched(n)', async () => {
    const log: string[] = [];
    let agentRef: Agent | undefined;
    const steerer = defineTool({
      name: 'steerer',
      description: 'queues a steering message',
      input: z.object({}),
      execute: async () => {
        agentRef?.steer('new direction');
        return 'steered';
      },
    });
    const { agent } = agentWith(
      [
        {
          toolCalls: [
            { id: '1', name: 'steerer', arguments: {} },
            { id: '2', name: 'slow', arguments: { id: 'same-batch' } },
            { id: '3', name: 'slow', arguments: { id: 'next-batch' } },
          ],
        },
        { text: 'ok' },
      ],
      [steerer, waitTool('slow', log)],
      { toolExecution: batched(2) },
    );
    agentRef = agent;
    await runToEnd(agent, 'go');
    expect(toolResults(agent.messages).map((r) => resultText(r))).toEqual([
      'steered',
      'done same-batch',
      'Skipped due to queued user message.',
    ]);
  });

  it('sends a hook-skipped call a synthetic error naming the reason, with no start or end events', async () => {
    const { agent } = agentWith(
      [
        {
          toolCalls: [
            { id: 'a', name: 'echo', arguments: { text: 'secret' } },
            { id: 'b', name: 'echo', arguments: { text: 'public' } },
          ],
        },
        { text: 'ok' },
      ],
      [echo],
      {
        hooks: {
          beforeToolExecution: (call) =>
            (call.args as { text: string }).text === 'secret'
              ? { action: 'skip', reason: 'no secrets today' }
              : undefined,
        },
      },
    );
    const { events } = await runToEnd(agent, 'go');
    const results = toolResults(agent.messages);
    expect(resultText(results[0])).toBe('Skipped: no secrets today');
    expect(results[0]?.isError).toBe(true);
    expect(resultText(results[1])).toBe('public');
    const toolEvents = events.filter(
      (e) => e.type === 'tool-execution-start' || e.type === 'tool-execution-end',
    );
    expect(
      toolEvents.map((e) =>
        e.type === 'tool-execution-start' || e.type === 'tool-execution-end'
          ? `${e.type}:${e.toolCallId}`
          : '',
      ),
    ).toEqual(['tool-execution-start:b', 'tool-execution-end:b']);
  });

  it('re-validates arguments replaced by a hook', async () => {
    const { agent } = agentWith(
      [
        {
          toolCalls: [
            { id: 'a', name: 'echo', arguments: { text: 'one' } },
            { id: 'b', name: 'echo', arguments: { text: 'two' } },
          ],
        },
        { text: 'ok' },
      ],
      [echo],
      {
        hooks: {
          beforeToolExecution: (call) =>
            call.toolCallId === 'a'
              ? { action: 'replace', args: { text: 'ONE' } }
              : { action: 'replace', args: { text: 2 } },
        },
      },
    );
    await runToEnd(agent, 'go');
    const results = toolResults(agent.messages);
    expect(resultText(results[0])).toBe('ONE');
    expect(resultText(results[1])).toMatch(
      /^Invalid arguments: \(replaced by a hook\) at "text": expected string/,
    );
  });

  it('denies through the permission gate with the reason, passing tier and subjects', async () => {
    const writer = defineTool({
      name: 'writer',
      description: 'writes',
      input: z.object({ path: z.string() }),
      policy: { permission: 'workspace-write' },
      permissionSubjects: ({ path }) => [`/abs/${path}`],
      execute: async () => 'written',
    });
    const seen: string[] = [];
    const { agent } = agentWith(
      [
        {
          toolCalls: [
            { id: 'a', name: 'writer', arguments: { path: 'x' } },
            { id: 'b', name: 'echo', arguments: { text: 'ok' } },
          ],
        },
        { text: 'ok' },
      ],
      [writer, echo],
      {
        permissionGate: (request) => {
          seen.push(`${request.toolName}:${request.tier}:${request.subjects.join(',')}`);
          return request.tier === 'workspace-write'
            ? { behavior: 'deny', reason: 'read-only session' }
            : { behavior: 'allow' };
        },
      },
    );
    await runToEnd(agent, 'go');
    const results = toolResults(agent.messages);
    expect(resultText(results[0])).toBe('Permission denied: read-only session');
    expect(results[0]?.errorKind).toBe('denied');
    expect(resultText(results[1])).toBe('ok');
    expect(seen).toEqual(['writer:workspace-write:/abs/x', 'echo:full-access:']);
  });

  it('reports a ToolError thrown while naming subjects as is; another error as a failed check', async () => {
    const confined = defineTool({
      name: 'confined',
      description: 'refuses paths outside its root',
      input: z.object({ path: z.string() }),
      permissionSubjects: ({ path }) => {
        if (path.startsWith('..')) throw ToolError.denied('confined', `${path} is outside`);
        if (path === 'boom') throw new Error('disk on fire');
        return [path];
      },
      execute: async () => 'ran',
    });
    const { agent } = agentWith(
      [
        {
          toolCalls: [
            { id: 'a', name: 'confined', arguments: { path: '../etc' } },
            { id: 'b', name: 'confined', arguments: { path: 'boom' } },
            { id: 'c', name: 'confined', arguments: { path: 'ok' } },
          ],
        },
        { text: 'ok' },
      ],
      [confined],
      { permissionGate: () => ({ behavior: 'allow' }) },
    );
    await runToEnd(agent, 'go');
    const results = toolResults(agent.messages);
    expect(results.map((result) => [result.errorKind, resultText(result)])).toEqual([
      ['denied', 'Permission denied: ../etc is outside'],
      ['denied', 'Permission denied: the permission check failed: disk on fire'],
      [undefined, 'ran'],
    ]);
  });
});

describe('Agent: scheduling', () => {
  it('emits end events in completion order but result messages in call order', async () => {
    const log: string[] = [];
    const slow = waitTool('wait', log);
    const { agent } = agentWith(
      [
        {
          toolCalls: [
            { id: 'a', name: 'wait', arguments: { id: 'a', ms: 60 } },
            { id: 'b', name: 'wait', arguments: { id: 'b', ms: 1 } },
            { id: 'c', name: 'wait', arguments: { id: 'c', ms: 30 } },
          ],
        },
        { text: 'ok' },
      ],
      [slow],
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

describe('Agent: termination, limits and queues', () => {
  it('ends when every call of a batch votes terminate, not when only some do', async () => {
    const finish = defineTool({
      name: 'finish',
      description: 'ends',
      input: z.object({ vote: z.boolean() }),
      execute: async ({ vote }) => ({ content: [{ type: 'text', text: 'bye' }], terminate: vote }),
    });
    const mixed = agentWith(
      [
        {
          toolCalls: [
            { name: 'finish', arguments: { vote: true } },
            { name: 'finish', arguments: { vote: false } },
          ],
        },
        { text: 'continued' },
      ],
      [finish],
    );
    expect((await runToEnd(mixed.agent, 'go')).result.stopReason).toBe('completed');
    const all = agentWith(
      [
        {
          toolCalls: [
            { name: 'finish', arguments: { vote: true } },
            { name: 'finish', arguments: { vote: true } },
          ],
        },
        { text: 'unreachable' },
      ],
      [finish],
    );
    const { result } = await runToEnd(all.agent, 'go');
    expect(result.stopReason).toBe('terminated');
    expect(all.provider.calls).toBe(1);
  });

  it('stops at maxTurns', async () => {
    const { agent, provider } = agentWith(
      [{ toolCalls: [{ name: 'echo', arguments: { text: 'again' } }] }],
      [echo],
      { maxTurns: 3 },
    );
    provider.push(
      ...Array.from({ length: 5 }, () => ({
        toolCalls: [{ name: 'echo', arguments: { text: 'again' } }],
      })),
    );
    const { result } = await runToEnd(agent, 'go');
    expect(result.stopReason).toBe('max-turns');
    expect(result.turns).toBe(3);
    expect(toolResults(agent.messages)).toHaveLength(3);
  });

  it('sends a follow-up after the agent would stop', async () => {
    const { agent, provider } = agentWith(
      [{ text: 'first answer' }, { text: 'second answer' }],
      [],
    );
    agent.followUp('and one more thing');
    const { result } = await runToEnd(agent, 'go');
    expect(result.turns).toBe(2);
    expect(provider.requests[1]?.messages.at(-1)).toMatchObject({
      role: 'user',
      content: 'and one more thing',
    });
  });

  it('takeQueuedMessages hands back what no run sent, steering first, and empties the queues', async () => {
    const { agent, provider } = agentWith([{ text: 'only answer' }], []);
    agent.followUp('later');
    agent.steer('now');
    expect(agent.takeQueuedMessages().map((message) => message.content)).toEqual(['now', 'later']);
    expect(agent.takeQueuedMessages()).toEqual([]);
    // Taken, they are not sent by the next run.
    const { result } = await runToEnd(agent, 'go');
    expect(result.turns).toBe(1);
    expect(provider.requests[0]?.messages.map((message) => message.role)).toEqual(['user']);
  });

  it('ends the run on a fatal ToolError', async () => {
    const fatal = defineTool({
      name: 'fatal',
      description: 'ends everything',
      input: z.object({}),
      execute: async () => {
        throw new ToolError('credentials revoked', { fatal: true });
      },
    });
    const { agent, provider } = agentWith(
      [
        {
          toolCalls: [
            { name: 'fatal', arguments: {} },
            { name: 'echo', arguments: { text: 'x' } },
          ],
        },
        { text: 'never' },
      ],
      [fatal, echo],
      { toolExecution: sequential() },
    );
    const { result } = await runToEnd(agent, 'go');
    expect(result.stopReason).toBe('error');
    expect(result.error).toBe('credentials revoked');
    expect(toolResults(agent.messages)).toHaveLength(2);
    expect(provider.calls).toBe(1);
  });

  it('ends with error when the provider fails, answering its tool calls', async () => {
    const { agent } = agentWith(
      [
        {
          text: 'partial',
          toolCalls: [{ id: 'a', name: 'echo', arguments: { text: 'x' } }],
          error: { message: 'overloaded', statusCode: 529, afterDeltas: 1000 },
        },
      ],
      [echo],
    );
    const { result, events } = await runToEnd(agent, 'go');
    expect(result.stopReason).toBe('error');
    expect(result.error).toBe('overloaded');
    expect(result.providerError).toMatchObject({ message: 'overloaded', statusCode: 529 });
    expect(events.at(-1)).toMatchObject({
      type: 'agent-end',
      stopReason: 'error',
      error: 'overloaded',
      providerError: { statusCode: 529 },
    });
    const results = toolResults(agent.messages);
    expect(results.map((r) => [r.toolCallId, resultText(r)])).toEqual([
      ['a', "Not executed: the model's response ended with an error."],
    ]);
  });

  it('refuses a second concurrent run', async () => {
    const { agent } = agentWith([{ text: 'a', delayMs: 5 }], []);
    const run = agent.run('go');
    expect(() => agent.run('again')).toThrow(/already running/);
    await run.result;
  });
});

describe('Agent: conversations and the result budget', () => {
  it('a saved conversation reloads and continues identically', async () => {
    const script = [
      { text: 'calling', toolCalls: [{ id: 't1', name: 'echo', arguments: { text: 'one' } }] },
      { text: 'first done' },
      {
        thinking: { text: 'hmm', signature: 'sig-1' },
        toolCalls: [{ id: 't2', name: 'echo', arguments: { text: 'two' } }],
      },
      { text: 'second done' },
    ];
    const straight = agentWith(script, [echo]);
    await straight.agent.run('first').result;
    await straight.agent.run('second').result;

    const first = agentWith(script.slice(0, 2), [echo]);
    await first.agent.run('first').result;
    const saved = JSON.stringify(first.agent.toJSON());
    const resumedProvider = createScriptedProvider(script.slice(2));
    const resumed = new Agent({
      provider: resumedProvider,
      model: 'test-model',
      tools: [echo],
      messages: (JSON.parse(saved) as { messages: Message[] }).messages,
    });
    await resumed.run('second').result;

    const strip = (value: unknown) =>
      JSON.parse(JSON.stringify(value, (key, v) => (key === 'timestamp' ? 0 : v)));
    expect(strip(resumedProvider.requests)).toEqual(strip(straight.provider.requests.slice(2)));
    expect(strip(resumed.messages)).toEqual(strip(straight.agent.messages));
  });

  it('clips older tool results in the request copy only, newest batch whole', async () => {
    const big = defineTool({
      name: 'big',
      description: 'big output',
      input: z.object({}),
      policy: { maxResultChars: 100 },
      execute: async () => `${'x'.repeat(600)}END`,
    });
    const { agent, provider } = agentWith(
      [
        { toolCalls: [{ name: 'big', arguments: {} }] },
        { toolCalls: [{ name: 'big', arguments: {} }] },
        { text: 'ok' },
      ],
      [big],
    );
    await runToEnd(agent, 'go');
    const secondRequest = provider.requests[1]?.messages ?? [];
    const thirdRequest = provider.requests[2]?.messages ?? [];
    const text = (m: Message | undefined) =>
      m?.role === 'toolResult' && m.content[0]?.type === 'text' ? m.content[0].text : '';
    expect(text(secondRequest.at(-1))).toHaveLength(603);
    const clipped = text(thirdRequest.find((m) => m.role === 'toolResult'));
    expect(clipped).toMatch(/^x{75}\n\[… 503 of 603 characters clipped …\]\nx{22}END$/);
    expect(text(thirdRequest.at(-1))).toHaveLength(603);
    expect(text(toolResults(agent.messages)[0])).toHaveLength(603);
  });

  it('streams assistant deltas as message-update events to an iterator attached with run()', async () => {
    const { agent } = agentWith([{ text: 'hello world, streamed in pieces' }], []);
    const { events } = await runToEnd(agent, 'go');
    const deltas = events.flatMap((e) =>
      e.type === 'message-update' && e.event.type === 'text-delta' ? [e.event.delta] : [],
    );
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe('hello world, streamed in pieces');
    expect(events[0]?.type).toBe('agent-start');
    expect(events.at(-1)?.type).toBe('agent-end');
  });

  it('retains no events for iterators that attach after the run ended', async () => {
    const { agent } = agentWith([{ text: 'done' }], []);
    const run = agent.run('go');
    await run.result;
    const late: AgentEvent[] = [];
    for await (const event of run) late.push(event);
    expect(late).toEqual([]);
  });
});

describe('Agent: resuming imperfect conversations', () => {
  it('answers tool calls a saved conversation left without results before continuing', async () => {
    const saved: Message[] = [
      { role: 'user', content: 'go', timestamp: 1 },
      {
        role: 'assistant',
        content: [
          { type: 'toolCall', id: 'done-1', name: 'echo', arguments: '{"text":"a"}' },
          { type: 'toolCall', id: 'lost-2', name: 'echo', arguments: '{"text":"b"}' },
        ],
        provider: 'scripted',
        model: 'm',
        usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 },
        stopReason: 'toolUse',
        timestamp: 2,
      },
      {
        role: 'toolResult',
        toolCallId: 'done-1',
        toolName: 'echo',
        content: [{ type: 'text', text: 'a' }],
        isError: false,
        timestamp: 3,
      },
    ];
    const provider = createScriptedProvider([{ text: 'continuing' }]);
    const agent = new Agent({ provider, model: 'm', tools: [echo], messages: saved });
    await agent.run('what happened?').result;
    const sent = provider.requests[0]?.messages ?? [];
    expect(sent.map((m) => (m.role === 'toolResult' ? `result:${m.toolCallId}` : m.role))).toEqual([
      'user',
      'assistant',
      'result:done-1',
      'result:lost-2',
      'user',
    ]);
    expect(resultText(toolResults(agent.messages)[1])).toBe(
      'Not executed: the conversation was interrupted before this call ran.',
    );
  });

  it('sends a message steered while idle as the next user message', async () => {
    const { agent, provider } = agentWith([{ text: 'ok' }], []);
    agent.steer('also consider this');
    await agent.run('main question').result;
    expect(provider.requests[0]?.messages.map((m) => m.content)).toEqual([
      'main question',
      'also consider this',
    ]);
  });
});

describe('Agent: calls cut off by the token limit', () => {
  it('does not run a last call whose arguments never arrived', async () => {
    let ran = 0;
    const noArgs = defineTool({
      name: 'no_args',
      description: 'takes nothing',
      input: z.object({}),
      execute: async () => {
        ran++;
        return 'ran';
      },
    });
    const { agent } = agentWith(
      [
        {
          toolCalls: [
            { id: 'a', name: 'no_args', arguments: '' },
            { id: 'b', name: 'no_args', arguments: '' },
          ],
          stopReason: 'length',
        },
        { text: 'ok' },
      ],
      [noArgs],
    );
    await runToEnd(agent, 'go');
    const results = toolResults(agent.messages);
    expect(resultText(results[0])).toBe('ran');
    expect(resultText(results[1])).toContain('cut off by the output-token limit');
    expect(ran).toBe(1);
  });
});
