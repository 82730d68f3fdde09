// The loop's first promise: every tool call gets exactly one result, whatever happens to it.
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import type { Agent } from './agent.js';
import { defineTool } from './define-tool.js';
import { ToolError } from './errors.js';
import { batched, sequential } from './strategy.js';
import {
  agentWith,
  echo,
  resultText,
  runToEnd,
  toolResults,
  waitTool,
} from './testing/test-helpers.js';

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
    const slow = waitTool('slow', log, { ms: 60_000 });
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
    // The slow calls were cancelled, not waited for (60 s each); the bound leaves room for load.
    expect(Date.now() - started).toBeLessThan(30_000);
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
