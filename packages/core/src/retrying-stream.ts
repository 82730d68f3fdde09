import { ProviderError } from './errors.js';
import { IdleWatch, type Stalled, stalled } from './idle-watch.js';
import type { StreamEvent } from './provider.js';
import { abortableDelay, defaultIdleTimeoutMs, type RetryOptions, retryDelayMs } from './retry.js';

/** Retry hints: response headers or a plain record (e.g. from an error body). */
export type RetryHints = Headers | Record<string, string | undefined> | undefined;

/** What one provider call needs to plug into {@link RetryingStream}. */
export interface StreamDriver<TChunk> {
  /** Opens one attempt (the HTTP request); resolves with the SDK's chunk stream. */
  open(): Promise<AsyncIterable<TChunk>>;
  /** Appends the events a chunk produces to `out`. */
  apply(chunk: TChunk, out: StreamEvent[]): void;
  /** Appends the closing events (block ends, usage, `done` or `error`) after the last chunk. */
  finish(out: StreamEvent[]): void;
  /** The terminal `error` event with what arrived so far. */
  fail(reason: 'error' | 'aborted', error: ProviderError): StreamEvent;
  /** A thrown value as a typed error plus its retry hints. */
  toError(caught: unknown): { error: ProviderError; hints: RetryHints };
  /** The error of an aborted call. */
  abortError(): ProviderError;
  /** True once content was streamed: no retry after that. */
  readonly streamedContent: boolean;
  /** Forgets a failed attempt that streamed nothing. */
  reset(): void;
  /**
   * Cancels the current attempt's HTTP request: when the consumer stops early (if closing the SDK
   * stream does not), and when the attempt stalled (a retry opens a new one).
   */
  cancel?(): void;
  /** Releases listeners once the stream has ended, whichever way. */
  cleanup?(): void;
  /**
   * Asked when a response ended well, before `finish`: true when the provider continues the same
   * message with another request (Anthropic's `pause_turn`). The stream then opens again —
   * `open` sends the continuation — with the retries of a new response; `streamedContent` must
   * be false again until the continuation streams. Absent: never.
   */
  continues?(): boolean;
}

type Handover =
  | { kind: 'ended' }
  | { kind: 'failed'; caught: unknown }
  | { kind: 'stalled' }
  | { kind: 'bug'; bug: unknown };

/** Options of {@link RetryingStream}. */
export interface RetryingStreamOptions {
  signal: AbortSignal | undefined;
  /** Retries before the first token. */
  maxRetries: number;
  /** Delays, caps, the idle timeout and the `onRetry` observer. */
  retry: RetryOptions | undefined;
}

/**
 * A building block for providers. The `stream()` result: a hand-written async iterator (not an async generator, which costs an
 * extra scheduling hop per event) that opens attempts, retries retryable failures before the
 * first token with backoff, and always ends with exactly one `done` or `error` event. Its
 * `next()` never rejects. A response that sends nothing for `retry.idleTimeoutMs` (headers or the
 * next chunk) is closed and counts as a retryable failure.
 */
export class RetryingStream<TChunk> implements AsyncIterableIterator<StreamEvent> {
  readonly #driver: StreamDriver<TChunk>;
  readonly #options: RetryingStreamOptions;
  #queue: StreamEvent[] = [];
  #head = 0;
  #iterator: AsyncIterator<TChunk> | undefined;
  #attempt = 0;
  #ended = false;
  /** Undefined when the idle timeout is off. */
  readonly #idle: IdleWatch | undefined;
  /**
   * A stall is undone by cancelling the attempt (its pending read then fails or ends): no cost
   * per chunk. A driver without `cancel` gets each read raced against the stall instead.
   */
  readonly #cancels: boolean;
  /** The attempt was cancelled for a stall: how its pending read ends is that stall. */
  #stallCancelled = false;
  /** Attempts closed for a stall, and when the first was (ms since the epoch). */
  #stalls = 0;
  #firstStallAt = 0;
  /**
   * Set at the first stall, one idle timeout later: the retries of a stalled call share it, so a
   * silent provider holds a call about two idle timeouts, not one per attempt (4 × 300 s).
   */
  #stallDeadline: number | undefined;
  /**
   * The last chunk gave no event (a keep-alive: Anthropic's `ping`, an empty `{}` chunk): the
   * next wait continues the idle count instead of restarting it, so a response that sends only
   * keep-alives stalls like a silent one rather than holding the call for ever.
   */
  #noProgress = false;

  constructor(driver: StreamDriver<TChunk>, options: RetryingStreamOptions) {
    this.#driver = driver;
    this.#options = options;
    this.#cancels = driver.cancel !== undefined;
    const idleTimeoutMs = options.retry?.idleTimeoutMs ?? defaultIdleTimeoutMs;
    this.#idle =
      Number.isFinite(idleTimeoutMs) && idleTimeoutMs > 0
        ? new IdleWatch(idleTimeoutMs, this.#onStall)
        : undefined;
  }

  readonly #onStall = (): void => {
    if (this.#ended || !this.#cancels) return;
    this.#stallCancelled = true;
    try {
      this.#driver.cancel?.();
    } catch {
      // The read it was meant to end is reported either way.
    }
  };

  /** A wait for the network, given up on past the idle timeout (see `#cancels`). */
  #guard<T>(promise: Promise<T>): Promise<T | Stalled> {
    const idle = this.#idle;
    if (idle === undefined) return promise;
    if (!this.#cancels) return idle.guard(promise, this.#noProgress);
    idle.waiting(this.#noProgress);
    return promise;
  }

  /** Whether what a read gave (a chunk, an end, a failure) is really the stall that cancelled it. */
  #isStall(result: unknown, failed: boolean): boolean {
    this.#idle?.arrived();
    if (result === stalled) return true;
    return this.#stallCancelled && (failed || (result as IteratorResult<TChunk>).done === true);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<StreamEvent>> {
    const result = this.#take();
    if (result !== undefined) return Promise.resolve(result);
    const iterator = this.#iterator;
    // Hot path while streaming: one `then` per chunk, no async-function frame.
    if (iterator !== undefined)
      return this.#guard(iterator.next()).then(this.#onChunk, this.#onChunkError);
    return this.#fill();
  }

  readonly #onChunk = (
    chunk: IteratorResult<TChunk> | Stalled,
  ): IteratorResult<StreamEvent> | Promise<IteratorResult<StreamEvent>> => {
    if (this.#isStall(chunk, false)) return this.#fill({ kind: 'stalled' });
    if (chunk === stalled || chunk.done === true || this.#ended)
      return this.#fill({ kind: 'ended' });
    const queued = this.#queue.length;
    try {
      this.#driver.apply(chunk.value, this.#queue);
    } catch (bug) {
      return this.#fill({ kind: 'bug', bug });
    }
    this.#noProgress = this.#queue.length === queued;
    return this.#take() ?? this.next();
  };

  readonly #onChunkError = (caught: unknown): Promise<IteratorResult<StreamEvent>> =>
    this.#fill(this.#isStall(caught, true) ? { kind: 'stalled' } : { kind: 'failed', caught });

  /** Stops early (the consumer broke out of its loop): cancels the HTTP request. */
  async return(): Promise<IteratorResult<StreamEvent>> {
    const wasEnded = this.#ended;
    this.#queue = [];
    this.#head = 0;
    const iterator = this.#iterator;
    this.#markEnded();
    if (!wasEnded) this.#driver.cancel?.();
    try {
      await iterator?.return?.();
    } catch {
      // The request is being torn down; nothing to report to a consumer that left.
    }
    return { value: undefined, done: true };
  }

  #markEnded(): void {
    this.#iterator = undefined;
    if (this.#ended) return;
    this.#ended = true;
    this.#idle?.close();
    this.#driver.cleanup?.();
  }

  #take(): IteratorResult<StreamEvent> | undefined {
    const queue = this.#queue;
    if (this.#head < queue.length) {
      const value = queue[this.#head++] as StreamEvent;
      if (this.#head === queue.length) {
        // Emptied by popping, not `length = 0`: that is a runtime call which also frees the
        // backing store, so the next push allocates a new one — once per streamed delta.
        while (queue.length > 0) queue.pop();
        this.#head = 0;
      }
      return { value, done: false };
    }
    if (this.#ended) return { value: undefined, done: true };
    return undefined;
  }

  #end(event: StreamEvent): void {
    this.#queue.push(event);
    this.#markEnded();
  }

  /** The slow path: opening, retrying, ending; `handover` says what the hot path saw. */
  async #fill(handover?: Handover): Promise<IteratorResult<StreamEvent>> {
    const driver = this.#driver;
    const signal = this.#options.signal;
    try {
      if (handover?.kind === 'bug') throw handover.bug;
      if (this.#ended) return this.#take() ?? { value: undefined, done: true };
      if (handover?.kind === 'failed') {
        this.#iterator = undefined;
        await this.#failed(handover.caught);
      } else if (handover?.kind === 'stalled') await this.#stalled();
      else if (handover?.kind === 'ended') this.#streamEnded();
      for (;;) {
        const early = this.#take();
        if (early !== undefined) return early;
        const iterator = this.#iterator;
        if (iterator !== undefined) {
          let result: IteratorResult<TChunk> | Stalled;
          try {
            result = await this.#guard(iterator.next());
          } catch (caught) {
            this.#iterator = undefined;
            if (this.#isStall(caught, true)) await this.#stalled();
            else await this.#failed(caught);
            continue;
          }
          if (this.#isStall(result, false)) await this.#stalled();
          else if (result === stalled || result.done === true) this.#streamEnded();
          else {
            const queued = this.#queue.length;
            driver.apply(result.value, this.#queue);
            this.#noProgress = this.#queue.length === queued;
          }
        } else if (!this.#ended) {
          if (signal?.aborted) this.#end(driver.fail('aborted', driver.abortError()));
          else {
            try {
              this.#stallCancelled = false;
              this.#noProgress = false;
              const opened = await this.#guard(driver.open());
              if (this.#isStall(opened, false) || opened === stalled) await this.#stalled();
              else this.#iterator = opened[Symbol.asyncIterator]();
            } catch (caught) {
              if (this.#isStall(caught, true)) await this.#stalled();
              else await this.#failed(caught);
            }
          }
        }
        const result = this.#take();
        if (result !== undefined) return result;
      }
    } catch (unexpected) {
      // A bug of ours must still end the stream with an event, never a rejection.
      this.#queue = [driver.fail('error', driver.toError(unexpected).error)];
      this.#head = 0;
      this.#markEnded();
      return this.#take() ?? { value: undefined, done: true };
    }
  }

  #streamEnded(): void {
    this.#iterator = undefined;
    if (this.#options.signal?.aborted)
      this.#end(this.#driver.fail('aborted', this.#driver.abortError()));
    else if (this.#driver.continues?.() === true) {
      // The next pass of the fill loop opens the continuation; its retries are its own.
      this.#attempt = 0;
      this.#stalls = 0;
      this.#stallDeadline = undefined;
      this.#idle?.clearDeadline();
    } else {
      this.#driver.finish(this.#queue);
      this.#markEnded();
    }
  }

  /** The attempt sent nothing for the idle timeout: its request is closed, and it failed. */
  async #stalled(): Promise<void> {
    this.#iterator = undefined;
    this.#stallCancelled = false;
    const driver = this.#driver;
    try {
      driver.cancel?.();
    } catch {
      // Closing a request that is going nowhere; the failure below is what counts.
    }
    const timeoutMs = this.#idle?.timeoutMs ?? 0;
    const seconds = timeoutMs / 1000;
    const now = Date.now();
    this.#stalls++;
    if (this.#stallDeadline === undefined) {
      this.#firstStallAt = now;
      this.#stallDeadline = now + timeoutMs;
      // Lifted once a retry streams: a healthy answer is never cut at the deadline.
      this.#idle?.setDeadline(this.#stallDeadline, () => !this.#driver.streamedContent);
    }
    const provider = driver.abortError().provider;
    const inAll = Math.round((now - this.#firstStallAt + timeoutMs) / 100) / 10;
    const error = new ProviderError(
      this.#stalls === 1
        ? `The provider sent nothing for ${seconds} s (idle timeout); the request was closed`
        : `The provider sent nothing for ${seconds} s (idle timeout), nor did its ${this.#stalls - 1 === 1 ? 'retry' : `${this.#stalls - 1} retries`} before their shared deadline: ${this.#stalls} attempts closed, ${inAll} s in all; the request was closed`,
      { ...(provider === undefined ? {} : { provider }), isRetryable: true },
    );
    await this.#failed(error, { error, hints: undefined });
  }

  async #failed(
    caught: unknown,
    known?: { error: ProviderError; hints: RetryHints },
  ): Promise<void> {
    const driver = this.#driver;
    const signal = this.#options.signal;
    if (signal?.aborted) {
      this.#end(driver.fail('aborted', driver.abortError()));
      return;
    }
    const { error, hints } = known ?? driver.toError(caught);
    if (!error.isRetryable || driver.streamedContent || this.#attempt >= this.#options.maxRetries) {
      this.#end(driver.fail('error', error));
      return;
    }
    const delayMs = retryDelayMs(this.#attempt, hints, this.#options.retry);
    // After a stall, no retry starts that could not answer before the shared deadline.
    if (this.#stallDeadline !== undefined && Date.now() + delayMs >= this.#stallDeadline) {
      this.#end(driver.fail('error', error));
      return;
    }
    try {
      this.#options.retry?.onRetry?.({ attempt: this.#attempt + 1, delayMs, error });
    } catch {
      // An observer's bug must not turn a retry into a failure.
    }
    try {
      await abortableDelay(delayMs, signal);
    } catch {
      this.#end(driver.fail('aborted', driver.abortError()));
      return;
    }
    this.#attempt++;
    driver.reset();
  }
}
