// Edge cases of the Messages API stream, retries and request building against a local wire server
// (~700 lines: the SSE builders and the one server are shared by every describe, one kind of case each).
import {
  Agent,
  type AssistantMessage,
  defineTool,
  type Message,
  type StreamEvent,
  type ToolResultMessage,
  userMessage,
} from '@agent/core';
import {
  closeWireServers,
  collectEvents,
  fixtureReader,
  JSON_HEADERS,
  requestGapMs,
  SSE_HEADERS,
  sseEvents,
  startWireServer,
  terminalEvent,
  type WireServer,
} from '@agent/tooling-wire-server';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { createAnthropicProvider } from './anthropic-provider.js';

const fixture = fixtureReader(new URL('./__fixtures__/', import.meta.url));
const errorBody = (type: string, message: string) =>
  JSON.stringify({ type: 'error', error: { type, message } });

let server: WireServer | undefined;
afterEach(closeWireServers);

const request = { model: 'claude-haiku-4-5', messages: [userMessage('hi')] };
const messageStart = {
  event: 'message_start',
  data: {
    type: 'message_start',
    message: {
      id: 'msg_edge',
      type: 'message',
      role: 'assistant',
      content: [],
      model: 'claude-haiku-4-5',
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 1 },
    },
  },
};

function toolUseStream(partialJson: readonly string[], stopReason: string): string[] {
  return sseEvents([
    messageStart,
    {
      event: 'content_block_start',
      data: {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'tool_use', id: 'toolu_cut', name: 'get_weather', input: {} },
      },
    },
    ...partialJson.map((part) => ({
      event: 'content_block_delta',
      data: {
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'input_json_delta', partial_json: part },
      },
    })),
    { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
    {
      event: 'message_delta',
      data: {
        type: 'message_delta',
        delta: { stop_reason: stopReason, stop_sequence: null },
        usage: { output_tokens: 16 },
      },
    },
    { event: 'message_stop', data: { type: 'message_stop' } },
  ]);
}

describe('Anthropic retry-after edge cases', () => {
  // random 0: the backoff is exactly half of initialDelayMs (150 ms), so an immediate retry shows.
  const backoff = { initialDelayMs: 300, maxBackoffMs: 300, random: () => 0 };

  it.each(['-1', '-30', '1 2', 'tomorrow 5', '12abc'])(
    'treats retry-after %j as absent and backs off instead of retrying at once',
    async (value) => {
      server = await startWireServer([
        {
          status: 429,
          headers: { ...JSON_HEADERS, 'retry-after': value },
          body: errorBody('x', 'y'),
        },
        { headers: SSE_HEADERS, body: fixture('text-cache.sse') },
      ]);
      const provider = createAnthropicProvider({
        apiKey: 'k',
        baseURL: server.url,
        retry: backoff,
      });
      expect(terminalEvent(await collectEvents(provider.stream(request))).type).toBe('done');
      expect(server.requests).toHaveLength(2);
      expect(requestGapMs(server)).toBeGreaterThanOrEqual(135);
      expect(requestGapMs(server)).toBeLessThan(5000);
    },
  );

  it('retries at once on retry-after 0', async () => {
    server = await startWireServer([
      { status: 429, headers: { ...JSON_HEADERS, 'retry-after': '0' }, body: errorBody('x', 'y') },
      { headers: SSE_HEADERS, body: fixture('text-cache.sse') },
    ]);
    const provider = createAnthropicProvider({
      apiKey: 'k',
      baseURL: server.url,
      retry: { initialDelayMs: 60_000, random: () => 0 },
    });
    expect(terminalEvent(await collectEvents(provider.stream(request))).type).toBe('done');
    expect(requestGapMs(server)).toBeLessThan(5000);
  });

  it('caps a huge retry-after and prefers retry-after-ms', async () => {
    server = await startWireServer([
      {
        status: 529,
        headers: { ...JSON_HEADERS, 'retry-after': '99999' },
        body: errorBody('x', 'y'),
      },
      {
        status: 503,
        headers: { ...JSON_HEADERS, 'retry-after-ms': '150', 'retry-after': '30' },
        body: errorBody('x', 'y'),
      },
      { headers: SSE_HEADERS, body: fixture('text-cache.sse') },
    ]);
    const provider = createAnthropicProvider({
      apiKey: 'k',
      baseURL: server.url,
      retry: { maxRetryAfterMs: 250, initialDelayMs: 60_000 },
    });
    expect(terminalEvent(await collectEvents(provider.stream(request))).type).toBe('done');
    expect(requestGapMs(server, 0)).toBeGreaterThanOrEqual(235);
    expect(requestGapMs(server, 0)).toBeLessThan(10000);
    expect(requestGapMs(server, 1)).toBeGreaterThanOrEqual(135);
    expect(requestGapMs(server, 1)).toBeLessThan(10000);
  });

  it('honours an HTTP-date retry-after', async () => {
    server = await startWireServer((_request, index) =>
      index === 0
        ? {
            status: 429,
            // Second resolution: the wait is between 1 and 2 s.
            headers: { ...JSON_HEADERS, 'retry-after': new Date(Date.now() + 2000).toUTCString() },
            body: errorBody('x', 'y'),
          }
        : { headers: SSE_HEADERS, body: fixture('text-cache.sse') },
    );
    const provider = createAnthropicProvider({
      apiKey: 'k',
      baseURL: server.url,
      retry: { initialDelayMs: 10, maxBackoffMs: 10 },
    });
    expect(terminalEvent(await collectEvents(provider.stream(request))).type).toBe('done');
    expect(requestGapMs(server)).toBeGreaterThanOrEqual(900);
    expect(requestGapMs(server)).toBeLessThan(13000);
  });
});

// Error events inside a 200 stream: the shared provider suite (anthropic-wire.test.ts).

describe('Anthropic abort edge cases', () => {
  it('sends nothing when the signal is already aborted', async () => {
    server = await startWireServer([{ headers: SSE_HEADERS, body: fixture('text-cache.sse') }]);
    const provider = createAnthropicProvider({ apiKey: 'k', baseURL: server.url });
    const events = await collectEvents(provider.stream(request, { signal: AbortSignal.abort() }));
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      type: 'error',
      reason: 'aborted',
      message: { stopReason: 'aborted', content: [] },
    });
    expect(server.requests).toHaveLength(0);
  });
});

describe('Anthropic max_tokens inside a tool_use block', () => {
  function weatherTool(executed: unknown[]) {
    return defineTool({
      name: 'get_weather',
      description: 'Weather',
      input: z.object({ city: z.string().optional() }),
      execute: async (args) => {
        executed.push(args);
        return 'sunny';
      },
    });
  }

  it('hands the partial input to the loop as raw text: invalid-args, never executed', async () => {
    server = await startWireServer([
      { headers: SSE_HEADERS, body: toolUseStream(['{"city": "Pa', 'ri'], 'max_tokens') },
      { headers: SSE_HEADERS, body: fixture('final-text.sse') },
    ]);
    const executed: unknown[] = [];
    const agent = new Agent({
      provider: createAnthropicProvider({ apiKey: 'k', baseURL: server.url }),
      model: 'claude-haiku-4-5',
      tools: [weatherTool(executed)],
    });
    const result = await agent.run('weather?').result;
    expect(executed).toEqual([]);
    const assistant = result.messages.find(
      (message): message is AssistantMessage => message.role === 'assistant',
    );
    expect(assistant?.stopReason).toBe('length');
    expect(assistant?.content).toEqual([
      { type: 'toolCall', id: 'toolu_cut', name: 'get_weather', arguments: '{"city": "Pari' },
    ]);
    const toolResult = result.messages.find(
      (message): message is ToolResultMessage => message.role === 'toolResult',
    );
    expect(toolResult).toMatchObject({ isError: true, errorKind: 'invalid-args' });
    // The next request replays the cut call (input {}) with its error result.
    const second = server.requests[1]?.json as { messages: Array<{ content: unknown[] }> };
    expect(second.messages[1]?.content).toEqual([
      { type: 'tool_use', id: 'toolu_cut', name: 'get_weather', input: {} },
    ]);
    expect(second.messages[2]?.content[0]).toMatchObject({
      type: 'tool_result',
      tool_use_id: 'toolu_cut',
      is_error: true,
    });
  });

  it('drops a tool call cut before any input arrived instead of running it with {}', async () => {
    server = await startWireServer([
      { headers: SSE_HEADERS, body: toolUseStream([], 'max_tokens') },
      { headers: SSE_HEADERS, body: fixture('final-text.sse') },
    ]);
    const executed: unknown[] = [];
    const provider = createAnthropicProvider({ apiKey: 'k', baseURL: server.url });
    const events = await collectEvents(provider.stream(request));
    expect(terminalEvent(events)).toMatchObject({
      type: 'done',
      message: { stopReason: 'length', content: [] },
    });
    const agent = new Agent({
      provider,
      model: 'claude-haiku-4-5',
      tools: [weatherTool(executed)],
    });
    await agent.run('weather?').result;
    expect(executed).toEqual([]);
  });

  it('still runs a parameterless call that ended normally (tool_use stop)', async () => {
    server = await startWireServer([
      { headers: SSE_HEADERS, body: toolUseStream([], 'tool_use') },
      { headers: SSE_HEADERS, body: fixture('final-text.sse') },
    ]);
    const executed: unknown[] = [];
    const agent = new Agent({
      provider: createAnthropicProvider({ apiKey: 'k', baseURL: server.url }),
      model: 'claude-haiku-4-5',
      tools: [weatherTool(executed)],
    });
    const result = await agent.run('weather?').result;
    expect(result.stopReason).toBe('completed');
    expect(executed).toEqual([{}]);
  });
});

describe('Anthropic request hygiene', () => {
  const assistant = (
    content: AssistantMessage['content'],
    stopReason: AssistantMessage['stopReason'],
  ): AssistantMessage => ({
    role: 'assistant',
    content,
    provider: 'anthropic',
    model: 'claude-haiku-4-5',
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 },
    stopReason,
    timestamp: 1,
  });

  it('never sends an empty or whitespace-only text block', () => {
    const provider = createAnthropicProvider({ apiKey: 'k', promptCaching: true });
    const history: Message[] = [
      userMessage('  \n'),
      userMessage([
        { type: 'text', text: ' ' },
        { type: 'text', text: 'look' },
        { type: 'image', data: 'AAAA', mimeType: 'image/png' },
      ]),
      // An aborted turn: whitespace text and an unsigned, cut-off thought.
      assistant(
        [
          { type: 'thinking', thinking: 'hmm' },
          { type: 'text', text: '\n\n' },
        ],
        'aborted',
      ),
      userMessage('go on'),
      assistant(
        [
          { type: 'text', text: ' ' },
          { type: 'toolCall', id: 'toolu_a', name: 'bash', arguments: '{}' },
        ],
        'toolUse',
      ),
      {
        role: 'toolResult',
        toolCallId: 'toolu_a',
        toolName: 'bash',
        content: [{ type: 'text', text: '\n' }],
        isError: false,
        timestamp: 2,
      },
    ];
    const params = provider.buildParams({ model: 'claude-haiku-4-5', messages: history });
    const texts: string[] = [];
    const visit = (value: unknown): void => {
      if (Array.isArray(value)) value.forEach(visit);
      else if (value !== null && typeof value === 'object') {
        const record = value as Record<string, unknown>;
        if (record.type === 'text') texts.push(String(record.text));
        Object.values(record).forEach(visit);
      }
    };
    visit(params.messages);
    expect(texts.length).toBeGreaterThan(0);
    expect(texts.filter((text) => text.trim() === '')).toEqual([]);
    expect(params.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user']);
    expect(params.messages[2]?.content).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 'toolu_a',
        content: [{ type: 'text', text: '(no output)' }],
        cache_control: { type: 'ephemeral' },
      },
    ]);
  });

  it('replays every signed thought across two tool rounds', () => {
    const provider = createAnthropicProvider({ apiKey: 'k' });
    const round = (n: number): Message[] => [
      assistant(
        [
          { type: 'thinking', thinking: `plan ${n}`, signature: `sig-${n}` },
          { type: 'thinking', thinking: '', signature: `redacted-${n}`, redacted: true },
          { type: 'toolCall', id: `toolu_${n}`, name: 'bash', arguments: `{"n":${n}}` },
        ],
        'toolUse',
      ),
      {
        role: 'toolResult',
        toolCallId: `toolu_${n}`,
        toolName: 'bash',
        content: [{ type: 'text', text: `out ${n}` }],
        isError: false,
        timestamp: 2,
      },
    ];
    const params = provider.buildParams({
      model: 'claude-haiku-4-5',
      messages: [userMessage('go'), ...round(1), ...round(2)],
      thinkingLevel: 'low',
    });
    expect(params.messages.map((message) => message.content)).toEqual([
      [{ type: 'text', text: 'go' }],
      [
        { type: 'thinking', thinking: 'plan 1', signature: 'sig-1' },
        { type: 'redacted_thinking', data: 'redacted-1' },
        { type: 'tool_use', id: 'toolu_1', name: 'bash', input: { n: 1 } },
      ],
      [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'out 1' }] }],
      [
        { type: 'thinking', thinking: 'plan 2', signature: 'sig-2' },
        { type: 'redacted_thinking', data: 'redacted-2' },
        { type: 'tool_use', id: 'toolu_2', name: 'bash', input: { n: 2 } },
      ],
      [{ type: 'tool_result', tool_use_id: 'toolu_2', content: [{ type: 'text', text: 'out 2' }] }],
    ]);
  });
});

describe('Anthropic thinking only where the API accepts it', () => {
  const tools = [{ name: 'bash', description: 'Run', parameters: { type: 'object' as const } }];
  const toolTurn = (content: AssistantMessage['content']): Message[] => [
    userMessage('go'),
    {
      role: 'assistant',
      content,
      provider: 'anthropic',
      model: 'claude-haiku-4-5',
      usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 },
      stopReason: 'toolUse',
      timestamp: 1,
    },
    {
      role: 'toolResult',
      toolCallId: 'toolu_1',
      toolName: 'bash',
      content: [{ type: 'text', text: 'ok' }],
      isError: false,
      timestamp: 2,
    },
  ];
  const call = { type: 'toolCall' as const, id: 'toolu_1', name: 'bash', arguments: '{}' };

  it.each([
    ['required', { type: 'any' }],
    [
      { type: 'tool', name: 'bash' },
      { type: 'tool', name: 'bash' },
    ],
  ] as const)('forced tool choice %j: sends the choice and no thinking', (choice, wire) => {
    const provider = createAnthropicProvider({ apiKey: 'k' });
    const params = provider.buildParams({
      model: 'claude-haiku-4-5',
      messages: [userMessage('go')],
      tools,
      toolChoice: choice,
      thinkingLevel: 'high',
      temperature: 0.1,
    });
    expect(params.tool_choice).toEqual(wire);
    expect(params.thinking).toBeUndefined();
    expect((params as { temperature?: number }).temperature).toBe(0.1);
  });

  it('keeps thinking when the continued tool turn starts with a signed thought', () => {
    const provider = createAnthropicProvider({ apiKey: 'k' });
    const params = provider.buildParams({
      model: 'claude-haiku-4-5',
      messages: toolTurn([{ type: 'thinking', thinking: 'hm', signature: 'sig' }, call]),
      tools,
      thinkingLevel: 'low',
    });
    expect(params.thinking).toEqual({ type: 'enabled', budget_tokens: 4096 });
  });

  it('drops thinking when the continued tool turn has no thought (another provider, or thinking was off)', () => {
    const provider = createAnthropicProvider({ apiKey: 'k' });
    for (const content of [
      [call],
      [{ type: 'thinking' as const, thinking: 'from elsewhere' }, call],
    ]) {
      const params = provider.buildParams({
        model: 'claude-haiku-4-5',
        messages: toolTurn(content),
        tools,
        thinkingLevel: 'low',
      });
      expect(params.thinking).toBeUndefined();
    }
    // Once that tool turn was answered, a new user turn needs no thought in the old one.
    const answer: AssistantMessage = {
      role: 'assistant',
      content: [{ type: 'text', text: 'Done.' }],
      provider: 'openai',
      model: 'gpt-5',
      usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 },
      stopReason: 'stop',
      timestamp: 3,
    };
    const params = provider.buildParams({
      model: 'claude-haiku-4-5',
      messages: [...toolTurn([call]), answer, userMessage('thanks')],
      tools,
      thinkingLevel: 'low',
    });
    expect(params.thinking).toBeDefined();
  });
});

describe('Anthropic stop reasons nobody documented', () => {
  it.each(['constructor', 'toString', '__proto__'])(
    'a stop reason named like an Object.prototype property (%s) ends as a plain stop',
    async (reason) => {
      server = await startWireServer([
        {
          headers: SSE_HEADERS,
          body: sseEvents([
            messageStart,
            {
              event: 'message_delta',
              data: {
                type: 'message_delta',
                delta: { stop_reason: reason, stop_sequence: null },
                usage: { output_tokens: 1 },
              },
            },
            { event: 'message_stop', data: { type: 'message_stop' } },
          ]),
        },
      ]);
      const provider = createAnthropicProvider({ apiKey: 'k', baseURL: server.url });
      const end = terminalEvent(await collectEvents(provider.stream(request)));
      expect(end).toMatchObject({ type: 'done', message: { stopReason: 'stop' } });
    },
  );
});

describe('Anthropic retries start clean', () => {
  it('forgets a refusal reported by a failed attempt that streamed no content', async () => {
    const empty = sseEvents([
      messageStart,
      {
        event: 'message_delta',
        data: {
          type: 'message_delta',
          delta: { stop_reason: 'refusal', stop_sequence: null },
          usage: { output_tokens: 1 },
        },
      },
    ]);
    server = await startWireServer([
      // Cut before message_stop, after the stop reason was read: retried (nothing streamed).
      {
        headers: SSE_HEADERS,
        body: [...empty, ': padding\n\n', ': padding\n\n'],
        cutAfterChunks: 3,
        chunkDelayMs: 5,
      },
      { headers: SSE_HEADERS, body: fixture('text-cache.sse') },
    ]);
    const provider = createAnthropicProvider({
      apiKey: 'k',
      baseURL: server.url,
      retry: { initialDelayMs: 5, maxBackoffMs: 20 },
    });
    const end = terminalEvent(await collectEvents(provider.stream(request)));
    expect(server.requests).toHaveLength(2);
    expect(end).toMatchObject({ type: 'done', message: { stopReason: 'stop' } });
  });
});

describe('Anthropic long streams', () => {
  it('assembles every block from hundreds of pieces, in order, and keeps multi-event chunks whole', async () => {
    const pieces = 300;
    const delta = (index: number, body: Record<string, string>) => ({
      event: 'content_block_delta',
      data: { type: 'content_block_delta', index, delta: body },
    });
    const stop = (index: number) => ({
      event: 'content_block_stop',
      data: { type: 'content_block_stop', index },
    });
    const thoughts = Array.from({ length: pieces }, (_, index) => `t${index} `);
    const words = Array.from({ length: pieces }, (_, index) => `w${index} `);
    // The input JSON arrives in small cuts, with an empty piece among them (sent by the API).
    const input = { items: Array.from({ length: pieces }, (_, index) => index) };
    const json = JSON.stringify(input);
    const cuts = Array.from({ length: Math.ceil(json.length / 4) }, (_, index) =>
      json.slice(index * 4, index * 4 + 4),
    );
    cuts.splice(1, 0, '');
    server = await startWireServer([
      {
        headers: SSE_HEADERS,
        body: sseEvents([
          messageStart,
          {
            event: 'content_block_start',
            data: {
              type: 'content_block_start',
              index: 0,
              content_block: { type: 'thinking', thinking: '', signature: '' },
            },
          },
          ...thoughts.map((thinking) => delta(0, { type: 'thinking_delta', thinking })),
          delta(0, { type: 'signature_delta', signature: 'sig-long' }),
          stop(0),
          {
            event: 'content_block_start',
            // A block that starts with text: one chunk, two events (text-start, text-delta).
            data: {
              type: 'content_block_start',
              index: 1,
              content_block: { type: 'text', text: 'Hi ' },
            },
          },
          ...words.map((text) => delta(1, { type: 'text_delta', text })),
          stop(1),
          {
            event: 'content_block_start',
            data: {
              type: 'content_block_start',
              index: 2,
              content_block: { type: 'tool_use', id: 'toolu_long', name: 'count', input: {} },
            },
          },
          ...cuts.map((partial_json) => delta(2, { type: 'input_json_delta', partial_json })),
          stop(2),
          {
            event: 'message_delta',
            data: {
              type: 'message_delta',
              delta: { stop_reason: 'tool_use', stop_sequence: null },
              usage: { output_tokens: 900 },
            },
          },
          { event: 'message_stop', data: { type: 'message_stop' } },
        ]),
      },
    ]);
    const provider = createAnthropicProvider({ apiKey: 'k', baseURL: server.url });
    const events = await collectEvents(provider.stream(request));

    const repeat = (type: StreamEvent['type'], count: number) =>
      Array.from({ length: count }, () => type);
    expect(events.map((event) => event.type)).toEqual([
      'start',
      'thinking-start',
      ...repeat('thinking-delta', pieces),
      'thinking-end',
      'text-start',
      ...repeat('text-delta', pieces + 1),
      'text-end',
      'tool-call-start',
      // The empty piece streams no delta.
      ...repeat('tool-call-delta', cuts.length - 1),
      'tool-call-end',
      'usage',
      'done',
    ]);
    const textStart = events.findIndex((event) => event.type === 'text-start');
    expect(events[textStart + 1]).toEqual({ type: 'text-delta', index: 1, delta: 'Hi ' });

    const streamed = (type: StreamEvent['type'], index: number) =>
      events
        .map((event) =>
          event.type === type && 'delta' in event && event.index === index ? event.delta : '',
        )
        .join('');
    expect(streamed('thinking-delta', 0)).toBe(thoughts.join(''));
    expect(streamed('text-delta', 1)).toBe(`Hi ${words.join('')}`);
    expect(streamed('tool-call-delta', 2)).toBe(json);
    expect(events.find((event) => event.type === 'thinking-end')).toEqual({
      type: 'thinking-end',
      index: 0,
      thinking: thoughts.join(''),
      signature: 'sig-long',
    });
    expect(events.find((event) => event.type === 'text-end')).toEqual({
      type: 'text-end',
      index: 1,
      text: `Hi ${words.join('')}`,
    });

    const end = terminalEvent(events);
    if (end.type !== 'done') throw new Error(`expected done, got ${end.type}`);
    expect(end.message.stopReason).toBe('toolUse');
    expect(end.message.content).toEqual([
      { type: 'thinking', thinking: thoughts.join(''), signature: 'sig-long' },
      { type: 'text', text: `Hi ${words.join('')}` },
      { type: 'toolCall', id: 'toolu_long', name: 'count', arguments: json },
    ]);
    expect(JSON.parse(json)).toEqual(input);
  });
});

describe('a server that does not speak the Messages stream', () => {
  it('an OpenAI-style stream (data lines, no events) is named as such, not as a cut connection', async () => {
    // ANTHROPIC_BASE_URL pointed at an OpenAI-compatible server: 200, chat.completion.chunk lines.
    const chunk = (content: string) =>
      `data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content } }] })}\n\n`;
    const openAiStream = {
      headers: SSE_HEADERS,
      body: [chunk('Hel'), chunk('lo'), 'data: [DONE]\n\n'],
    };
    server = await startWireServer([openAiStream, openAiStream]);
    const provider = createAnthropicProvider({
      apiKey: 'k',
      baseURL: server.url,
      maxRetries: 1,
      retry: { initialDelayMs: 5, maxBackoffMs: 20 },
    });
    const end = terminalEvent(await collectEvents(provider.stream(request)));
    expect(end.type).toBe('error');
    const message = end.type === 'error' ? end.error.message : '';
    expect(message).toContain('no Anthropic Messages events (no message_start)');
    expect(message).toContain('openai provider');
    expect(message).not.toContain('connection cut');
  });
});
