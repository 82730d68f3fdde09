// The provider suite's failure cases (see provider-suite.ts): HTTP errors retried or not, a
// connection reset or refused, an abort mid-stream or mid-wait, a consumer that stops reading.
// Imports vitest: for test files only.
import { once } from 'node:events';
import { type AddressInfo, createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { requestGapMs, startWireServer, terminalEvent, type WireResponse } from './index.js';
import type {
  ProviderWireProfile,
  SuiteEvent,
  SuiteProviderOptions,
  Terminal,
} from './provider-suite.js';

/** What the failure cases use of the suite's per-profile helpers. */
export interface FailureContext {
  run(
    options: Omit<SuiteProviderOptions, 'apiKey'> & { apiKey?: string | undefined },
    signal?: AbortSignal,
  ): Promise<SuiteEvent[]>;
  stream(
    options: Omit<SuiteProviderOptions, 'apiKey'>,
    signal?: AbortSignal,
  ): AsyncIterable<SuiteEvent>;
  answer(extra?: Partial<WireResponse>): WireResponse;
  settled(events: SuiteEvent[]): Terminal;
  failure(events: SuiteEvent[]): Required<Terminal>;
}

const fast = { initialDelayMs: 5, maxBackoffMs: 20 };

/** Resolves when the server received its first request. */
function firstRequest(): { arrived: () => void; requested: Promise<void> } {
  let arrived = (): void => undefined;
  const requested = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  return { arrived, requested };
}

/** The failure cases against `profile`. */
export function describeFailureCases(profile: ProviderWireProfile, context: FailureContext): void {
  const { run, stream, answer, settled, failure } = context;

  describe(`${profile.name}: failures`, () => {
    it('a 429 with retry-after: 1 is retried once, after the delay; retries are invisible', async () => {
      const server = await startWireServer([
        profile.httpError(429, 'slow down', { 'retry-after': '1' }),
        answer(),
      ]);
      const events = await run({ url: server.url });
      expect(settled(events).type).toBe('done');
      expect(server.requests).toHaveLength(2);
      expect(requestGapMs(server)).toBeGreaterThanOrEqual(950);
      expect(events.filter((event) => event.type === 'start')).toHaveLength(1);
    });

    it('a retry-after that is not a number is ignored: backoff instead', async () => {
      const server = await startWireServer([
        profile.httpError(429, 'slow down', { 'retry-after': 'soon' }),
        answer(),
      ]);
      expect(settled(await run({ url: server.url, retry: fast })).type).toBe('done');
      expect(server.requests).toHaveLength(2);
    });

    it.each([profile.busyCode, 503, 500])(
      'a %i is retried, and the retry answers',
      async (status) => {
        const server = await startWireServer([
          profile.httpError(status, 'overloaded'),
          profile.httpError(status, 'overloaded'),
          answer(),
        ]);
        expect(settled(await run({ url: server.url, retry: fast })).type).toBe('done');
        expect(server.requests).toHaveLength(3);
      },
    );

    it('gives up after maxRetries with a typed retryable error', async () => {
      const server = await startWireServer([profile.httpError(503, 'overloaded')]);
      const end = failure(await run({ url: server.url, retry: fast, maxRetries: 2 }));
      expect(server.requests).toHaveLength(3);
      expect(end.error).toMatchObject({
        statusCode: 503,
        isRetryable: true,
        provider: profile.providerId,
      });
      expect(end.message.stopReason).toBe('error');
    });

    it.each([401, 400, 404])(
      'a %i is not retried, and says what the server said',
      async (status) => {
        const server = await startWireServer([profile.httpError(status, 'the server says no')]);
        const end = failure(await run({ url: server.url, retry: fast }));
        expect(server.requests).toHaveLength(1);
        expect(end.error).toMatchObject({ statusCode: status, isRetryable: false });
        expect(end.error.message).toContain('the server says no');
        expect((end.error as { responseBody?: string }).responseBody).toContain(
          'the server says no',
        );
      },
    );

    it('a connection reset before the first token is retried, one start', async () => {
      const server = await startWireServer([answer({ cutAfterChunks: 0 }), answer()]);
      const events = await run({ url: server.url, retry: fast });
      expect(settled(events).type).toBe('done');
      expect(events.filter((event) => event.type === 'start')).toHaveLength(1);
      expect(server.requests).toHaveLength(2);
    });

    it('a refused connection names its cause', async () => {
      const closed = createServer();
      closed.listen(0, '127.0.0.1');
      await once(closed, 'listening');
      const { port } = closed.address() as AddressInfo;
      await new Promise<void>((resolve) => closed.close(() => resolve()));
      const end = failure(await run({ url: `http://127.0.0.1:${port}`, maxRetries: 0 }));
      expect(end.error.message).toContain(`ECONNREFUSED 127.0.0.1:${port}`);
    });

    it('an abort mid-stream ends it as aborted, the text kept, the connection closed', async () => {
      const server = await startWireServer([
        answer({ hangAfterChunks: profile.beforeContent + 1 }),
      ]);
      const closed = server.nextConnectionClose();
      const controller = new AbortController();
      const events: SuiteEvent[] = [];
      for await (const event of stream({ url: server.url }, controller.signal)) {
        events.push(event);
        if (event.type === 'text-delta') controller.abort();
      }
      expect(terminalEvent(events as Array<{ type: 'done' | 'error' }>)).toMatchObject({
        type: 'error',
        reason: 'aborted',
        message: { stopReason: 'aborted', content: [{ type: 'text', text: profile.firstText }] },
      });
      await closed;
      expect(server.requests).toHaveLength(1);
    });

    it('an abort during the retry wait sends no other request', async () => {
      const { arrived, requested } = firstRequest();
      const server = await startWireServer(() => {
        arrived();
        return profile.httpError(429, 'slow down', { 'retry-after': '30' });
      });
      const controller = new AbortController();
      const pending = run({ url: server.url }, controller.signal);
      await requested;
      controller.abort();
      expect(terminalEvent(await pending)).toMatchObject({ type: 'error', reason: 'aborted' });
      expect(server.requests).toHaveLength(1);
    });

    it('a consumer that stops reading closes the request', async () => {
      const server = await startWireServer([
        answer({ hangAfterChunks: profile.beforeContent + 1 }),
      ]);
      const closed = server.nextConnectionClose();
      const seen: string[] = [];
      for await (const event of stream({ url: server.url })) {
        seen.push(event.type);
        if (event.type === 'text-delta') break;
      }
      await closed;
      expect(seen.at(-1)).toBe('text-delta');
      expect(server.requests).toHaveLength(1);
    });
  });
}
