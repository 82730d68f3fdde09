// A 200 answer that is not an event stream: a proxy's HTML page, a server that ignores
// `stream: true` and sends one JSON completion, a gateway's 200 carrying an error. It was read as
// an empty stream, retried, and ended "before the model finished" — what it said was lost.
import type { ProviderRequest } from '@agent/core';
import {
  closeWireServers,
  JSON_HEADERS,
  startWireServer,
  terminalEvent,
  type WireResponse,
} from '@agent/tooling-wire-server';
import { afterEach, describe, expect, it } from 'vitest';
import { collect, fixtureResponse, openaiAt } from './test-helpers.js';

afterEach(closeWireServers);

const request: ProviderRequest = {
  model: 'gpt-4o',
  messages: [{ role: 'user', content: 'hi', timestamp: 0 }],
};
const json = (value: unknown): WireResponse => ({
  headers: JSON_HEADERS,
  body: JSON.stringify(value),
});
const completion = {
  id: 'x',
  object: 'chat.completion',
  choices: [{ index: 0, message: { role: 'assistant', content: 'whole' }, finish_reason: 'stop' }],
};

describe.each(['chat', 'responses'] as const)('%s: a 200 that is not an event stream', (api) => {
  const stream = () => fixtureResponse(`${api}-final-text.sse`);
  it.each([
    [
      'a proxy page',
      {
        headers: { 'content-type': 'text/html' },
        body: '<html><body><h1>Access denied</h1> by the proxy</body></html>',
      },
      /answered 200 with text\/html, not an event stream \(a proxy or login page\?\): Access denied by the proxy$/,
    ],
    [
      'one whole JSON completion',
      json(completion),
      /not an event stream \(does it support streamed answers\?\)/,
    ],
    [
      'a JSON error with no status',
      json({ error: { message: 'quota exceeded for this key' } }),
      /with an error instead of an event stream: quota exceeded for this key$/,
    ],
  ] as const)(
    '%s: one error event saying what came, not retried',
    async (_name, answer, message) => {
      const server = await startWireServer([answer as WireResponse, stream()]);
      const end = terminalEvent(await collect(openaiAt(server.url, { api }).stream(request)), {
        requireLast: true,
      });
      if (end.type !== 'error') throw new Error(`expected error, got ${end.type}`);
      expect(end.error.message).toMatch(message);
      expect(server.requests).toHaveLength(1);
    },
  );

  it('a JSON error carrying a 503 is retried, and the retry answers', async () => {
    const server = await startWireServer([
      json({ error: { message: 'busy', code: 503 } }),
      stream(),
    ]);
    const end = terminalEvent(await collect(openaiAt(server.url, { api }).stream(request)), {
      requireLast: true,
    });
    expect(end.type).toBe('done');
    expect(server.requests).toHaveLength(2);
  });
});
