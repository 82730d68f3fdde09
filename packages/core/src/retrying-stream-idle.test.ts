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

async function drain(stream: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

const retry = { initialDelayMs: 1, maxBackoffMs: 2, idleTimeoutMs: 40 };

describe.each([true, false])('a stalled stream (driver cancels: %s)', (cancels) => {
  it('before any content: every attempt is given up on, then one retryable error', async () => {
    const { driver, log } = stallingDriver([[], [], []], { cancels });
    const events = await drain(
      new RetryingStream(driver, { signal: undefined, maxRetries: 2, retry }),
    );
    const end = events.at(-1);
    expect(end).toMatchObject({ type: 'error', reason: 'error', error: { isRetryable: true } });
    if (end?.type !== 'error') throw new Error('expected error');
    expect(end.error.message).toBe(
      'The provider sent nothing for 0.04 s (idle timeout); the request was closed',
    );
    expect(log.filter((entry) => entry.startsWith('open'))).toEqual(['open:0', 'open:1', 'open:2']);
    // A driver that can cancel has each stalled attempt's request closed.
    if (cancels)
      expect(log.filter((entry) => entry.startsWith('cancel')).length).toBeGreaterThanOrEqual(3);
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
