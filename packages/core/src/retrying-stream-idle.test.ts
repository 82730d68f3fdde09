// The idle timeout of RetryingStream with drivers over in-memory reads that never settle on their
// own: one that can cancel its attempt (the pending read then fails, as an aborted fetch does) and
// one that cannot (its reads are raced against the stall).
import { describe, expect, it } from 'vitest';
import { ProviderError } from './errors.js';
import { type AssistantMessage, emptyUsage } from './messages.js';
import type { StreamEvent } from './provider.js';
import { RetryingStream, type StreamDriver } from './retrying-stream.js';

/** Attempt `n` yields `chunks[n]` and then waits forever (until cancelled, when it can be). */
function stallingDriver(chunks: string[][], options: { cancels: boolean }) {
  let attempt = -1;
  let text = '';
  const log: string[] = [];
  let cancelCurrent: (() => void) | undefined;
  const message = (): AssistantMessage => ({
    role: 'assistant',
    content: text === '' ? [] : [{ type: 'text', text }],
    provider: 'fake',
    model: 'm',
    usage: emptyUsage(),
    stopReason: 'stop',
    timestamp: 0,
  });
  const driver: StreamDriver<string> = {
    async open() {
      attempt++;
      log.push(`open:${attempt}`);
      const mine = chunks[attempt] ?? [];
      let next = 0;
      let cancelled = false;
      let wake: ((error: Error) => void) | undefined;
      cancelCurrent = () => {
        cancelled = true;
        log.push(`cancel:${attempt}`);
        wake?.(new Error('aborted by the client'));
      };
      return {
        [Symbol.asyncIterator]() {
          return this;
        },
        next(): Promise<IteratorResult<string>> {
          if (cancelled) return Promise.reject(new Error('aborted by the client'));
          const chunk = mine[next++];
          if (chunk !== undefined) return Promise.resolve({ value: chunk, done: false });
          return new Promise((_resolve, reject) => {
            wake = reject;
          });
        },
      } as AsyncIterableIterator<string>;
    },
    apply(chunk, out) {
      text += chunk;
      out.push({ type: 'text-delta', index: 0, delta: chunk });
    },
    finish(out) {
      out.push({ type: 'done', message: message() });
    },
    fail(reason, error) {
      return { type: 'error', reason, error, message: { ...message(), stopReason: reason } };
    },
    toError: (caught) => ({
      error: ProviderError.isInstance(caught) ? caught : new ProviderError(String(caught)),
      hints: undefined,
    }),
    abortError: () => new ProviderError('Aborted', { provider: 'fake' }),
    get streamedContent() {
      return text !== '';
    },
    reset() {
      text = '';
    },
    ...(options.cancels ? { cancel: () => cancelCurrent?.() } : {}),
  };
  return { driver, log };
}

/**
 * Attempt 0 stalls; attempt 1 yields one chunk per `release(ms)` (each after `ms`), then ends.
 * `release` resolves once that chunk was read, so the gaps stay below the idle timeout.
 */
function pacedDriver(options: { cancels: boolean; chunks: number }) {
  const { driver: base, log } = stallingDriver([[]], options);
  let attempt = -1;
  let text = '';
  let given = 0;
  const waiting: Array<(chunk: IteratorResult<string>) => void> = [];
  const read: Array<() => void> = [];
  // Woken when the reader asks for a chunk.
  let asked: (() => void) | undefined;
  const driver: StreamDriver<string> = {
    ...base,
    async open() {
      attempt++;
      if (attempt === 0) return base.open();
      log.push(`open:${attempt}`);
      return {
        [Symbol.asyncIterator]() {
          return this;
        },
        next: () =>
          given >= options.chunks
            ? Promise.resolve({ value: undefined, done: true })
            : new Promise<IteratorResult<string>>((resolve) => {
                waiting.push(resolve);
                asked?.();
              }),
      } as AsyncIterableIterator<string>;
    },
    apply(chunk, out) {
      text += chunk;
      out.push({ type: 'text-delta', index: 0, delta: chunk });
      read.shift()?.();
    },
    get streamedContent() {
      return text !== '';
    },
    reset() {
      text = '';
    },
  };
  const release = async (ms: number): Promise<void> => {
    // The reader asks for the next chunk: wait until it has.
    if (waiting.length === 0) await new Promise<void>((resolve) => (asked = resolve));
    asked = undefined;
    await new Promise((resolve) => setTimeout(resolve, ms));
    const applied = new Promise<void>((resolve) => read.push(resolve));
    given++;
    waiting.shift()?.({ value: 'x', done: false });
    await applied;
  };
  return { driver, log, release };
}

async function drain(stream: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

const retry = { initialDelayMs: 1, maxBackoffMs: 2, idleTimeoutMs: 40 };

describe.each([true, false])('a stalled stream (driver cancels: %s)', (cancels) => {
  it('before any content: one stall, no retries left — the error names the idle timeout', async () => {
    const { driver, log } = stallingDriver([[]], { cancels });
    const events = await drain(
      new RetryingStream(driver, { signal: undefined, maxRetries: 0, retry }),
    );
    const end = events.at(-1);
    expect(end).toMatchObject({ type: 'error', reason: 'error', error: { isRetryable: true } });
    if (end?.type !== 'error') throw new Error('expected error');
    expect(end.error.message).toBe(
      'The provider sent nothing for 0.04 s (idle timeout); the request was closed',
    );
    expect(log.filter((entry) => entry.startsWith('open'))).toEqual(['open:0']);
  });

  // Before: each of the 1 + maxRetries attempts waited a whole idle timeout (4 × 300 s by
  // default, ~20 min for a provider that went silent).
  it.each([1, 2, 5])(
    'before any content: retries share one deadline — 2 attempts whatever maxRetries (%i)',
    async (maxRetries) => {
      const { driver, log } = stallingDriver([[], [], [], [], [], []], { cancels });
      const events = await drain(
        new RetryingStream(driver, { signal: undefined, maxRetries, retry }),
      );
      const end = events.at(-1);
      expect(end).toMatchObject({ type: 'error', reason: 'error', error: { isRetryable: true } });
      if (end?.type !== 'error') throw new Error('expected error');
      expect(end.error.message).toMatch(
        /^The provider sent nothing for 0\.04 s \(idle timeout\), nor did its retry before their shared deadline: 2 attempts closed, [\d.]+ s in all; the request was closed$/,
      );
      expect(log.filter((entry) => entry.startsWith('open'))).toEqual(['open:0', 'open:1']);
      // A driver that can cancel has each stalled attempt's request closed.
      if (cancels)
        expect(log.filter((entry) => entry.startsWith('cancel')).length).toBeGreaterThanOrEqual(2);
    },
  );

  it('a retry that streams is not cut at the shared deadline', async () => {
    // Attempt 1 sends a chunk, then one more each time the test releases it, well past the
    // deadline (several idle timeouts in all), each within one idle timeout of the last. The
    // gaps are a tenth of the timeout: at 40 ms / 20 ms a loaded CI machine's scheduling made a
    // gap a stall.
    const paced = { ...retry, idleTimeoutMs: 250 };
    const { driver, log, release } = pacedDriver({ cancels, chunks: 30 });
    const stream = new RetryingStream(driver, { signal: undefined, maxRetries: 3, retry: paced });
    const pending = drain(stream);
    for (let sent = 0; sent < 30; sent++) await release(paced.idleTimeoutMs / 10);
    const events = await pending;
    expect(events.at(-1)).toMatchObject({ type: 'done' });
    expect(log.filter((entry) => entry.startsWith('open'))).toEqual(['open:0', 'open:1']);
  });

  it('after content: the partial text is kept, no retry', async () => {
    const { driver, log } = stallingDriver([['Hel']], { cancels });
    const events = await drain(
      new RetryingStream(driver, { signal: undefined, maxRetries: 2, retry }),
    );
    expect(events.at(-1)).toMatchObject({
      type: 'error',
      message: { content: [{ type: 'text', text: 'Hel' }] },
    });
    expect(log.filter((entry) => entry.startsWith('open'))).toEqual(['open:0']);
  });

  it('with the idle timeout off (Infinity), an abort still ends the wait', async () => {
    const { driver } = stallingDriver([[]], { cancels: true });
    const controller = new AbortController();
    const stream = new RetryingStream(driver, {
      signal: controller.signal,
      maxRetries: 0,
      retry: { idleTimeoutMs: Number.POSITIVE_INFINITY },
    });
    const pending = drain(stream);
    setTimeout(() => {
      controller.abort();
      driver.cancel?.();
    }, 120);
    expect((await pending).at(-1)).toMatchObject({ type: 'error', reason: 'aborted' });
  });
});

/**
 * Sends `content` ('' is a keep-alive: no event, no progress), then keep-alives until
 * `stopAfterMs` from the start, then ends; a chunk every `everyMs`.
 */
function keepAliveDriver(
  content: string[],
  options: { cancels: boolean; everyMs: number; stopAfterMs: number },
) {
  const { driver: base, log } = stallingDriver([[]], options);
  let text = '';
  const timers: ReturnType<typeof setTimeout>[] = [];
  const driver: StreamDriver<string> = {
    ...base,
    async open() {
      log.push('open');
      const started = Date.now();
      let next = 0;
      let cancelled = false;
      let wake: ((error: Error) => void) | undefined;
      const cancel = () => {
        cancelled = true;
        wake?.(new Error('aborted by the client'));
      };
      if (options.cancels) driver.cancel = cancel;
      return {
        [Symbol.asyncIterator]() {
          return this;
        },
        next(): Promise<IteratorResult<string>> {
          if (cancelled) return Promise.reject(new Error('aborted by the client'));
          const chunk = content[next++];
          if (chunk === undefined && Date.now() - started > options.stopAfterMs)
            return Promise.resolve({ value: undefined, done: true });
          return new Promise((resolve, reject) => {
            wake = reject;
            const value = chunk ?? '';
            timers.push(setTimeout(() => resolve({ value, done: false }), options.everyMs));
          });
        },
      } as AsyncIterableIterator<string>;
    },
    apply(chunk, out) {
      if (chunk === '') return;
      text += chunk;
      out.push({ type: 'text-delta', index: 0, delta: chunk });
    },
    get streamedContent() {
      return text !== '';
    },
    reset() {
      text = '';
    },
  };
  return { driver, log, clear: () => timers.forEach(clearTimeout) };
}

describe.each([true, false])('keep-alives only (driver cancels: %s)', (cancels) => {
  // Before: each keep-alive restarted the idle count — a server sending only pings (Anthropic's
  // `ping`, an empty chunk) held the call for ever; here it would have ended normally after 3 s.
  it('after content: a stall at about one idle timeout, not the end of the keep-alives', async () => {
    const { driver, clear } = keepAliveDriver(['Hel'], {
      cancels,
      everyMs: 10,
      stopAfterMs: 3_000,
    });
    const events = await drain(
      new RetryingStream(driver, {
        signal: undefined,
        maxRetries: 0,
        retry: { ...retry, idleTimeoutMs: 400 },
      }),
    );
    clear();
    expect(events[0]).toMatchObject({ type: 'text-delta', delta: 'Hel' });
    expect(events.at(-1)).toMatchObject({ type: 'error', reason: 'error' });
  });

  it('content between keep-alives keeps the stream alive', async () => {
    // Content every third chunk, ~30 ms apart (a thirteenth of the timeout: room for a loaded
    // machine), over three idle timeouts: never a stall.
    const chunks = Array.from({ length: 120 }, (_, i) => (i % 3 === 0 ? 'x' : ''));
    const { driver, clear } = keepAliveDriver(chunks, { cancels, everyMs: 10, stopAfterMs: 0 });
    const events = await drain(
      new RetryingStream(driver, {
        signal: undefined,
        maxRetries: 0,
        retry: { ...retry, idleTimeoutMs: 400 },
      }),
    );
    clear();
    expect(events.at(-1)).toMatchObject({ type: 'done' });
  });
});
