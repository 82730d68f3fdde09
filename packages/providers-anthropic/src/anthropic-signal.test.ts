import { getEventListeners } from 'node:events';
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
const request = { model: 'claude-haiku-4-5', messages: [userMessage('hi')] };

afterEach(closeWireServers);

describe('Anthropic streams on a long-lived signal', () => {
  it('leaves no abort listener behind after finished, failed and stopped streams', async () => {
    const error = JSON.stringify({ type: 'error', error: { type: 'api_error', message: 'x' } });
    const server = await startWireServer([
      { headers: SSE_HEADERS, body: fixture('text-cache.sse') },
      { headers: SSE_HEADERS, body: [`event: error\ndata: ${error}\n\n`] },
      { headers: SSE_HEADERS, body: fixture('text-cache.sse'), hangAfterChunks: 4 },
    ]);
    const provider = createAnthropicProvider({ apiKey: 'k', baseURL: server.url, maxRetries: 0 });
    const session = new AbortController();
    const signal = session.signal;

    const finished = await collectEvents(provider.stream(request, { signal }));
    expect(terminalEvent(finished).type).toBe('done');
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);

    const failed = terminalEvent(await collectEvents(provider.stream(request, { signal })));
    expect(failed).toMatchObject({ type: 'error', reason: 'error', error: { statusCode: 500 } });
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);

    const closed = server.nextConnectionClose();
    for await (const event of provider.stream(request, { signal })) {
      if (event.type === 'text-delta') {
        // Mid-stream the stream listens on the caller's signal (to abort the request).
        expect(getEventListeners(signal, 'abort')).toHaveLength(1);
        break;
      }
    }
    await closed;
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
    expect(signal.aborted).toBe(false);
  });
});
