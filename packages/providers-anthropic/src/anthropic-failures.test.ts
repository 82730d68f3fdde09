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
import { createAnthropicProvider } from './anthropic-provider.js';

const fixture = fixtureReader(new URL('./__fixtures__/', import.meta.url));
const errorBody = (type: string, message: string) =>
  JSON.stringify({ type: 'error', error: { type, message } });

let server: WireServer | undefined;
afterEach(closeWireServers);

const request = { model: 'claude-haiku-4-5', messages: [userMessage('hi')] };
const fast = { initialDelayMs: 5, maxBackoffMs: 20 };

describe('Anthropic failures become events', () => {
  it('retries a 429 once after the retry-after delay', async () => {
    server = await startWireServer([
      {
        status: 429,
        headers: { ...JSON_HEADERS, 'retry-after': '1' },
        body: errorBody('rate_limit_error', 'slow down'),
      },
      { headers: SSE_HEADERS, body: fixture('text-cache.sse') },
    ]);
    const provider = createAnthropicProvider({ apiKey: 'k', baseURL: server.url });
    const events = await collectEvents(provider.stream(request));
    expect(terminalEvent(events).type).toBe('done');
    expect(server.requests).toHaveLength(2);
    const gap = requestGapMs(server);
    expect(gap).toBeGreaterThanOrEqual(950);
    expect(gap).toBeLessThan(9000);
  });

  it('ignores a non-numeric retry-after and uses backoff', async () => {
    server = await startWireServer([
      {
        status: 429,
        headers: { ...JSON_HEADERS, 'retry-after': 'soon' },
        body: errorBody('x', 'y'),
      },
      { headers: SSE_HEADERS, body: fixture('text-cache.sse') },
    ]);
    const provider = createAnthropicProvider({ apiKey: 'k', baseURL: server.url, retry: fast });
    const started = Date.now();
    expect(terminalEvent(await collectEvents(provider.stream(request))).type).toBe('done');
    // The backoff's delay, not a wait read from 'soon' (up to the 60 s cap).
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(server.requests).toHaveLength(2);
  });

  it.each([529, 503])('retries %i and then succeeds', async (status) => {
    server = await startWireServer([
      { status, headers: JSON_HEADERS, body: errorBody('overloaded_error', 'Overloaded') },
      { status, headers: JSON_HEADERS, body: errorBody('overloaded_error', 'Overloaded') },
      { headers: SSE_HEADERS, body: fixture('text-cache.sse') },
    ]);
    const provider = createAnthropicProvider({ apiKey: 'k', baseURL: server.url, retry: fast });
    const events = await collectEvents(provider.stream(request));
    expect(terminalEvent(events).type).toBe('done');
    expect(server.requests).toHaveLength(3);
  });

  it('gives up after maxRetries with a typed retryable error', async () => {
    server = await startWireServer([
      { status: 529, headers: JSON_HEADERS, body: errorBody('overloaded_error', 'Overloaded') },
    ]);
    const provider = createAnthropicProvider({
      apiKey: 'k',
      baseURL: server.url,
      retry: fast,
      maxRetries: 2,
    });
    const end = terminalEvent(await collectEvents(provider.stream(request)));
    expect(server.requests).toHaveLength(3);
    expect(end).toMatchObject({
      type: 'error',
      reason: 'error',
      error: { statusCode: 529, isRetryable: true, provider: 'anthropic' },
      message: { stopReason: 'error' },
    });
  });

  it('does not retry a 401 and reports the provider message', async () => {
    server = await startWireServer([
      {
        status: 401,
        headers: JSON_HEADERS,
        body: errorBody('authentication_error', 'invalid x-api-key'),
      },
    ]);
    const provider = createAnthropicProvider({ apiKey: 'bad', baseURL: server.url, retry: fast });
    const end = terminalEvent(await collectEvents(provider.stream(request)));
    expect(server.requests).toHaveLength(1);
    if (end.type !== 'error') throw new Error('expected error');
    expect(end.error.statusCode).toBe(401);
    expect(end.error.isRetryable).toBe(false);
    expect(end.error.message).toBe(
      'Anthropic API error 401 (authentication_error): invalid x-api-key',
    );
    expect(end.error.responseBody).toContain('invalid x-api-key');
  });

  it('retries a connection reset before the first token', async () => {
    server = await startWireServer([
      { headers: SSE_HEADERS, body: fixture('text-cache.sse'), cutAfterChunks: 0 },
      { headers: SSE_HEADERS, body: fixture('text-cache.sse') },
    ]);
    const provider = createAnthropicProvider({ apiKey: 'k', baseURL: server.url, retry: fast });
    const events = await collectEvents(provider.stream(request));
    expect(terminalEvent(events).type).toBe('done');
    expect(events.filter((event) => event.type === 'start')).toHaveLength(1);
    expect(server.requests).toHaveLength(2);
  });

  it('maps an overloaded error event inside the stream to 529', async () => {
    const chunks = fixture('text-cache.sse').slice(0, 1);
    chunks.push(`event: error\ndata: ${errorBody('overloaded_error', 'Overloaded')}\n\n`);
    server = await startWireServer([{ headers: SSE_HEADERS, body: chunks }]);
    const provider = createAnthropicProvider({
      apiKey: 'k',
      baseURL: server.url,
      retry: fast,
      maxRetries: 0,
    });
    const end = terminalEvent(await collectEvents(provider.stream(request)));
    expect(end).toMatchObject({ type: 'error', error: { statusCode: 529, isRetryable: true } });
  });

  it('ends a stream cut after 3 deltas with one error event and runs no partial tool call', async () => {
    server = await startWireServer([
      // A pause between chunks lets each delta be read before the socket is destroyed.
      {
        headers: SSE_HEADERS,
        body: fixture('tool-call-cut.sse'),
        cutAfterChunks: 6,
        chunkDelayMs: 5,
      },
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
    const provider = createAnthropicProvider({ apiKey: 'k', baseURL: server.url, retry: fast });
    const events = await collectEvents(provider.stream(request));
    expect(events.filter((event) => event.type === 'tool-call-delta')).toHaveLength(3);
    const end = terminalEvent(events);
    if (end.type !== 'error') throw new Error('expected error');
    expect(end.error.isRetryable).toBe(true);
    expect(end.message.content).toEqual([]);
    // No retry once content streamed.
    expect(server.requests).toHaveLength(1);

    const agent = new Agent({ provider, model: 'claude-haiku-4-5', tools: [tool] });
    const result = await agent.run('weather?').result;
    expect(result.stopReason).toBe('error');
    expect(executions).toBe(0);
  });

  it('aborts mid-stream promptly, without retry, and closes the connection', async () => {
    server = await startWireServer([
      { headers: SSE_HEADERS, body: fixture('text-cache.sse'), hangAfterChunks: 4 },
    ]);
    const provider = createAnthropicProvider({ apiKey: 'k', baseURL: server.url });
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
    const elapsed = performance.now() - abortedAt;
    // Ended by the abort, not by the server (which never ends the stream).
    expect(elapsed).toBeLessThan(20_000);
    const end = terminalEvent(events);
    expect(end).toMatchObject({
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
      { status: 429, headers: { ...JSON_HEADERS, 'retry-after': '30' }, body: errorBody('x', 'y') },
    ]);
    const provider = createAnthropicProvider({ apiKey: 'k', baseURL: server.url });
    const controller = new AbortController();
    const iterator = provider.stream(request, { signal: controller.signal });
    const pending = collectEvents(iterator);
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
      { headers: SSE_HEADERS, body: fixture('text-cache.sse'), hangAfterChunks: 4 },
    ]);
    const provider = createAnthropicProvider({ apiKey: 'k', baseURL: server.url });
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
