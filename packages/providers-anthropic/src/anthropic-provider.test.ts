import { type Message, userMessage } from '@agent/core';
import {
  closeWireServers,
  collectEvents,
  fixtureReader,
  SSE_HEADERS,
  startWireServer,
  terminalEvent,
  type WireServer,
} from '@agent/tooling-wire-server';
import { afterEach, describe, expect, it } from 'vitest';
import { createAnthropicProvider } from './anthropic-provider.js';

const fixture = fixtureReader(new URL('./__fixtures__/', import.meta.url));

let server: WireServer | undefined;
afterEach(closeWireServers);

function body(index = 0): Record<string, unknown> {
  return server?.requests[index]?.json as Record<string, unknown>;
}

describe('createAnthropicProvider over the wire', () => {
  it('streams text and reports usage with cache tokens and cost', async () => {
    server = await startWireServer([{ headers: SSE_HEADERS, body: fixture('text-cache.sse') }]);
    const provider = createAnthropicProvider({
      apiKey: 'sk-test',
      baseURL: server.url,
      headers: { 'x-custom': 'yes' },
    });
    const events = await collectEvents(
      provider.stream({
        model: 'claude-haiku-4-5-20251001',
        systemPrompt: 'Be brief.',
        messages: [userMessage('Say hello')],
      }),
    );
    expect(events.map((event) => event.type)).toEqual([
      'start',
      'text-start',
      'text-delta',
      'text-delta',
      'text-delta',
      'text-end',
      'usage',
      'done',
    ]);
    const done = events.at(-1);
    if (done?.type !== 'done') throw new Error('expected done');
    expect(done.message.content).toEqual([{ type: 'text', text: 'Hello, world!' }]);
    expect(done.message.stopReason).toBe('stop');
    expect(done.message.provider).toBe('anthropic');
    expect(done.message.usage).toMatchObject({
      input: 12,
      output: 6,
      cacheRead: 2000,
      cacheWrite: 1000,
      totalTokens: 3018,
    });
    // Haiku 4.5: $1 in, $5 out, $0.10 cache read, $1.25 cache write per million.
    expect(done.message.usage.cost?.total).toBeCloseTo(
      (12 * 1 + 6 * 5 + 2000 * 0.1 + 1000 * 1.25) / 1e6,
      12,
    );
    const request = server.requests[0];
    expect(request?.url).toBe('/v1/messages');
    // This SDK version sends the key as a bearer token.
    expect(request?.headers.authorization).toBe('Bearer sk-test');
    expect(request?.headers['x-custom']).toBe('yes');
    expect(body()).toMatchObject({
      model: 'claude-haiku-4-5-20251001',
      stream: true,
      max_tokens: 64_000,
      system: [{ type: 'text', text: 'Be brief.' }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Say hello' }] }],
    });
  });

  it('keeps redacted thinking as a replayable block and maps max_tokens to length', async () => {
    server = await startWireServer([
      { headers: SSE_HEADERS, body: fixture('redacted-thinking.sse') },
    ]);
    const provider = createAnthropicProvider({ apiKey: 'k', baseURL: server.url });
    const events = await collectEvents(
      provider.stream({ model: 'claude-unknown-9', messages: [userMessage('hi')] }),
    );
    const end = events.find((event) => event.type === 'thinking-end');
    expect(end).toMatchObject({ redacted: true, signature: expect.stringMatching(/^EmwK/) });
    const done = events.at(-1);
    if (done?.type !== 'done') throw new Error('expected done');
    expect(done.message.stopReason).toBe('length');
    // Unknown model: works, no cost.
    expect(done.message.usage.cost).toBeUndefined();
    expect(body()).toMatchObject({ max_tokens: 8192 });

    // Replayed on the next turn as redacted_thinking with the same data.
    server.requests.length = 0;
    await collectEvents(
      provider.stream({
        model: 'claude-unknown-9',
        messages: [userMessage('hi'), done.message, userMessage('again')],
      }),
    );
    const messages = body().messages as Array<{ role: string; content: unknown[] }>;
    expect(messages[1]?.content[0]).toEqual({
      type: 'redacted_thinking',
      data: 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP',
    });
  });

  it('sends prompt caching marks, images, tool choice and the thinking budget', async () => {
    server = await startWireServer([{ headers: SSE_HEADERS, body: fixture('final-text.sse') }]);
    const provider = createAnthropicProvider({
      apiKey: 'k',
      baseURL: server.url,
      promptCaching: { ttl: '1h' },
      thinkingBudgets: { medium: 5000 },
    });
    const png = 'iVBORw0KGgo=';
    const history: Message[] = [
      userMessage([
        { type: 'text', text: 'What is in this picture?' },
        { type: 'image', data: png, mimeType: 'image/png' },
      ]),
      {
        role: 'assistant',
        content: [
          // With thinking on, the turn continued after tool results must start with its thought.
          { type: 'thinking', thinking: 'Take one.', signature: 'sig-1' },
          { type: 'toolCall', id: 'toolu_1', name: 'screenshot', arguments: '{bad json' },
        ],
        provider: 'anthropic',
        model: 'claude-haiku-4-5',
        usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 },
        stopReason: 'toolUse',
        timestamp: 1,
      },
      {
        role: 'toolResult',
        toolCallId: 'toolu_1',
        toolName: 'screenshot',
        content: [
          { type: 'text', text: 'captured' },
          { type: 'image', data: png, mimeType: 'image/png' },
        ],
        isError: false,
        timestamp: 2,
      },
    ];
    const events = await collectEvents(
      provider.stream({
        model: 'claude-haiku-4-5',
        systemPrompt: 'sys',
        messages: history,
        tools: [
          { name: 'a', description: 'A', parameters: { type: 'object', properties: {} } },
          { name: 'screenshot', description: 'B', parameters: { type: 'object' } },
        ],
        toolChoice: 'none',
        thinkingLevel: 'medium',
        maxOutputTokens: 2000,
        temperature: 0.2,
      }),
    );
    expect(events.at(-1)?.type).toBe('done');
    const sent = body();
    const cache = { type: 'ephemeral', ttl: '1h' };
    expect(sent.system).toEqual([{ type: 'text', text: 'sys', cache_control: cache }]);
    const tools = sent.tools as Array<Record<string, unknown>>;
    expect(tools[0]?.cache_control).toBeUndefined();
    expect(tools[1]?.cache_control).toEqual(cache);
    expect(sent.tool_choice).toEqual({ type: 'none' });
    expect(sent.thinking).toEqual({ type: 'enabled', budget_tokens: 5000 });
    expect(sent.max_tokens).toBe(7000);
    // Temperature is dropped while thinking (the API rejects it).
    expect(sent.temperature).toBeUndefined();
    const messages = sent.messages as Array<{
      role: string;
      content: Array<Record<string, unknown>>;
    }>;
    expect(messages[0]?.content[1]).toEqual({
      type: 'image',
      source: { type: 'base64', media_type: 'image/png', data: png },
    });
    // Malformed arguments replay as {} rather than failing the request.
    expect(messages[1]?.content[1]).toEqual({
      type: 'tool_use',
      id: 'toolu_1',
      name: 'screenshot',
      input: {},
    });
    expect(messages[2]?.content[0]).toEqual({
      type: 'tool_result',
      tool_use_id: 'toolu_1',
      content: [
        { type: 'text', text: 'captured' },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } },
      ],
      cache_control: cache,
    });
  });

  it('turns a malformed chunk into one error event', async () => {
    const chunks = fixture('text-cache.sse');
    chunks.splice(3, 0, 'event: content_block_delta\ndata: {"type":"content_block_delta",\n\n');
    server = await startWireServer([{ headers: SSE_HEADERS, body: chunks }]);
    const provider = createAnthropicProvider({ apiKey: 'k', baseURL: server.url });
    const events = await collectEvents(
      provider.stream({ model: 'claude-haiku-4-5', messages: [userMessage('hi')] }),
    );
    expect(terminalEvent(events)).toMatchObject({
      type: 'error',
      reason: 'error',
      error: { isRetryable: false, message: expect.stringContaining('malformed') },
    });
  });

  it('ends with an error event, without throwing, when no API key is configured', async () => {
    const previous = process.env.ANTHROPIC_API_KEY;
    delete process.env.ANTHROPIC_API_KEY;
    try {
      const provider = createAnthropicProvider({ baseURL: 'http://127.0.0.1:9' });
      const events = await collectEvents(
        provider.stream({ model: 'claude-haiku-4-5', messages: [userMessage('hi')] }),
      );
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({
        type: 'error',
        error: { statusCode: 401, message: expect.stringContaining('ANTHROPIC_API_KEY') },
      });
    } finally {
      if (previous !== undefined) process.env.ANTHROPIC_API_KEY = previous;
    }
  });
});
