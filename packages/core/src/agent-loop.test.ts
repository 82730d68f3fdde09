// How a run goes on and ends: termination, limits and queues, conversations, resuming, cut-off calls.
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { Agent } from './agent.js';
import type { AgentEvent } from './agent-events.js';
import { defineTool } from './define-tool.js';
import { ToolError } from './errors.js';
import type { Message } from './messages.js';
import { sequential } from './strategy.js';
import { createScriptedProvider } from './testing/scripted-provider.js';
import { agentWith, echo, resultText, runToEnd, toolResults } from './testing/test-helpers.js';

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

  it('answers calls a saved conversation left before a user message right after them, in every request', async () => {
    // Saved as `assistant (calls), user`: the next run adds the interrupted results after the
    // user message; a request with a result cut off from its call is refused by every provider.
    const saved: Message[] = [
      { role: 'user', content: 'go', timestamp: 1 },
      {
        role: 'assistant',
        content: [{ type: 'toolCall', id: 'lost-1', name: 'echo', arguments: '{"text":"a"}' }],
        provider: 'scripted',
        model: 'm',
        usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 },
        stopReason: 'toolUse',
        timestamp: 2,
      },
      { role: 'user', content: 'are you there?', timestamp: 3 },
    ];
    const provider = createScriptedProvider([
      { toolCalls: [{ name: 'echo', arguments: { text: 'b' } }] },
      { text: 'done' },
    ]);
    const agent = new Agent({ provider, model: 'm', tools: [echo], messages: saved });
    const result = await agent.run('and now?').result;
    expect(result.stopReason).toBe('completed');
    const shape = (messages: readonly Message[]) =>
      messages.map((m) => (m.role === 'toolResult' ? `result:${m.toolCallId}` : m.role));
    const [first, second] = provider.requests.map((request) => shape(request.messages));
    expect(first).toEqual(['user', 'assistant', 'result:lost-1', 'user', 'user']);
    // Once a newer answer follows, the older part of the request keeps that order too.
    expect(second?.slice(0, 5)).toEqual(['user', 'assistant', 'result:lost-1', 'user', 'user']);
    expect(second?.slice(5, 6)).toEqual(['assistant']);
    // Stored history keeps the order it was made in.
    expect(shape(agent.messages).slice(0, 4)).toEqual([
      'user',
      'assistant',
      'user',
      'result:lost-1',
    ]);
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
