// A 200 answer that is not an event stream: a proxy's HTML page, one JSON document, a gateway's 200
// carrying an error. The SDK said "Incomplete JSON segment at the end" and what came was lost.
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
import { createGeminiProvider } from './gemini-provider.js';

const fixture = fixtureReader(new URL('./__fixtures__/', import.meta.url));
afterEach(closeWireServers);

const request = { model: 'gemini-2.5-flash', messages: [userMessage('hi')] };
const stream: WireResponse = { headers: SSE_HEADERS, body: fixture('text.sse') };
const json = (value: unknown): WireResponse => ({
  headers: JSON_HEADERS,
  body: JSON.stringify(value),
});

describe('a 200 that is not an event stream (Gemini)', () => {
  it.each([
    [
      'a proxy page',
      {
        headers: { 'content-type': 'text/html' },
        body: '<html><body>Blocked by policy</body></html>',
      },
      /answered 200 with text\/html, not an event stream \(a proxy or login page\?\): Blocked by policy$/,
    ],
    [
      'one whole JSON answer',
      json({ candidates: [{ content: { parts: [{ text: 'whole' }] }, finishReason: 'STOP' }] }),
      /not an event stream \(does it support streamed answers\?\)/,
    ],
    [
      'a JSON error with no status',
      json({ error: { message: 'API key expired' } }),
      /with an error instead of an event stream: API key expired$/,
    ],
  ] as const)('%s: one error event saying what came', async (_name, answer, message) => {
    const server = await startWireServer([answer as WireResponse, stream]);
    const provider = createGeminiProvider({
      apiKey: 'k',
      baseURL: server.url,
      retry: { initialDelayMs: 5 },
    });
    const end = terminalEvent(await collectEvents(provider.stream(request)), { requireLast: true });
    if (end.type !== 'error') throw new Error(`expected error, got ${end.type}`);
    expect(end.error.message).toMatch(message);
    expect(server.requests).toHaveLength(1);
  });

  it('a JSON error carrying a 503 is retried, and the retry answers', async () => {
    const server = await startWireServer([
      json({ error: { message: 'busy', code: 503, status: 'UNAVAILABLE' } }),
      stream,
    ]);
    const provider = createGeminiProvider({
      apiKey: 'k',
      baseURL: server.url,
      retry: { initialDelayMs: 5 },
    });
    const end = terminalEvent(await collectEvents(provider.stream(request)), { requireLast: true });
    expect(end.type).toBe('done');
    expect(server.requests).toHaveLength(2);
  });
});
