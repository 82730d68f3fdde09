import { describe, expect, it } from 'vitest';
import { ProviderError } from './errors.js';
import { type AssistantMessage, emptyUsage } from './messages.js';
import type { StreamEvent } from './provider.js';
import type { RetryAttempt } from './retry.js';
import { RetryingStream, type StreamDriver } from './retrying-stream.js';

type Attempt =
  | { chunks: string[]; failAfter?: number; error?: ProviderError }
  | { openError: ProviderError };

/** A driver over in-memory attempts: each chunk is one text delta. */
function fakeDriver(attempts: Attempt[]) {
  let attempt = -1;
  let text = '';
  const log: string[] = [];
  const message = (): AssistantMessage => ({
    role: 'assistant',
    content: text === '' ? [] : [{ type: 'text', text }],
    provider: 'fake',
    model: 'm',
    usage: emptyUsage(),
    stopReason: 'stop',
    timestamp: 0,
  });
  const driver: StreamDriver<string> & { log: string[] } = {
    log,
    async open() {
      attempt++;
      log.push(`open:${attempt}`);
      const current = attempts[attempt];
      if (current === undefined) throw new ProviderError('no more attempts');
      if ('openError' in current) throw current.openError;
      return (async function* () {
        for (const [index, chunk] of current.chunks.entries()) {
          if (current.failAfter !== undefined && index >= current.failAfter) throw current.error;
          yield chunk;
        }
      })();
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
    toError(caught) {
      return {
        error: ProviderError.isInstance(caught) ? caught : new ProviderError(String(caught)),
        hints: { 'retry-after-ms': '1' },
      };
    },
    abortError: () => new ProviderError('Aborted'),
    get streamedContent() {
      return text !== '';
    },
    reset() {
      text = '';
    },
    cancel() {
      log.push('cancel');
    },
  };
  return driver;
}

async function drain(stream: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

const retryable = (message: string) =>
  new ProviderError(message, { statusCode: 503, isRetryable: true });

describe('RetryingStream', () => {
  it('retries a retryable failure before the first token, then streams to done', async () => {
    const driver = fakeDriver([{ openError: retryable('busy') }, { chunks: ['a', 'b'] }]);
    const events = await drain(
      new RetryingStream(driver, { signal: undefined, maxRetries: 2, retry: undefined }),
    );
    expect(driver.log).toEqual(['open:0', 'open:1']);
    expect(events.map((e) => e.type)).toEqual(['text-delta', 'text-delta', 'done']);
  });

  it('tells onRetry about each retry (attempt, delay, error) before waiting; a throwing observer changes nothing', async () => {
    const driver = fakeDriver([
      { openError: retryable('busy') },
      { openError: retryable('still busy') },
      { chunks: ['a'] },
    ]);
    const seen: string[] = [];
    const onRetry = ({ attempt, delayMs, error }: RetryAttempt) => {
      seen.push(`${attempt}:${delayMs}:${error.message}:${driver.log.length}`);
      throw new Error('observer bug');
    };
    const events = await drain(
      new RetryingStream(driver, { signal: undefined, maxRetries: 3, retry: { onRetry } }),
    );
    // The hint is retry-after-ms: 1; each call comes after the failed open, before the next.
    expect(seen).toEqual(['1:1:busy:1', '2:1:still busy:2']);
    expect(events.map((e) => e.type)).toEqual(['text-delta', 'done']);
  });

  it('does not retry after content was streamed, and ends with exactly one error', async () => {
    const driver = fakeDriver([
      { chunks: ['a', 'b', 'c'], failAfter: 1, error: retryable('reset') },
      { chunks: ['x'] },
    ]);
    const events = await drain(
      new RetryingStream(driver, { signal: undefined, maxRetries: 2, retry: undefined }),
    );
    expect(driver.log).toEqual(['open:0']);
    expect(events.map((e) => e.type)).toEqual(['text-delta', 'error']);
  });

  it('gives up after maxRetries and on non-retryable errors', async () => {
    const exhausted = fakeDriver([
      { openError: retryable('1') },
      { openError: retryable('2') },
      { chunks: ['never'] },
    ]);
    const events = await drain(
      new RetryingStream(exhausted, { signal: undefined, maxRetries: 1, retry: undefined }),
    );
    expect(exhausted.log).toEqual(['open:0', 'open:1']);
    expect(events).toMatchObject([{ type: 'error', reason: 'error', error: { message: '2' } }]);
    const fatal = fakeDriver([
      { openError: new ProviderError('unauthorized', { statusCode: 401 }) },
    ]);
    expect(
      await drain(
        new RetryingStream(fatal, { signal: undefined, maxRetries: 5, retry: undefined }),
      ),
    ).toMatchObject([{ type: 'error', error: { statusCode: 401 } }]);
  });

  it('ends as aborted when the signal fires during the retry wait', async () => {
    const controller = new AbortController();
    const driver = fakeDriver([{ openError: retryable('busy') }, { chunks: ['a'] }]);
    driver.toError = (caught) => ({
      error: caught as ProviderError,
      hints: { 'retry-after': '30' },
    });
    const stream = new RetryingStream(driver, {
      signal: controller.signal,
      maxRetries: 3,
      retry: undefined,
    });
    const pending = drain(stream);
    setTimeout(() => controller.abort(), 5);
    const events = await pending;
    expect(events).toMatchObject([{ type: 'error', reason: 'aborted' }]);
    expect(driver.log).toEqual(['open:0']);
  });

  it('cancels the request when the consumer stops early', async () => {
    const driver = fakeDriver([{ chunks: ['a', 'b', 'c'] }]);
    for await (const event of new RetryingStream(driver, {
      signal: undefined,
      maxRetries: 0,
      retry: undefined,
    })) {
      expect(event.type).toBe('text-delta');
      break;
    }
    expect(driver.log).toEqual(['open:0', 'cancel']);
  });
});
