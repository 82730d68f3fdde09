// An API key with a line break or control character in it (a value copied with a Windows line end
// inside, a key pasted across two lines): fetch's own error quoted the whole header value — the
// key — into the error event, and from there the terminal, logs and the saved session.
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
import { createAnthropicProvider } from './anthropic-provider.js';

const fixture = fixtureReader(new URL('./__fixtures__/', import.meta.url));
afterEach(closeWireServers);

const request = { model: 'claude-haiku-4-5', messages: [userMessage('hi')] };
const secret = 'sk-ant-api03-SECRETSECRET';

describe('an API key that cannot go into a header', () => {
  it.each([
    ['a line break inside', `${secret}\nX-Injected: 1`],
    ['a carriage return inside', `${secret}\rmore`],
    ['a NUL byte', `${secret}\u0000`.padEnd(30, 'x')],
    ['a tab inside', `sk-ant\t${secret}`],
    ['DEL', `${secret}\u007fx`],
  ])('%s: one error event naming where it came from, never the key', async (_name, apiKey) => {
    const server = await startWireServer([
      { headers: SSE_HEADERS, body: fixture('text-cache.sse') },
    ]);
    const provider = createAnthropicProvider({ apiKey, baseURL: server.url, maxRetries: 0 });
    const end = terminalEvent(await collectEvents(provider.stream(request)), { requireLast: true });
    if (end.type !== 'error') throw new Error(`expected error, got ${end.type}`);
    expect(end.error.message).toMatch(
      /API key from the apiKey option contains a line break or another control character/,
    );
    expect(JSON.stringify(end)).not.toContain('SECRETSECRET');
    expect(server.requests).toHaveLength(0);
  });

  it('from the environment: the variable is named', async () => {
    const previous = process.env.ANTHROPIC_API_KEY;
    process.env.ANTHROPIC_API_KEY = `${secret}\r\nnext`;
    try {
      const provider = createAnthropicProvider({ baseURL: 'http://127.0.0.1:9', maxRetries: 0 });
      const end = terminalEvent(await collectEvents(provider.stream(request)));
      if (end.type !== 'error') throw new Error('expected error');
      expect(end.error.message).toMatch(/API key from ANTHROPIC_API_KEY contains a line break/);
      expect(end.error.message).not.toContain('SECRETSECRET');
    } finally {
      if (previous === undefined) delete process.env.ANTHROPIC_API_KEY;
      else process.env.ANTHROPIC_API_KEY = previous;
    }
  });

  it.each([
    ['a trailing Windows line end', `${secret}\r\n`],
    ['surrounding spaces', `  ${secret}  `],
  ])('%s is trimmed: the request goes out with the key alone', async (_name, apiKey) => {
    const server = await startWireServer([
      { headers: SSE_HEADERS, body: fixture('text-cache.sse') },
    ]);
    const provider = createAnthropicProvider({ apiKey, baseURL: server.url, maxRetries: 0 });
    expect(terminalEvent(await collectEvents(provider.stream(request))).type).toBe('done');
    // This SDK version sends the key as a bearer token.
    expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${secret}`);
  });
});
