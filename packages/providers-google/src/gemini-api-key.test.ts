// An API key with a line break or control character in it: fetch's own error quoted the whole
// header value — the key — into the error event.
import { userMessage } from '@agent/core';
import {
  closeWireServers,
  collectEvents,
  fixtureReader,
  SSE_HEADERS,
  startWireServer,
  terminalEvent,
} from '@agent/tooling-wire-server';
import { afterEach, describe, expect, it } from 'vitest';
import { createGeminiProvider } from './gemini-provider.js';

const fixture = fixtureReader(new URL('./__fixtures__/', import.meta.url));
afterEach(closeWireServers);

const request = { model: 'gemini-2.5-flash', messages: [userMessage('hi')] };
const secret = 'AIzaSECRETSECRET';

describe('a Gemini API key that cannot go into a header', () => {
  it.each([
    ['a line break inside', `${secret}\nX-Injected: 1`],
    ['a carriage return inside', `${secret}\rmore`],
    ['a NUL byte', `${secret}\u0000x`],
  ])('%s: one error event, never the key', async (_name, apiKey) => {
    const server = await startWireServer([{ headers: SSE_HEADERS, body: fixture('text.sse') }]);
    const provider = createGeminiProvider({ apiKey, baseURL: server.url, maxRetries: 0 });
    const end = terminalEvent(await collectEvents(provider.stream(request)), { requireLast: true });
    if (end.type !== 'error') throw new Error(`expected error, got ${end.type}`);
    expect(end.error.message).toMatch(/API key from the apiKey option contains a line break/);
    expect(JSON.stringify(end)).not.toContain('SECRETSECRET');
    expect(server.requests).toHaveLength(0);
  });

  it('a trailing Windows line end is trimmed', async () => {
    const server = await startWireServer([{ headers: SSE_HEADERS, body: fixture('text.sse') }]);
    const provider = createGeminiProvider({ apiKey: `${secret}\r\n`, baseURL: server.url });
    expect(terminalEvent(await collectEvents(provider.stream(request))).type).toBe('done');
    expect(server.requests[0]?.headers['x-goog-api-key']).toBe(secret);
  });
});
