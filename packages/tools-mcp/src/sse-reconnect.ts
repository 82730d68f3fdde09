/**
 * How soon an SSE stream the server closed is opened again. Both transports wait whatever the
 * server's `retry:` field says: the Streamable HTTP one starts counting attempts from zero after
 * every stream that ended cleanly, and the HTTP+SSE one (its `EventSource`) reconnects for ever,
 * so a server that sends `retry: 0` and closes each stream at once had the client reconnect
 * 500–600 times a second for ever (over half a core); a `retry` past 2^31 ms overflowed
 * `setTimeout`, which then fired after 1 ms.
 *
 * Streamable HTTP: the server's `retry` is kept (SEP-1699: the client must respect it; the
 * conformance suite checks 500 ms to within 50 ms) but held between 100 ms and 30 s, and past 5
 * reconnections within 10 s the wait doubles from 1 s (at most 30 s) until the streams last. The
 * HTTP+SSE stream opens at most once a second.
 */
import { abortableDelay } from '@agent/core';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';

/** Shortest wait before reconnecting a Streamable HTTP stream, in ms. */
export const minimumReconnectDelayMs = 100;
/** Longest wait before reconnecting a stream, in ms (the SDK's `maxReconnectionDelay`). */
export const maximumReconnectDelayMs = 30_000;
/** Shortest time between two opens of an HTTP+SSE event stream, in ms. */
export const legacyStreamSpacingMs = 1_000;
/** Reconnections within `burstWindowMs` made as the server asks; past them the wait doubles. */
const burstReconnects = 5;
const burstWindowMs = 10_000;

/**
 * Bounds the transport's reconnection delay (see above), whatever the server asks. The SDK
 * method is private in its types (hence the guard): an SDK that renames it leaves the bound off,
 * which `sse-reconnect.test.ts` catches.
 */
export function boundReconnectDelay(transport: StreamableHTTPClientTransport): void {
  const target = transport as unknown as {
    _getNextReconnectionDelay?: (attempt: number) => number;
  };
  const delayOf = target._getNextReconnectionDelay;
  if (typeof delayOf !== 'function') return;
  /** When each recent reconnection was scheduled (`performance.now()`), oldest first. */
  const recent: number[] = [];
  target._getNextReconnectionDelay = (attempt) => {
    const now = performance.now();
    while (recent.length > 0 && now - (recent[0] ?? now) > burstWindowMs) recent.shift();
    recent.push(now);
    const asked = Number(delayOf.call(transport, attempt));
    const delay = Number.isFinite(asked)
      ? Math.min(maximumReconnectDelayMs, Math.max(minimumReconnectDelayMs, asked))
      : maximumReconnectDelayMs;
    const excess = recent.length - burstReconnects;
    if (excess <= 0) return delay;
    return Math.max(delay, Math.min(maximumReconnectDelayMs, 1_000 * 2 ** (excess - 1)));
  };
}

/**
 * A fetch whose event-stream GETs (`Accept: text/event-stream`: the HTTP+SSE transport's stream;
 * not its POSTs, nor OAuth discovery) start at least `legacyStreamSpacingMs` apart; the first is
 * not delayed. An abort ends the wait.
 */
export function paceStreamOpens(inner: FetchLike): FetchLike {
  let next = Number.NEGATIVE_INFINITY;
  return async (url, init) => {
    if (
      (init?.method ?? 'GET').toUpperCase() === 'GET' &&
      new Headers(init?.headers).get('accept')?.includes('text/event-stream') === true
    ) {
      const now = performance.now();
      const wait = next - now;
      next = Math.max(now, next) + legacyStreamSpacingMs;
      if (wait > 0) await abortableDelay(wait, init?.signal ?? undefined);
    }
    return inner(url, init);
  };
}
