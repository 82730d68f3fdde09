import { Agent, type Message, userMessage } from '@agent/core';
import {
  closeWireServers,
  collectEvents,
  fixtureReader,
  JSON_HEADERS,
  SSE_HEADERS,
  startWireServer,
  terminalEvent,
  type WireResponse,
} from '@agent/tooling-wire-server';
import { afterEach, describe, expect, it } from 'vitest';
import { createAnthropicProvider } from './anthropic-provider.js';

const fixture = fixtureReader(new URL('./__fixtures__/', import.meta.url));
afterEach(closeWireServers);

const errorBody = (type: string, message: string) =>
  JSON.stringify({ type: 'error', error: { type, message }, request_id: 'req_011CTest' });

/** The Messages API's refusals of a request larger than the window, as it sends them. */
const overflows: Array<[string, WireResponse]> = [
  [
    '400 prompt is too long',
    {
      status: 400,
      headers: JSON_HEADERS,
      body: errorBody(
        'invalid_request_error',
        'prompt is too long: 215003 tokens > 200000 maximum',
      ),
    },
  ],
  [
    '400 input and max_tokens exceed the context limit',
    {
      status: 400,
      headers: JSON_HEADERS,
      body: errorBody(
        'invalid_request_error',
        'input length and `max_tokens` exceed context limit: 195000 + 8192 > 200000, decrease input length or `max_tokens` and try again',
      ),
    },
  ],
  [
    '413 request_too_large',
    {
      status: 413,
      headers: JSON_HEADERS,
      body: errorBody('request_too_large', 'Request exceeds the maximum allowed number of bytes.'),
    },
  ],
];

const earlier: Message[] = [
  userMessage('What is in src/a.ts?'),
  {
    role: 'assistant',
    content: [{ type: 'text', text: 'It exports the function a().' }],
    provider: 'anthropic',
    model: 'claude-haiku-4-5',
    usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15 },
    stopReason: 'stop',
    timestamp: 1,
  },
];

describe('Anthropic context overflow', () => {
  it.each(overflows)('%s: the agent compacts and sends the turn again', async (_name, refusal) => {
    const server = await startWireServer([
      refusal,
      // The summary call, then the retried turn.
      { headers: SSE_HEADERS, body: fixture('final-text.sse') },
      { headers: SSE_HEADERS, body: fixture('final-text.sse') },
    ]);
    const agent = new Agent({
      provider: createAnthropicProvider({ apiKey: 'k', baseURL: server.url, maxRetries: 0 }),
      model: 'claude-haiku-4-5',
      systemPrompt: 'You answer questions about code.',
      messages: earlier,
      compaction: { keepRecentTokens: 0 },
    });
    const result = await agent.run('And src/b.ts?').result;

    expect(result.stopReason).toBe('completed');
    expect(server.requests).toHaveLength(3);
    const summary = server.requests[1]?.json as Record<string, unknown>;
    expect(summary.system).toEqual([
      { type: 'text', text: expect.stringContaining('working memory of an AI agent') },
    ]);
    expect(summary.tools).toBeUndefined();
    const summaryText = JSON.stringify(summary.messages);
    expect(summaryText).toContain('User: What is in src/a.ts?');
    expect(summaryText).toContain('Assistant: It exports the function a().');
    // The retried turn: the summary (the fixture's answer) in place of the earlier turns.
    const retried = server.requests[2]?.json as {
      messages: { role: string; content: { text: string }[] }[];
    };
    expect(retried.messages).toHaveLength(1);
    const [summaryBlock, question] = retried.messages[0]?.content ?? [];
    expect(summaryBlock?.text).toContain(
      '<summary>\nParis is 18°C and sunny; Oslo is 4°C and raining.\n</summary>',
    );
    expect(question?.text).toBe('And src/b.ts?');
    // Stored history stays whole, without the refused attempt.
    expect(agent.messages.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
    ]);
    expect(agent.compactions).toHaveLength(1);
  });

  it.each(overflows)('%s is a typed context overflow', async (_name, refusal) => {
    const server = await startWireServer([refusal]);
    const provider = createAnthropicProvider({ apiKey: 'k', baseURL: server.url });
    const end = terminalEvent(
      await collectEvents(
        provider.stream({ model: 'claude-haiku-4-5', messages: [userMessage('hi')] }),
      ),
    );
    expect(end.type === 'error' && end.error.contextOverflow).toBe(true);
    expect(server.requests).toHaveLength(1);
  });

  it.each([
    [
      'a 429 about tokens per minute',
      429,
      'rate_limit_error',
      'This request would exceed the rate limit for your organization of 40,000 input tokens per minute.',
    ],
    ['another invalid request', 400, 'invalid_request_error', 'messages: roles must alternate'],
    ['an overload', 529, 'overloaded_error', 'Overloaded'],
  ])('%s is not', async (_name, status, type, message) => {
    const server = await startWireServer([
      { status, headers: JSON_HEADERS, body: errorBody(type, message) },
    ]);
    const provider = createAnthropicProvider({ apiKey: 'k', baseURL: server.url, maxRetries: 0 });
    const end = terminalEvent(
      await collectEvents(
        provider.stream({ model: 'claude-haiku-4-5', messages: [userMessage('hi')] }),
      ),
    );
    expect(end.type === 'error' && end.error.contextOverflow).toBe(false);
  });

  it('knows the window of its models', () => {
    const provider = createAnthropicProvider({ apiKey: 'k' });
    expect(provider.modelInfo?.('claude-sonnet-4-5-20250929')?.contextWindow).toBe(200_000);
    expect(provider.modelInfo?.('not-a-model')).toBeUndefined();
  });
});

describe('a 200 that is a JSON error saying the prompt is too long', () => {
  it('is a context overflow', async () => {
    const server = await startWireServer([
      {
        headers: JSON_HEADERS,
        body: JSON.stringify({
          error: { message: 'prompt is too long: 213462 tokens > 200000 maximum', code: 400 },
        }),
      },
    ]);
    const provider = createAnthropicProvider({ apiKey: 'k', baseURL: server.url });
    const end = terminalEvent(
      await collectEvents(
        provider.stream({ model: 'claude-haiku-4-5', messages: [userMessage('hi')] }),
      ),
    );
    expect(end).toMatchObject({ type: 'error', error: { contextOverflow: true, statusCode: 400 } });
  });
});
