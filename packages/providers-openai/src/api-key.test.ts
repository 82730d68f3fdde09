// An API key with a line break or control character in it: fetch's own error quoted the whole
// header value — "Bearer <the key>" — into the error event.
import type { ProviderRequest } from '@agent/core';
import { closeWireServers, startWireServer, terminalEvent } from '@agent/tooling-wire-server';
import { afterEach, describe, expect, it } from 'vitest';
import { collect, fixtureResponse, openaiAt } from './test-helpers.js';

afterEach(closeWireServers);

const request: ProviderRequest = {
  model: 'gpt-4o',
  messages: [{ role: 'user', content: 'hi', timestamp: 0 }],
};
const secret = 'sk-proj-SECRETSECRET';

describe.each(['chat', 'responses'] as const)(
  '%s: an API key that cannot go into a header',
  (api) => {
    it.each([
      ['a line break inside', `${secret}\nX-Injected: 1`],
      ['a carriage return inside', `${secret}\rmore`],
      ['a NUL byte', `${secret}\u0000x`],
    ])('%s: one error event, never the key', async (_name, apiKey) => {
      const server = await startWireServer([fixtureResponse(`${api}-final-text.sse`)]);
      const end = terminalEvent(
        await collect(openaiAt(server.url, { api, apiKey }).stream(request)),
        {
          requireLast: true,
        },
      );
      if (end.type !== 'error') throw new Error(`expected error, got ${end.type}`);
      expect(end.error.message).toMatch(/API key from the apiKey option contains a line break/);
      expect(JSON.stringify(end)).not.toContain('SECRETSECRET');
      expect(server.requests).toHaveLength(0);
    });

    it('a trailing Windows line end is trimmed', async () => {
      const server = await startWireServer([fixtureResponse(`${api}-final-text.sse`)]);
      const provider = openaiAt(server.url, { api, apiKey: `${secret}\r\n` });
      expect(terminalEvent(await collect(provider.stream(request))).type).toBe('done');
      expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${secret}`);
    });
  },
);
