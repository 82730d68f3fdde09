// A server that stops sending, on both APIs: before the headers, after them, before any content
// or mid-answer. The SDK's own timeout stops at the headers, so a stalled body hung forever.
import type { ProviderRequest } from '@agent/core';
import {
  closeWireServers,
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
const retry = { initialDelayMs: 5, maxBackoffMs: 20, idleTimeoutMs: 300 };
/** Where the retried answer must arrive: an idle timeout a loaded machine's healthy server meets. */
const retryAfterStall = { ...retry, idleTimeoutMs: 1_000 };
const never = new Promise<WireResponse>(() => undefined);

describe.each([
  // The API, its fixture, how many events come before the first content, and that content.
  { api: 'chat', fixture: 'chat-final-text.sse', beforeContent: 1, first: 'In Paris it is ' },
  {
    api: 'responses',
    fixture: 'responses-final-text.sse',
    beforeContent: 3,
    first: 'In Paris it is ',
  },
] as const)('a stalled $api stream', ({ api, fixture, beforeContent, first }) => {
  const answer = () => fixtureResponse(fixture);
  it.each([
    ['before the headers', () => never],
    ['after the headers', () => ({ ...answer(), hangAfterChunks: 0 })],
    ['before any content', () => ({ ...answer(), hangAfterChunks: beforeContent })],
  ] as const)('%s: the attempt is closed and retried', async (_when, stalled) => {
    const server = await startWireServer((_request, index) => (index === 0 ? stalled() : answer()));
    const closed = server.nextConnectionClose();
    const events = await collect(
      openaiAt(server.url, { api, retry: retryAfterStall }).stream(request),
    );
    expect(terminalEvent(events, { requireLast: true }).type).toBe('done');
    // The first attempt stalled and was retried. Exactly two on an idle machine; on a loaded one
    // the healthy answer can itself be slower than the idle timeout once (the property holds).
    expect(server.requests.length).toBeGreaterThanOrEqual(2);
    await closed;
  });

  it('mid-answer: one error event naming the stall, the partial text kept, no retry', async () => {
    const server = await startWireServer([{ ...answer(), hangAfterChunks: beforeContent + 1 }]);
    const events = await collect(openaiAt(server.url, { api, retry }).stream(request));
    const end = terminalEvent(events, { requireLast: true });
    if (end.type !== 'error') throw new Error(`expected error, got ${end.type}`);
    expect(end.reason).toBe('error');
    expect(end.error).toMatchObject({ isRetryable: true, provider: 'openai' });
    expect(end.error.message).toMatch(/nothing for 0\.3 s.*idle timeout/);
    expect(end.message.content).toEqual([{ type: 'text', text: first }]);
    expect(server.requests).toHaveLength(1);
  });

  it('an abort during a stall ends at once as aborted', async () => {
    const server = await startWireServer([{ ...answer(), hangAfterChunks: 0 }]);
    const controller = new AbortController();
    const provider = openaiAt(server.url, { api, retry: { ...retry, idleTimeoutMs: 60_000 } });
    const pending = collect(provider.stream(request, { signal: controller.signal }));
    while (server.requests.length === 0) await new Promise((resolve) => setImmediate(resolve));
    controller.abort();
    expect(terminalEvent(await pending)).toMatchObject({ type: 'error', reason: 'aborted' });
  });
});
