import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { Agent } from './agent.js';
import { defineTool } from './define-tool.js';
import { executeTool } from './execute-tool.js';
import { createScriptedProvider } from './testing/scripted-provider.js';
import { resultText, toolResults } from './testing/test-helpers.js';
import type { AnyAgentTool } from './tool.js';

function counter(name: string, policy: AnyAgentTool['policy'], ran: string[]): AnyAgentTool {
  return defineTool({
    name,
    description: name,
    input: z.object({ id: z.string() }),
    ...(policy === undefined ? {} : { policy }),
    execute: async ({ id }) => {
      ran.push(`${name}:${id}`);
      return id;
    },
  });
}

describe('ToolPolicy.parallelSafePerTurn', () => {
  it('repeated calls of a parallel-safe tool count once toward maxToolCallsPerTurn', async () => {
    for (const parallelSafePerTurn of [true, false]) {
      const ran: string[] = [];
      const read = counter('read', { permission: 'read-only', parallelSafePerTurn }, ran);
      const write = counter('write', {}, ran);
      const agent = new Agent({
        provider: createScriptedProvider([
          {
            toolCalls: [
              { name: 'read', arguments: { id: '1' } },
              { name: 'read', arguments: { id: '2' } },
              { name: 'read', arguments: { id: '3' } },
              { name: 'write', arguments: { id: '4' } },
            ],
          },
          { text: 'ok' },
        ]),
        model: 'm',
        tools: [read, write],
        maxToolCallsPerTurn: 2,
      });
      const result = await agent.run('go').result;
      const refused = toolResults(result.messages).filter((message) =>
        resultText(message).includes('maxToolCallsPerTurn'),
      );
      if (parallelSafePerTurn) {
        expect(ran.sort()).toEqual(['read:1', 'read:2', 'read:3', 'write:4']);
        expect(refused).toHaveLength(0);
      } else {
        expect(ran.sort()).toEqual(['read:1', 'read:2']);
        expect(refused).toHaveLength(2);
      }
    }
  });

  it('the repeats share the first call’s verdict when that one is over the cap', async () => {
    const ran: string[] = [];
    const write = counter('write', {}, ran);
    const read = counter('read', { parallelSafePerTurn: true }, ran);
    const agent = new Agent({
      provider: createScriptedProvider([
        {
          toolCalls: [
            { name: 'write', arguments: { id: '1' } },
            { name: 'read', arguments: { id: '2' } },
            { name: 'read', arguments: { id: '3' } },
          ],
        },
        { text: 'ok' },
      ]),
      model: 'm',
      tools: [read, write],
      maxToolCallsPerTurn: 1,
    });
    await agent.run('go').result;
    expect(ran).toEqual(['write:1']);
  });
});

describe('ToolPolicy.countsTowardTerminationVote', () => {
  function voter(name: string, advisory: boolean): AnyAgentTool {
    return defineTool({
      name,
      description: name,
      input: z.object({ vote: z.boolean() }),
      policy: { countsTowardTerminationVote: !advisory },
      execute: async ({ vote }) => ({
        content: [{ type: 'text', text: 'noted' }],
        terminate: vote,
      }),
    });
  }

  it.each([
    [
      'an advisory yes and a counted yes end the run',
      [
        ['advice', true],
        ['finish', true],
      ],
      'terminated',
    ],
    [
      'an advisory no does not keep a counted yes from ending it',
      [
        ['advice', false],
        ['finish', true],
      ],
      'terminated',
    ],
    [
      'an all-advisory batch never ends the run, whatever it votes',
      [
        ['advice', true],
        ['advice', true],
      ],
      'completed',
    ],
    [
      'a counted no keeps it going',
      [
        ['advice', true],
        ['finish', false],
      ],
      'completed',
    ],
  ] as const)('%s', async (_name, votes, stopReason) => {
    const agent = new Agent({
      provider: createScriptedProvider([
        { toolCalls: votes.map(([name, vote]) => ({ name, arguments: { vote } })) },
        { text: 'went on' },
      ]),
      model: 'm',
      tools: [voter('advice', true), voter('finish', false)],
    });
    expect((await agent.run('go').result).stopReason).toBe(stopReason);
  });
});

describe('executeTool', () => {
  const doubling = defineTool({
    name: 'double',
    description: 'doubles n',
    input: z.object({ n: z.number() }),
    // Models sometimes send numbers as strings: normalised before validation.
    prepareArguments: (raw) =>
      raw !== null && typeof raw === 'object' && typeof (raw as { n?: unknown }).n === 'string'
        ? { n: Number((raw as { n: string }).n) }
        : raw,
    execute: async ({ n }) => String(n * 2),
  });

  it('runs one call through prepare, validate, the gate, hooks and execute', async () => {
    expect(resultText(await executeTool(doubling, { n: '21' }))).toBe('42');
    expect(resultText(await executeTool(doubling, '{"n": 4}'))).toBe('8');
    const invalid = await executeTool(doubling, { n: 'x' });
    expect(invalid).toMatchObject({ isError: true, errorKind: 'invalid-args' });
    const malformed = await executeTool(doubling, '{"n": ');
    expect(malformed).toMatchObject({ isError: true, errorKind: 'invalid-args' });
    const denied = await executeTool(
      doubling,
      { n: 1 },
      { permissionGate: () => ({ behavior: 'deny', reason: 'not today' }) },
    );
    expect(denied).toMatchObject({ isError: true, errorKind: 'denied' });
    expect(resultText(denied)).toContain('not today');
    const replaced = await executeTool(
      doubling,
      { n: 1 },
      { hooks: { beforeToolExecution: () => ({ action: 'replace', args: { n: 50 } }) } },
    );
    expect(resultText(replaced)).toBe('100');
  });

  it('a timeout and an abort give the loop’s results', async () => {
    const slow = defineTool({
      name: 'slow',
      description: 'waits',
      input: z.object({}),
      execute: (_args, ctx) =>
        new Promise<string>((_resolve, reject) =>
          ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason)),
        ),
    });
    expect(await executeTool(slow, {}, { timeoutMs: 10 })).toMatchObject({ errorKind: 'timeout' });
    const controller = new AbortController();
    const pending = executeTool(slow, {}, { signal: controller.signal });
    controller.abort();
    expect(await pending).toMatchObject({ errorKind: 'cancelled' });
  });
});

describe('ToolPolicy.maxResultChars: Infinity', () => {
  it('an older result of such a tool is never clipped in what the model is sent', async () => {
    const big = 'x'.repeat(50_000);
    const whole = defineTool({
      name: 'whole',
      description: 'a big result never to clip',
      input: z.object({}),
      policy: { maxResultChars: Number.POSITIVE_INFINITY },
      execute: async () => big,
    });
    const clipped = defineTool({
      name: 'clipped',
      description: 'a big result',
      input: z.object({}),
      execute: async () => big,
    });
    const provider = createScriptedProvider([
      {
        toolCalls: [
          { name: 'whole', arguments: {} },
          { name: 'clipped', arguments: {} },
        ],
      },
      { toolCalls: [{ name: 'whole', arguments: {} }] },
      { text: 'done' },
    ]);
    const agent = new Agent({
      provider,
      model: 'm',
      tools: [whole, clipped],
      maxResultChars: 1_000,
    });
    await agent.run('go').result;
    // The third request carries the first batch's results as older ones.
    const third = provider.requests[2];
    const older = third?.messages.filter((message) => message.role === 'toolResult').slice(0, 2);
    expect(resultText(older?.[0] as never).length).toBe(50_000);
    expect(resultText(older?.[1] as never).length).toBeLessThan(2_000);
  });
});

describe('ToolPolicy.history', () => {
  it('older results: refetchable ones become a stub naming the call, summarised ones their summary; history stays whole', async () => {
    const page = 'p'.repeat(5_000);
    const fetcher = defineTool({
      name: 'fetch_page',
      description: 'fetches a page',
      input: z.object({ url: z.string() }),
      policy: { history: { refetchable: true } },
      execute: async () => page,
    });
    const lister = defineTool({
      name: 'list',
      description: 'lists',
      input: z.object({}),
      policy: {
        history: {
          summarise: (result) => `[${resultText(result).split('\n').length} lines listed]`,
        },
      },
      execute: async () => 'a\nb\nc',
    });
    const provider = createScriptedProvider([
      {
        toolCalls: [
          { name: 'fetch_page', arguments: { url: 'https://example.com/a' } },
          { name: 'list', arguments: {} },
        ],
      },
      { toolCalls: [{ name: 'list', arguments: {} }] },
      { text: 'done' },
    ]);
    const agent = new Agent({ provider, model: 'm', tools: [fetcher, lister] });
    await agent.run('go').result;
    // The second request still has the newest batch whole.
    const second = provider.requests[1]?.messages.filter(
      (message) => message.role === 'toolResult',
    );
    expect(resultText(second?.[0] as never)).toBe(page);
    // The third: the first batch is older now.
    const third = provider.requests[2]?.messages.filter((message) => message.role === 'toolResult');
    expect(resultText(third?.[0] as never)).toBe(
      '[Older result of fetch_page({"url":"https://example.com/a"}) left out to save context; call it again if you need it.]',
    );
    expect(resultText(third?.[1] as never)).toBe('[3 lines listed]');
    expect(resultText(third?.[2] as never)).toBe('a\nb\nc');
    // Stored history is whole.
    expect(resultText(toolResults([...agent.messages])[0])).toBe(page);
  });
});
