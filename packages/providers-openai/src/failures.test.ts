import { Agent, type ProviderRequest, type StreamEvent } from '@agent/core';
import {
  closeWireServers,
  requestGapMs,
  SSE_HEADERS,
  startWireServer,
  terminalEvent,
  type WireServer,
} from '@agent/tooling-wire-server';
import { afterEach, describe, expect, it } from 'vitest';
import { createOpenAIProvider } from './openai-provider.js';
import { collect, errorResponse, fixtureResponse, openaiAt, weatherTools } from './test-helpers.js';

let server: WireServer | undefined;
afterEach(closeWireServers);

const request: ProviderRequest = {
  model: 'gpt-4o',
  messages: [{ role: 'user', content: 'hi', timestamp: 0 }],
};

describe('failures end in one error event', () => {
  it('429 with retry-after: 1 is retried once, after about a second', async () => {
    server = await startWireServer([
      errorResponse(429, 'Rate limit reached for gpt-4o', { 'retry-after': '1' }),
      fixtureResponse('chat-final-text.sse'),
    ]);
    const events = await collect(openaiAt(server.url, { api: 'chat' }).stream(request));
    expect(terminalEvent(events, { requireLast: true }).type).toBe('done');
    expect(server.requests).toHaveLength(2);
    const waited = requestGapMs(server);
    expect(waited).toBeGreaterThanOrEqual(950);
    expect(waited).toBeLessThan(8000);
    // Retries are invisible: one start, no error before the answer.
    expect(events.filter((event) => event.type === 'start')).toHaveLength(1);
  });

  it('503 is retried (with backoff) and the retry succeeds', async () => {
    server = await startWireServer([
      errorResponse(503, 'The server is overloaded'),
      fixtureResponse('responses-final-text.sse'),
    ]);
    const events = await collect(openaiAt(server.url, { api: 'responses' }).stream(request));
    expect(terminalEvent(events, { requireLast: true }).type).toBe('done');
    expect(server.requests).toHaveLength(2);
  });

  it('gives up after maxRetries with the last status', async () => {
    server = await startWireServer([errorResponse(500, 'Internal error')]);
    const event = terminalEvent(
      await collect(openaiAt(server.url, { api: 'chat', maxRetries: 2 }).stream(request)),
      { requireLast: true },
    );
    expect(server.requests).toHaveLength(3);
    expect(event.type === 'error' && event.error).toMatchObject({
      statusCode: 500,
      isRetryable: true,
      provider: 'openai',
    });
  });

  it('401 is not retried and says why', async () => {
    server = await startWireServer([
      errorResponse(
        401,
        'Incorrect API key provided: sk-test. You can find your API key at https://platform.openai.com/account/api-keys.',
      ),
    ]);
    const event = terminalEvent(
      await collect(openaiAt(server.url, { api: 'chat' }).stream(request)),
      { requireLast: true },
    );
    expect(server.requests).toHaveLength(1);
    expect(event.type).toBe('error');
    if (event.type !== 'error') return;
    expect(event.reason).toBe('error');
    expect(event.error.statusCode).toBe(401);
    expect(event.error.isRetryable).toBe(false);
    expect(event.error.message).toBe(
      'OpenAI API error 401: Incorrect API key provided: sk-test. You can find your API key at https://platform.openai.com/account/api-keys.',
    );
    expect(event.error.responseBody).toContain('invalid_request_error');
    expect(event.message.stopReason).toBe('error');
  });

  it('a missing API key for OpenAI is an error event, not a throw', async () => {
    const provider = createOpenAIProvider({ env: {} });
    const event = terminalEvent(await collect(provider.stream(request)), { requireLast: true });
    expect(event.type === 'error' && event.error.message).toMatch(/OPENAI_API_KEY/);
  });

  it('a connection reset before the first token is retried', async () => {
    server = await startWireServer([
      { ...fixtureResponse('chat-final-text.sse'), cutAfterChunks: 0 },
      fixtureResponse('chat-final-text.sse'),
    ]);
    const events = await collect(openaiAt(server.url, { api: 'chat' }).stream(request));
    expect(terminalEvent(events, { requireLast: true }).type).toBe('done');
    expect(server.requests).toHaveLength(2);
  });

  it('a stream cut after 3 deltas of a tool call ends in an error and the partial call never runs', async () => {
    const full = fixtureResponse('chat-tool-calls.sse');
    const chunks = full.body as string[];
    // role chunk, get_weather start, then 3 argument deltas; then the connection drops. (The
    // SSE comment gives the last delta time to leave before the socket is destroyed.)
    const body = [
      chunks[0],
      chunks[4],
      chunks[5],
      chunks[6],
      chunks[7],
      ': keep-alive\n\n',
      ...chunks.slice(8),
    ] as string[];
    server = await startWireServer([{ ...full, body, chunkDelayMs: 5, cutAfterChunks: 6 }]);
    const { tools, executed } = weatherTools();
    const seen: StreamEvent[] = [];
    const agent = new Agent({
      provider: openaiAt(server.url, { api: 'chat' }),
      model: 'gpt-4o',
      tools,
    });
    agent.subscribe((event) => {
      if (event.type === 'message-update') seen.push(event.event);
    });
    const result = await agent.run('Weather?').result;

    expect(seen.filter((event) => event.type === 'tool-call-delta')).toHaveLength(3);
    expect(result.stopReason).toBe('error');
    expect(result.error).toMatch(/connection lost mid-stream/);
    expect(executed).toEqual([]);
    expect(server.requests).toHaveLength(1); // tokens had arrived: no retry
    // The half-streamed call is not kept: no result answers it, nothing goes back next turn.
    expect(result.messages.some((message) => message.role === 'toolResult')).toBe(false);
  });

  it('a malformed chunk ends the stream with a non-retryable error', async () => {
    server = await startWireServer([
      {
        headers: SSE_HEADERS,
        body: [
          ...(fixtureResponse('chat-final-text.sse').body as string[]).slice(0, 2),
          'data: {"choices": [\n\n',
        ],
      },
    ]);
    const event = terminalEvent(
      await collect(openaiAt(server.url, { api: 'chat' }).stream(request)),
      { requireLast: true },
    );
    expect(event.type === 'error' && event.error).toMatchObject({ isRetryable: false });
    expect(event.type === 'error' && event.error.message).toMatch(/malformed/i);
    expect(event.type === 'error' && event.message.content).toEqual([
      { type: 'text', text: 'In Paris it is ' },
    ]);
    expect(server.requests).toHaveLength(1);
  });

  it('a chunk of the wrong shape is malformed, not a crash', async () => {
    server = await startWireServer([{ headers: SSE_HEADERS, body: ['data: {"choices": 42}\n\n'] }]);
    const event = terminalEvent(
      await collect(openaiAt(server.url, { api: 'chat' }).stream(request)),
      { requireLast: true },
    );
    expect(event.type === 'error' && event.error.message).toMatch(
      /Malformed Chat Completions chunk/,
    );
  });

  it('a stream that ends before finish_reason is an error', async () => {
    const chunks = fixtureResponse('chat-final-text.sse').body as string[];
    server = await startWireServer([{ headers: SSE_HEADERS, body: chunks.slice(0, 3) }]);
    const event = terminalEvent(
      await collect(openaiAt(server.url, { api: 'chat' }).stream(request)),
      { requireLast: true },
    );
    expect(event.type === 'error' && event.error.message).toMatch(
      /ended before the model finished/,
    );
  });

  it('a Responses stream error event becomes the error', async () => {
    server = await startWireServer([
      {
        headers: SSE_HEADERS,
        body: [
          'event: error\ndata: {"type":"error","code":"invalid_prompt","message":"Invalid prompt","param":null,"sequence_number":0}\n\n',
        ],
      },
    ]);
    const event = terminalEvent(
      await collect(openaiAt(server.url, { api: 'responses' }).stream(request)),
      { requireLast: true },
    );
    expect(event.type === 'error' && event.error.message).toMatch(/Invalid prompt/);
    expect(server.requests).toHaveLength(1);
  });

  it('abort mid-stream ends promptly with reason aborted and closes the connection', async () => {
    const chunks = fixtureResponse('chat-final-text.sse').body as string[];
    server = await startWireServer([{ headers: SSE_HEADERS, body: chunks, hangAfterChunks: 3 }]);
    const controller = new AbortController();
    const closed = server.nextConnectionClose();
    const events: StreamEvent[] = [];
    let abortedAt = 0;
    for await (const event of openaiAt(server.url, { api: 'chat' }).stream(request, {
      signal: controller.signal,
    })) {
      events.push(event);
      if (event.type === 'text-delta' && event.delta === '18°C and sunny; ') {
        abortedAt = performance.now();
        controller.abort();
      }
    }
    const elapsed = performance.now() - abortedAt;
    const event = terminalEvent(events, { requireLast: true });
    expect(event.type === 'error' && event.reason).toBe('aborted');
    expect(event.type === 'error' && event.message.stopReason).toBe('aborted');
    // Ended by the abort, not by the server (which never ends the stream).
    expect(elapsed).toBeLessThan(20_000);
    await closed;
    expect(server.closedConnections).toBeGreaterThanOrEqual(1);
    expect(server.requests).toHaveLength(1);
  });

  it('abort during a retry wait ends at once', async () => {
    server = await startWireServer([errorResponse(429, 'slow down', { 'retry-after': '30' })]);
    const controller = new AbortController();
    const started = performance.now();
    const pending = collect(
      openaiAt(server.url, { api: 'chat' }).stream(request, { signal: controller.signal }),
    );
    while (server.requests.length === 0) await new Promise((resolve) => setImmediate(resolve));
    controller.abort();
    const event = terminalEvent(await pending, { requireLast: true });
    expect(event.type === 'error' && event.reason).toBe('aborted');
    expect(performance.now() - started).toBeLessThan(10000);
    expect(server.requests).toHaveLength(1);
  });
});
