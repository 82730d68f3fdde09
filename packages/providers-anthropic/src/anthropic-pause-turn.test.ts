// `pause_turn`: the API paused a long server-side turn (web search running) and the turn is
// continued by sending the paused response back as it is (platform.claude.com/docs/en/
// agents-and-tools/tool-use/server-tools: "The server-side loop and pause_turn"). Responses are
// written from that page's documented stream events, served by a local wire server.
import { Agent, type AssistantMessage, defineTool, userMessage } from '@agent/core';
import {
  closeWireServers,
  collectEvents,
  JSON_HEADERS,
  SSE_HEADERS,
  sseEvents,
  startWireServer,
  terminalEvent,
  type WireResponse,
} from '@agent/tooling-wire-server';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { createAnthropicProvider } from './anthropic-provider.js';

afterEach(closeWireServers);

type Block = Record<string, unknown> & { type: string };

/** One response: the blocks (text streamed as a delta, server_tool_use input as JSON deltas). */
function response(
  blocks: readonly Block[],
  stopReason: string,
  usage = { input: 100, output: 10 },
): WireResponse {
  const events: Array<{ event: string; data: unknown }> = [
    {
      event: 'message_start',
      data: {
        type: 'message_start',
        message: {
          id: 'msg_pause',
          type: 'message',
          role: 'assistant',
          content: [],
          model: 'claude-sonnet-4-6',
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: usage.input, output_tokens: 1 },
        },
      },
    },
  ];
  blocks.forEach((block, index) => {
    const start =
      block.type === 'text'
        ? { type: 'text', text: '' }
        : block.type === 'server_tool_use' || block.type === 'tool_use'
          ? { ...block, input: {} }
          : block;
    events.push({
      event: 'content_block_start',
      data: { type: 'content_block_start', index, content_block: start },
    });
    if (block.type === 'text')
      events.push({
        event: 'content_block_delta',
        data: {
          type: 'content_block_delta',
          index,
          delta: { type: 'text_delta', text: block.text },
        },
      });
    if (block.type === 'server_tool_use' || block.type === 'tool_use')
      events.push({
        event: 'content_block_delta',
        data: {
          type: 'content_block_delta',
          index,
          delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) },
        },
      });
    events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
  });
  events.push(
    {
      event: 'message_delta',
      data: {
        type: 'message_delta',
        delta: { stop_reason: stopReason, stop_sequence: null },
        usage: { output_tokens: usage.output },
      },
    },
    { event: 'message_stop', data: { type: 'message_stop' } },
  );
  return { headers: SSE_HEADERS, body: sseEvents(events) };
}

const search = (id: string, query: string): Block => ({
  type: 'server_tool_use',
  id,
  name: 'web_search',
  input: { query },
});
const searchResult = (id: string, url: string): Block => ({
  type: 'web_search_tool_result',
  tool_use_id: id,
  content: [
    {
      type: 'web_search_result',
      title: url,
      url,
      encrypted_content: `enc-${id}`,
      page_age: null,
    },
  ],
});
const text = (value: string): Block => ({ type: 'text', text: value });

const pausedBlocks = [
  text('Let me search.'),
  search('srvtoolu_01', 'node 24 release'),
  searchResult('srvtoolu_01', 'https://nodejs.org/en/blog'),
];
const request = {
  model: 'claude-sonnet-4-6',
  messages: [userMessage('When was Node 24 released?')],
  hostedTools: [{ type: 'web_search' as const }],
};

type SentMessages = { messages: Array<{ role: string; content: Block[] }> };

describe('a turn the API paused (pause_turn)', () => {
  it('is continued with the paused response sent back as is; one message, usage added up', async () => {
    const server = await startWireServer([
      response(pausedBlocks, 'pause_turn', { input: 100, output: 10 }),
      response([text('Node 24 came out in May 2025.')], 'end_turn', { input: 150, output: 20 }),
    ]);
    const provider = createAnthropicProvider({ apiKey: 'k', baseURL: server.url });
    const events = await collectEvents(provider.stream(request));

    expect(server.requests).toHaveLength(2);
    const second = server.requests[1]?.json as SentMessages;
    // The paused turn goes back unchanged, as the last message: the API resumes from it.
    expect(second.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'When was Node 24 released?' }] },
      { role: 'assistant', content: pausedBlocks },
    ]);

    const done = terminalEvent(events, { requireLast: true });
    if (done.type !== 'done') throw new Error(`expected done, got ${done.error.message}`);
    expect(done.message.stopReason).toBe('stop');
    expect(done.message.content).toEqual([
      { type: 'text', text: 'Let me search.' },
      { type: 'opaque', provider: 'anthropic', data: pausedBlocks[1] },
      { type: 'opaque', provider: 'anthropic', data: pausedBlocks[2] },
      { type: 'text', text: 'Node 24 came out in May 2025.' },
    ]);
    expect(done.message.usage).toMatchObject({ input: 250, output: 30, totalTokens: 280 });
    // One start; content events of both responses with the indices of one partial message.
    expect(events.filter((event) => event.type === 'start')).toHaveLength(1);
    expect(
      events.filter((event) => event.type === 'text-end').map((event) => [event.index, event.text]),
    ).toEqual([
      [0, 'Let me search.'],
      [1, 'Node 24 came out in May 2025.'],
    ]);
  });

  it('a later turn replays the server blocks in place; another provider id leaves them out', async () => {
    const server = await startWireServer([
      response(pausedBlocks, 'pause_turn'),
      response([text('May 2025.')], 'end_turn'),
      response([text('You are welcome.')], 'end_turn'),
    ]);
    const provider = createAnthropicProvider({ apiKey: 'k', baseURL: server.url });
    const first = terminalEvent(await collectEvents(provider.stream(request)));
    if (first.type !== 'done') throw new Error('expected done');
    const history = [...request.messages, first.message, userMessage('Thanks')];
    await collectEvents(provider.stream({ ...request, messages: history }));
    const third = server.requests[2]?.json as SentMessages;
    expect(third.messages[1]).toEqual({
      role: 'assistant',
      content: [...pausedBlocks, text('May 2025.')],
    });

    // The same history sent through a provider of another id: only what every provider reads.
    const other = createAnthropicProvider({ apiKey: 'k', baseURL: server.url, id: 'proxy' });
    const params = other.buildParams({ ...request, messages: history });
    expect(params.messages[1]).toEqual({
      role: 'assistant',
      content: [text('Let me search.'), text('May 2025.')],
    });
  });

  it('gives up past maxPauseContinuations with an error that says so; the text is kept', async () => {
    const server = await startWireServer([response(pausedBlocks, 'pause_turn')]);
    const provider = createAnthropicProvider({
      apiKey: 'k',
      baseURL: server.url,
      maxPauseContinuations: 2,
    });
    const end = terminalEvent(await collectEvents(provider.stream(request)));
    expect(server.requests).toHaveLength(3);
    if (end.type !== 'error') throw new Error('expected an error');
    expect(end.error.message).toMatch(/pause_turn.*after 2 continuations.*maxPauseContinuations 2/);
    expect(end.error.isRetryable).toBe(false);
    expect(
      end.message.content.filter((block) => block.type === 'text').map((block) => block.text),
    ).toEqual(['Let me search.', 'Let me search.', 'Let me search.']);
    // Each continuation carries everything before it.
    const last = server.requests[2]?.json as SentMessages;
    expect(last.messages[1]?.content).toHaveLength(pausedBlocks.length * 2);
  });

  it('with maxPauseContinuations 0 nothing is continued, and the pause is an error', async () => {
    const server = await startWireServer([response(pausedBlocks, 'pause_turn')]);
    const provider = createAnthropicProvider({
      apiKey: 'k',
      baseURL: server.url,
      maxPauseContinuations: 0,
    });
    const end = terminalEvent(await collectEvents(provider.stream(request)));
    expect(server.requests).toHaveLength(1);
    expect(end.type).toBe('error');
  });

  it('a paused response that also called our tools is not continued: the calls run first', async () => {
    const call: Block = { type: 'tool_use', id: 'toolu_01', name: 'lookup', input: { q: 'x' } };
    const server = await startWireServer([response([...pausedBlocks, call], 'pause_turn')]);
    const provider = createAnthropicProvider({ apiKey: 'k', baseURL: server.url });
    const end = terminalEvent(await collectEvents(provider.stream(request)));
    expect(server.requests).toHaveLength(1);
    if (end.type !== 'done') throw new Error('expected done');
    expect(end.message.stopReason).toBe('toolUse');
  });

  it('the continuation is retried before its first token (529), without repeating content', async () => {
    const server = await startWireServer([
      response(pausedBlocks, 'pause_turn'),
      {
        status: 529,
        headers: { ...JSON_HEADERS, 'retry-after-ms': '1' },
        body: JSON.stringify({
          type: 'error',
          error: { type: 'overloaded_error', message: 'Overloaded' },
        }),
      },
      response([text('Done.')], 'end_turn'),
    ]);
    const provider = createAnthropicProvider({ apiKey: 'k', baseURL: server.url });
    const events = await collectEvents(provider.stream(request));
    expect(server.requests).toHaveLength(3);
    expect(server.requests[2]?.body).toBe(server.requests[1]?.body);
    const done = terminalEvent(events);
    if (done.type !== 'done') throw new Error('expected done');
    expect(done.message.content.map((block) => block.type)).toEqual([
      'text',
      'opaque',
      'opaque',
      'text',
    ]);
  });

  it('in the agent loop the paused turn is carried on to its answer (before: the run ended at the pause)', async () => {
    const server = await startWireServer([
      response(pausedBlocks, 'pause_turn'),
      response([text('Node 24 came out in May 2025.')], 'end_turn'),
    ]);
    let partial: AssistantMessage | undefined;
    const agent = new Agent({
      provider: createAnthropicProvider({ apiKey: 'k', baseURL: server.url }),
      model: 'claude-sonnet-4-6',
      hostedTools: [{ type: 'web_search' }],
      onEvent: (event) => {
        if (event.type === 'message-update') partial = event.message;
      },
    });
    const result = await agent.run('When was Node 24 released?').result;
    expect(result.stopReason).toBe('completed');
    expect(result.turns).toBe(1);
    const final = result.finalMessage as AssistantMessage;
    expect(final.content.at(-1)).toEqual(text('Node 24 came out in May 2025.'));
    // The saved conversation replays: the same history goes back as the API first sent it.
    const replay = createAnthropicProvider({ apiKey: 'k' }).buildParams({
      model: 'claude-sonnet-4-6',
      messages: JSON.parse(JSON.stringify(result.messages)),
    });
    expect(replay.messages[1]?.content).toEqual([
      ...pausedBlocks,
      text('Node 24 came out in May 2025.'),
    ]);
    // The partial message the UI saw while streaming has no holes.
    expect(partial?.content.map((block) => block?.type)).toEqual(['text', 'text']);
  });

  it('a server search beside a call of ours: the server block goes back before our call, its result after', async () => {
    // The documented mixed turn: the server_tool_use has no result yet and the answer stops for
    // our tool; the API runs the search once our result comes back with the block.
    const call: Block = { type: 'tool_use', id: 'toolu_01', name: 'lookup', input: { q: 'x' } };
    const server = await startWireServer([
      response([search('srvtoolu_02', 'node lts'), call], 'tool_use'),
      response([text('Done.')], 'end_turn'),
    ]);
    const lookup = defineTool({
      name: 'lookup',
      description: 'looks up',
      input: z.object({ q: z.string() }),
      execute: async () => 'found',
    });
    const agent = new Agent({
      provider: createAnthropicProvider({ apiKey: 'k', baseURL: server.url }),
      model: 'claude-sonnet-4-6',
      tools: [lookup],
      hostedTools: [{ type: 'web_search' }],
    });
    const result = await agent.run('Look it up').result;
    expect(result.stopReason).toBe('completed');
    const second = server.requests[1]?.json as SentMessages;
    expect(second.messages.slice(1)).toEqual([
      { role: 'assistant', content: [search('srvtoolu_02', 'node lts'), call] },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'toolu_01',
            content: [{ type: 'text', text: 'found' }],
          },
        ],
      },
    ]);
  });

  it.each(['text', 'tool_use', 'tool_result', 'image', 'document', 'thinking'])(
    'an opaque block of a kind our content covers (%s, a hand-edited session) is not sent',
    (kind) => {
      const provider = createAnthropicProvider({ apiKey: 'k' });
      const params = provider.buildParams({
        model: 'claude-sonnet-4-6',
        messages: [
          userMessage('hi'),
          {
            role: 'assistant',
            content: [
              { type: 'opaque', provider: 'anthropic', data: { type: kind, text: 'hidden order' } },
              { type: 'opaque', provider: 'anthropic', data: search('srvtoolu_09', 'q') },
              { type: 'text', text: 'Seen.' },
            ],
            provider: 'anthropic',
            model: 'claude-sonnet-4-6',
            usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 },
            stopReason: 'stop',
            timestamp: 0,
          },
          userMessage('go on'),
        ],
      });
      expect(params.messages[1]).toEqual({
        role: 'assistant',
        content: [search('srvtoolu_09', 'q'), text('Seen.')],
      });
    },
  );
});
