import type { ProviderError } from './errors.js';

/** Options of {@link retryDelayMs}. */
export interface RetryDelayOptions {
  /** Delay before the first retry, in ms [500]. */
  initialDelayMs?: number;
  /** Ceiling of the exponential backoff, in ms [8000]. */
  maxBackoffMs?: number;
  /** Ceiling of a server-requested delay (`retry-after`), in ms [60000]. */
  maxRetryAfterMs?: number;
  /** Random source in [0, 1) for jitter [Math.random]. */
  random?: () => number;
  /** Clock for HTTP-date `retry-after` values, ms since the epoch [Date.now]. */
  now?: () => number;
}

/** One retry about to be waited for, as {@link RetryOptions.onRetry} sees it. */
export interface RetryAttempt {
  /** 1 for the first retry. */
  attempt: number;
  /** How long the provider waits before it, in ms (a server's `retry-after`, or backoff). */
  delayMs: number;
  /** The retryable failure. */
  error: ProviderError;
}

/** How a provider retries: the delay options plus an observer of each retry. */
export interface RetryOptions extends RetryDelayOptions {
  /** Called before each retry wait (e.g. to show "rate limited, retrying in 2 s"); a throw is ignored. */
  onRetry?: (attempt: RetryAttempt) => void;
  /**
   * Longest wait for the next part of a response — its headers, then each chunk — in ms
   * [300000]. Past it the request is closed and the attempt fails as a retryable error (retried
   * only before the first token, like any other): an SDK's own timeout ends at the headers, so a
   * body that stops arriving would otherwise hang the call forever. The retries of a stalled call
   * share one deadline, one more timeout after the first stall. `Infinity` turns it off.
   */
  idleTimeoutMs?: number;
}

/** Default of {@link RetryOptions.idleTimeoutMs}: reasoning models may think minutes without a byte. */
export const defaultIdleTimeoutMs = 300_000;

// Only plain non-negative numbers count; `Date.parse` alone would read "-1" or "try 2031" as dates.
const numericValue = /^\d+(\.\d+)?$/;
// HTTP dates (RFC 9110 §5.6.7): IMF-fixdate, and the obsolete RFC 850 and asctime forms recipients must accept.
const httpDate =
  /^(?:[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT|[A-Z][a-z]{5,8}, \d{2}-[A-Z][a-z]{2}-\d{2} \d{2}:\d{2}:\d{2} GMT|[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \d{4})$/;

/** HTTP statuses worth retrying: 408, 409, 429, every 5xx (incl. Anthropic's 529). */
export function isRetryableStatus(status: number | undefined): boolean {
  if (status === undefined) return false;
  return status === 408 || status === 409 || status === 429 || (status >= 500 && status <= 599);
}

/**
 * Delay in ms before retry number `attempt` (0 for the first retry). A server's
 * `retry-after-ms` or `retry-after` (seconds or HTTP date) wins when it is a valid number,
 * capped at `maxRetryAfterMs`; non-numeric values are ignored. Otherwise exponential backoff
 * with full jitter between half and all of `initialDelayMs * 2^attempt` (capped).
 */
export function retryDelayMs(
  attempt: number,
  headers: { get(name: string): string | null } | Record<string, string | undefined> | undefined,
  options: RetryDelayOptions = {},
): number {
  const maxRetryAfter = options.maxRetryAfterMs ?? 60_000;
  const read = (name: string): string | undefined => {
    if (headers === undefined) return undefined;
    if (typeof (headers as { get?: unknown }).get === 'function') {
      return (headers as { get(name: string): string | null }).get(name) ?? undefined;
    }
    const record = headers as Record<string, string | undefined>;
    return record[name] ?? record[name.toLowerCase()];
  };
  const retryAfterMs = read('retry-after-ms')?.trim();
  if (retryAfterMs !== undefined && numericValue.test(retryAfterMs)) {
    return Math.min(Number(retryAfterMs), maxRetryAfter);
  }
  const retryAfter = read('retry-after')?.trim();
  if (retryAfter !== undefined) {
    if (numericValue.test(retryAfter)) return Math.min(Number(retryAfter) * 1000, maxRetryAfter);
    if (httpDate.test(retryAfter)) {
      const date = Date.parse(retryAfter);
      if (Number.isFinite(date)) {
        return Math.min(Math.max(0, date - (options.now ?? Date.now)()), maxRetryAfter);
      }
    }
  }
  const base = Math.min(
    (options.initialDelayMs ?? 500) * 2 ** attempt,
    options.maxBackoffMs ?? 8000,
  );
  const random = options.random ?? Math.random;
  return Math.round(base / 2 + (base / 2) * random());
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function abortableDelay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
