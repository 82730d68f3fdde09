import { Agent, type Message, userMessage } from '@agent/core';
import {
  closeWireServers,
  JSON_HEADERS,
  SSE_HEADERS,
  sseEvents,
  startWireServer,
  terminalEvent,
  type WireResponse,
} from '@agent/tooling-wire-server';
import { afterEach, describe, expect, it } from 'vitest';
import type { OpenAIProviderOptions } from './openai-provider.js';
import { collect, fixtureResponse, openaiAt } from './test-helpers.js';

afterEach(closeWireServers);

const json = (status: number, body: unknown): WireResponse => ({
  status,
  headers: JSON_HEADERS,
  body: JSON.stringify(body),
});

/** A Responses API stream that fails with `error` after `response.created`. */
const failedResponse = (error: { code: string; message: string }): WireResponse => {
  const response = (status: string, extra: Record<string, unknown> = {}) => ({
    id: 'resp_overflow',
    object: 'response',
    created_at: 1,
    status,
    model: 'gpt-4o',
    output: [],
    ...extra,
  });
  return {
    headers: SSE_HEADERS,
    body: sseEvents([
      {
        event: 'response.created',
        data: { type: 'response.created', response: response('in_progress') },
      },
      {
        event: 'response.failed',
        data: { type: 'response.failed', response: response('failed', { error }) },
      },
    ]),
  };
};

/** Each server's refusal of a request larger than the window, as it sends it. */
const cases: Array<{
  name: string;
  options: OpenAIProviderOptions;
  refusal: WireResponse;
  answer: string;
}> = [
  {
    name: 'OpenAI Chat Completions: 400 context_length_exceeded',
    options: { api: 'chat' },
    refusal: json(400, {
      error: {
        message:
          "This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 tokens. Please reduce the length of the messages.",
        type: 'invalid_request_error',
        param: 'messages',
        code: 'context_length_exceeded',
      },
    }),
    answer: 'chat-final-text.sse',
  },
  {
    name: 'OpenAI Responses: 400 context_length_exceeded',
    options: { api: 'responses' },
    refusal: json(400, {
      error: {
        message:
          'Your input exceeds the context window of this model. Please adjust your input and try again.',
        type: 'invalid_request_error',
        param: 'input',
        code: 'context_length_exceeded',
      },
    }),
    answer: 'responses-final-text.sse',
  },
  {
    name: 'OpenAI Responses: response.failed with context_length_exceeded',
    options: { api: 'responses' },
    refusal: failedResponse({
      code: 'context_length_exceeded',
      message:
        'Your input exceeds the context window of this model. Please adjust your input and try again.',
    }),
    answer: 'responses-final-text.sse',
  },
  {
    name: 'vLLM: 400 BadRequestError',
    options: { api: 'chat', id: 'vllm' },
    refusal: json(400, {
      object: 'error',
      message:
        "This model's maximum context length is 4096 tokens. However, you requested 5120 tokens (4096 in the messages, 1024 in the completion). Please reduce the length of the messages or completion.",
      type: 'BadRequestError',
      param: null,
      code: 400,
    }),
    answer: 'chat-final-text.sse',
  },
  {
    name: 'llama.cpp: 400 exceed_context_size_error',
    options: { api: 'chat', id: 'llamacpp' },
    refusal: json(400, {
      error: {
        code: 400,
        message: 'the request exceeds the available context size, try increasing it',
        type: 'exceed_context_size_error',
        n_prompt_tokens: 5000,
        n_ctx: 4096,
      },
    }),
    answer: 'chat-final-text.sse',
  },
];

const earlier: Message[] = [
  userMessage('What is in src/a.ts?'),
  {
    role: 'assistant',
    content: [{ type: 'text', text: 'It exports the function a().' }],
    provider: 'openai',
    model: 'gpt-4o',
    usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15 },
    stopReason: 'stop',
    timestamp: 1,
  },
];

describe('context overflow from OpenAI and compatible servers', () => {
  it.each(cases)('$name: the agent compacts and sends the turn again', async (testCase) => {
    const server = await startWireServer([
      testCase.refusal,
      fixtureResponse(testCase.answer),
      fixtureResponse(testCase.answer),
    ]);
    const agent = new Agent({
      provider: openaiAt(server.url, { ...testCase.options, maxRetries: 0 }),
      model: 'gpt-4o',
      systemPrompt: 'You answer questions about code.',
      messages: earlier,
      compaction: { keepRecentTokens: 0 },
    });
    const result = await agent.run('And src/b.ts?').result;

    expect(result.stopReason).toBe('completed');
    expect(server.requests).toHaveLength(3);
    const summary = JSON.stringify(server.requests[1]?.json);
    expect(summary).toContain('working memory of an AI agent');
    expect(summary).toContain('User: What is in src/a.ts?');
    expect(summary).toContain('Assistant: It exports the function a().');
    expect((server.requests[1]?.json as { tools?: unknown } | undefined)?.tools ?? []).toEqual([]);
    const retried = JSON.stringify(server.requests[2]?.json);
    expect(retried).toContain(
      '<summary>\\nIn Paris it is 18°C and sunny; the local time is 14:05.\\n</summary>',
    );
    expect(retried).toContain('And src/b.ts?');
    expect(retried).not.toContain('It exports the function a().');
    expect(agent.messages.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
    ]);
    expect(agent.compactions).toHaveLength(1);
  });

  it.each(cases)('$name is a typed context overflow', async (testCase) => {
    const server = await startWireServer([testCase.refusal]);
    const events = await collect(
      openaiAt(server.url, { ...testCase.options, maxRetries: 0 }).stream({
        model: 'gpt-4o',
        messages: [userMessage('hi')],
      }),
    );
    const end = terminalEvent(events);
    expect(end.type === 'error' && end.error.contextOverflow).toBe(true);
  });

  it.each([
    [
      'a 429 over the tokens-per-minute limit',
      json(429, {
        error: {
          message:
            'Request too large for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Requested 50000.',
          type: 'tokens',
          param: null,
          code: 'rate_limit_exceeded',
        },
      }),
    ],
    [
      'a 400 about something else',
      json(400, {
        error: {
          message: "Invalid value for 'temperature'",
          type: 'invalid_request_error',
          param: 'temperature',
          code: null,
        },
      }),
    ],
  ])('%s is not', async (_name, refusal) => {
    const server = await startWireServer([refusal]);
    const events = await collect(
      openaiAt(server.url, { api: 'chat', maxRetries: 0 }).stream({
        model: 'gpt-4o',
        messages: [userMessage('hi')],
      }),
    );
    const end = terminalEvent(events);
    expect(end.type === 'error' && end.error.contextOverflow).toBe(false);
  });

  it('knows the window of OpenAI models, and not of unknown ones', () => {
    const provider = openaiAt('http://127.0.0.1:1');
    expect(provider.modelInfo?.('gpt-4o-2024-08-06')?.contextWindow).toBe(128_000);
    expect(provider.modelInfo?.('llama3.1:8b')).toBeUndefined();
  });
});
