// A server that stops sending: before the headers, after them, or mid-answer. The SDK's own
// timeout stops at the headers, so without an idle timeout a stalled body hung the run forever.
import { userMessage } from '@agent/core';
import {
  closeWireServers,
  collectEvents,
  fixtureReader,
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
const retry = { initialDelayMs: 5, maxBackoffMs: 20, idleTimeoutMs: 300 };
/** Where the retried answer must arrive: an idle timeout a loaded machine's healthy server meets. */
const retryAfterStall = { ...retry, idleTimeoutMs: 1_000 };
const never = new Promise<WireResponse>(() => undefined);
const answer: WireResponse = { headers: SSE_HEADERS, body: fixture('text.sse') };

describe('a stalled Gemini stream', () => {
  it.each([
    ['before the headers', () => never],
    ['after the headers', () => ({ ...answer, hangAfterChunks: 0 })],
  ] as const)('%s: the attempt is closed and retried', async (_when, stalled) => {
    const server = await startWireServer((_request, index) => (index === 0 ? stalled() : answer));
    const closed = server.nextConnectionClose();
    const provider = createGeminiProvider({
      apiKey: 'k',
      baseURL: server.url,
      retry: retryAfterStall,
    });
    const events = await collectEvents(provider.stream(request));
    expect(terminalEvent(events, { requireLast: true }).type).toBe('done');
    // The first attempt stalled and was retried. Exactly two on an idle machine; on a loaded one
    // the healthy answer can itself be slower than the idle timeout once (the property holds).
    expect(server.requests.length).toBeGreaterThanOrEqual(2);
    await closed;
  });

  it('every attempt stalls: the retries each open a request, then the stall error', async () => {
    const server = await startWireServer([{ ...answer, hangAfterChunks: 0 }]);
    const provider = createGeminiProvider({
      apiKey: 'k',
      baseURL: server.url,
      retry,
      maxRetries: 2,
    });
    const end = terminalEvent(await collectEvents(provider.stream(request)));
    expect(end).toMatchObject({ type: 'error', reason: 'error' });
    if (end.type !== 'error') throw new Error('expected error');
    expect(end.error.message).toMatch(/nothing for 0\.3 s.*idle timeout/);
    expect(server.requests).toHaveLength(3);
  });

  it('mid-answer: one error event naming the stall, the partial text kept, no retry', async () => {
    const server = await startWireServer([{ ...answer, hangAfterChunks: 1 }]);
    const provider = createGeminiProvider({ apiKey: 'k', baseURL: server.url, retry });
    const end = terminalEvent(await collectEvents(provider.stream(request)), { requireLast: true });
    expect(end).toMatchObject({
      type: 'error',
      reason: 'error',
      error: { isRetryable: true, provider: 'google' },
      message: { stopReason: 'error', content: [{ type: 'text', text: 'Hello' }] },
    });
    expect(server.requests).toHaveLength(1);
  });

  it('an abort during a stall ends at once as aborted', async () => {
    const server = await startWireServer([{ ...answer, hangAfterChunks: 0 }]);
    const provider = createGeminiProvider({
      apiKey: 'k',
      baseURL: server.url,
      retry: { ...retry, idleTimeoutMs: 60_000 },
    });
    const controller = new AbortController();
    const pending = collectEvents(provider.stream(request, { signal: controller.signal }));
    while (server.requests.length === 0) await new Promise((resolve) => setImmediate(resolve));
    controller.abort();
    expect(terminalEvent(await pending)).toMatchObject({ type: 'error', reason: 'aborted' });
  });
});
