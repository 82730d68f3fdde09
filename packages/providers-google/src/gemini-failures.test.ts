import { Agent, defineTool, type StreamEvent, userMessage } from '@agent/core';
import {
  closeWireServers,
  collectEvents,
  fixtureReader,
  JSON_HEADERS,
  requestGapMs,
  SSE_HEADERS,
  startWireServer,
  terminalEvent,
  type WireServer,
} from '@agent/tooling-wire-server';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { createGeminiProvider } from './gemini-provider.js';

const fixture = fixtureReader(new URL('./__fixtures__/', import.meta.url));
const errorBody = (code: number, status: string, message: string, details?: unknown[]) =>
  JSON.stringify({ error: { code, message, status, ...(details ? { details } : {}) } });

let server: WireServer | undefined;
afterEach(closeWireServers);

const request = { model: 'gemini-2.5-flash', messages: [userMessage('hi')] };
const fast = { initialDelayMs: 5, maxBackoffMs: 20 };

describe('Gemini failures become events', () => {
  it('retries a 429 once after the retry-after delay', async () => {
    server = await startWireServer([
      {
        status: 429,
        headers: { ...JSON_HEADERS, 'retry-after': '1' },
        body: errorBody(429, 'RESOURCE_EXHAUSTED', 'Resource has been exhausted'),
      },
      { headers: SSE_HEADERS, body: fixture('text.sse') },
    ]);
    const provider = createGeminiProvider({ apiKey: 'k', baseURL: server.url });
    expect(terminalEvent(await collectEvents(provider.stream(request))).type).toBe('done');
    expect(server.requests).toHaveLength(2);
    const gap = requestGapMs(server);
    expect(gap).toBeGreaterThanOrEqual(950);
    expect(gap).toBeLessThan(9000);
  });

  it('honours RetryInfo in the error body when there is no header', async () => {
    server = await startWireServer([
      {
        status: 429,
        headers: JSON_HEADERS,
        body: errorBody(429, 'RESOURCE_EXHAUSTED', 'quota', [
          { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '0.3s' },
        ]),
      },
      { headers: SSE_HEADERS, body: fixture('text.sse') },
    ]);
    const provider = createGeminiProvider({
      apiKey: 'k',
      baseURL: server.url,
      retry: { initialDelayMs: 60_000 },
    });
    expect(terminalEvent(await collectEvents(provider.stream(request))).type).toBe('done');
    const gap = requestGapMs(server);
    expect(gap).toBeGreaterThanOrEqual(280);
    expect(gap).toBeLessThan(7500);
  });

  it.each([503, 500])('retries %i and then succeeds', async (status) => {
    server = await startWireServer([
      {
        status,
        headers: JSON_HEADERS,
        body: errorBody(status, 'UNAVAILABLE', 'The model is overloaded'),
      },
      {
        status,
        headers: JSON_HEADERS,
        body: errorBody(status, 'UNAVAILABLE', 'The model is overloaded'),
      },
      { headers: SSE_HEADERS, body: fixture('text.sse') },
    ]);
    const provider = createGeminiProvider({ apiKey: 'k', baseURL: server.url, retry: fast });
    expect(terminalEvent(await collectEvents(provider.stream(request))).type).toBe('done');
    expect(server.requests).toHaveLength(3);
  });

  it('gives up after maxRetries with a typed retryable error', async () => {
    server = await startWireServer([
      { status: 503, headers: JSON_HEADERS, body: errorBody(503, 'UNAVAILABLE', 'overloaded') },
    ]);
    const provider = createGeminiProvider({
      apiKey: 'k',
      baseURL: server.url,
      retry: fast,
      maxRetries: 1,
    });
    const end = terminalEvent(await collectEvents(provider.stream(request)));
    expect(server.requests).toHaveLength(2);
    expect(end).toMatchObject({
      type: 'error',
      error: { statusCode: 503, isRetryable: true, provider: 'google' },
    });
  });

  it('does not retry a 401 and reports the provider message', async () => {
    server = await startWireServer([
      {
        status: 401,
        headers: JSON_HEADERS,
        body: errorBody(401, 'UNAUTHENTICATED', 'API key not valid. Please pass a valid API key.'),
      },
    ]);
    const provider = createGeminiProvider({ apiKey: 'bad', baseURL: server.url, retry: fast });
    const end = terminalEvent(await collectEvents(provider.stream(request)));
    expect(server.requests).toHaveLength(1);
    if (end.type !== 'error') throw new Error('expected error');
    expect(end.error.statusCode).toBe(401);
    expect(end.error.isRetryable).toBe(false);
    expect(end.error.message).toBe(
      'Gemini API error 401 (UNAUTHENTICATED): API key not valid. Please pass a valid API key.',
    );
    expect(end.error.responseBody).toContain('UNAUTHENTICATED');
  });

  it('retries a connection reset before the first token', async () => {
    server = await startWireServer([
      { headers: SSE_HEADERS, body: fixture('text.sse'), cutAfterChunks: 0 },
      { headers: SSE_HEADERS, body: fixture('text.sse') },
    ]);
    const provider = createGeminiProvider({ apiKey: 'k', baseURL: server.url, retry: fast });
    const events = await collectEvents(provider.stream(request));
    expect(terminalEvent(events).type).toBe('done');
    expect(events.filter((event) => event.type === 'start')).toHaveLength(1);
    expect(server.requests).toHaveLength(2);
  });

  it('ends a stream cut after 3 deltas with one error event and runs no tool call', async () => {
    // Three text deltas and a function call, then the socket dies before finishReason.
    // A pause between chunks lets each one be read before the socket is destroyed.
    const chunks = [...fixture('text-then-call-cut.sse').slice(0, 4), ': padding\n\n'];
    server = await startWireServer([
      { headers: SSE_HEADERS, body: chunks, cutAfterChunks: 5, chunkDelayMs: 5 },
    ]);
    let executions = 0;
    const tool = defineTool({
      name: 'get_weather',
      description: 'Weather',
      input: z.object({ city: z.string() }),
      execute: async () => {
        executions++;
        return 'sunny';
      },
    });
    const provider = createGeminiProvider({ apiKey: 'k', baseURL: server.url, retry: fast });
    const events = await collectEvents(provider.stream(request));
    expect(events.filter((event) => event.type === 'text-delta')).toHaveLength(3);
    const end = terminalEvent(events);
    if (end.type !== 'error') throw new Error('expected error');
    expect(end.error.isRetryable).toBe(true);
    // The response had begun: the connection was lost, not refused.
    expect(end.error.message).toMatch(/^Gemini connection lost: /);
    expect(end.message.stopReason).toBe('error');
    expect(server.requests).toHaveLength(1);

    const agent = new Agent({ provider, model: 'gemini-2.5-flash', tools: [tool] });
    const result = await agent.run('weather?').result;
    expect(result.stopReason).toBe('error');
    expect(executions).toBe(0);
  });

  it('aborts mid-stream promptly, without retry, and closes the connection', async () => {
    server = await startWireServer([
      { headers: SSE_HEADERS, body: fixture('text.sse'), hangAfterChunks: 1 },
    ]);
    const provider = createGeminiProvider({ apiKey: 'k', baseURL: server.url });
    const controller = new AbortController();
    const closed = server.nextConnectionClose();
    const events: StreamEvent[] = [];
    let abortedAt = 0;
    for await (const event of provider.stream(request, { signal: controller.signal })) {
      events.push(event);
      if (event.type === 'text-delta') {
        abortedAt = performance.now();
        controller.abort();
      }
    }
    expect(performance.now() - abortedAt).toBeLessThan(2500);
    expect(terminalEvent(events)).toMatchObject({
      type: 'error',
      reason: 'aborted',
      message: { stopReason: 'aborted', content: [{ type: 'text', text: 'Hello' }] },
    });
    await closed;
    expect(server.closedConnections).toBeGreaterThanOrEqual(1);
    expect(server.requests).toHaveLength(1);
  });

  it('aborts during the retry wait without sending another request', async () => {
    server = await startWireServer([
      {
        status: 429,
        headers: { ...JSON_HEADERS, 'retry-after': '30' },
        body: errorBody(429, 'RESOURCE_EXHAUSTED', 'x'),
      },
    ]);
    const provider = createGeminiProvider({ apiKey: 'k', baseURL: server.url });
    const controller = new AbortController();
    const pending = collectEvents(provider.stream(request, { signal: controller.signal }));
    while (server.requests.length === 0) await new Promise((resolve) => setImmediate(resolve));
    const started = performance.now();
    controller.abort();
    const end = terminalEvent(await pending);
    expect(performance.now() - started).toBeLessThan(2500);
    expect(end).toMatchObject({ type: 'error', reason: 'aborted' });
    expect(server.requests).toHaveLength(1);
  });

  it('cancels the HTTP request when the consumer stops iterating', async () => {
    server = await startWireServer([
      { headers: SSE_HEADERS, body: fixture('text.sse'), hangAfterChunks: 1 },
    ]);
    const provider = createGeminiProvider({ apiKey: 'k', baseURL: server.url });
    const closed = server.nextConnectionClose();
    const seen: string[] = [];
    for await (const event of provider.stream(request)) {
      seen.push(event.type);
      if (event.type === 'text-delta') break;
    }
    await closed;
    expect(seen.at(-1)).toBe('text-delta');
    expect(server.requests).toHaveLength(1);
  });
});
