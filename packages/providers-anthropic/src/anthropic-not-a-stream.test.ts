// A 200 answer that is not an event stream: a proxy's or captive portal's HTML page, a server that
// ignores `stream: true` and sends one JSON document, a gateway's 200 carrying an error. It was read
// as an empty stream — "ended before message_stop (connection cut?)" — and what it said was lost.
import { userMessage } from '@agent/core';
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

const request = { model: 'claude-haiku-4-5', messages: [userMessage('hi')] };
const stream: WireResponse = { headers: SSE_HEADERS, body: fixture('text-cache.sse') };
const html = (body: string): WireResponse => ({
  headers: { 'content-type': 'text/html; charset=utf-8' },
  body,
});
const json = (value: unknown): WireResponse => ({
  headers: JSON_HEADERS,
  body: JSON.stringify(value),
});

describe('a 200 that is not an event stream (Anthropic)', () => {
  it.each([
    [
      'a login page',
      html('<html><head><style>p{}</style></head><body><p>Sign in to the Wi-Fi</p></body></html>'),
      /answered 200 with text\/html, not an event stream \(a proxy or login page\?\): Sign in to the Wi-Fi$/,
    ],
    [
      'one whole JSON message',
      json({ type: 'message', content: [{ type: 'text', text: 'hi' }] }),
      /answered 200 with application\/json, not an event stream \(does it support streamed answers\?\)/,
    ],
    [
      'a JSON error with no status',
      json({ type: 'error', error: { type: 'api_error', message: 'gateway says no' } }),
      /answered 200 with an error instead of an event stream: gateway says no$/,
    ],
  ])('%s: one error event saying what came', async (_name, answer, message) => {
    const server = await startWireServer([answer, stream]);
    const provider = createAnthropicProvider({
      apiKey: 'k',
      baseURL: server.url,
      retry: { initialDelayMs: 5 },
    });
    const end = terminalEvent(await collectEvents(provider.stream(request)), { requireLast: true });
    if (end.type !== 'error') throw new Error(`expected error, got ${end.type}`);
    expect(end.error.message).toMatch(message);
    expect(end.error.isRetryable).toBe(false);
    expect(server.requests).toHaveLength(1);
  });

  it('a JSON error carrying a 529 is retried, and the retry answers', async () => {
    const server = await startWireServer([
      json({ error: { message: 'Overloaded', code: 529 } }),
      stream,
    ]);
    const provider = createAnthropicProvider({
      apiKey: 'k',
      baseURL: server.url,
      retry: { initialDelayMs: 5 },
    });
    const end = terminalEvent(await collectEvents(provider.stream(request)), { requireLast: true });
    expect(end.type).toBe('done');
    expect(server.requests).toHaveLength(2);
  });

  it('a JSON error saying the prompt is too long is a context overflow', async () => {
    const server = await startWireServer([
      json({ error: { message: 'prompt is too long: 213462 tokens > 200000 maximum', code: 400 } }),
    ]);
    const provider = createAnthropicProvider({ apiKey: 'k', baseURL: server.url });
    const end = terminalEvent(await collectEvents(provider.stream(request)));
    expect(end).toMatchObject({ type: 'error', error: { contextOverflow: true, statusCode: 400 } });
  });
});
