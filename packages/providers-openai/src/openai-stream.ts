import {
  abortError,
  ProviderError,
  type RetryHints,
  RetryingStream,
  type RetryOptions,
  type StreamDriver,
  type StreamEvent,
} from '@agent/core';
import { MessageBuilder } from './message-builder.js';
import { toProviderError } from './openai-errors.js';

/** Turns the chunks of one API's stream into events (Chat Completions or Responses). */
export interface ChunkAdapter<TChunk> {
  /** Appends the events of one chunk to `out`; throws a `ProviderError` for a bad chunk. */
  handle(chunk: TChunk, out: StreamEvent[]): void;
  /** True once the stream said the model finished (`finish_reason`, `response.completed`). */
  readonly finished: boolean;
  /** The error of a stream that ended before the model finished (retryable). */
  unfinishedError(): ProviderError;
  /** Appends the closing events and returns the terminal event; throws when the answer is unusable. */
  finish(out: StreamEvent[]): StreamEvent;
}

/** What {@link openAIStream} needs for one call. */
export interface OpenAIStreamParams<TChunk> {
  providerId: string;
  model: string;
  signal: AbortSignal | undefined;
  maxRetries: number;
  retry: RetryOptions | undefined;
  /** Sends one attempt's HTTP request, aborted by `signal`; resolves with the SDK's chunk stream. */
  open(signal: AbortSignal): Promise<AsyncIterable<TChunk>>;
  /** A fresh adapter for one attempt. */
  createAdapter(builder: MessageBuilder): ChunkAdapter<TChunk>;
}

/**
 * One provider call on core's `RetryingStream`: retries before the first token, exactly one
 * terminal event, `next()` never rejects.
 */
export function openAIStream<TChunk>(
  params: OpenAIStreamParams<TChunk>,
): AsyncIterable<StreamEvent> {
  return new RetryingStream(new OpenAIStreamDriver(params), {
    signal: params.signal,
    maxRetries: params.maxRetries,
    retry: params.retry,
  });
}

class OpenAIStreamDriver<TChunk> implements StreamDriver<TChunk> {
  readonly #params: OpenAIStreamParams<TChunk>;
  #builder: MessageBuilder;
  /** Created once an attempt's request was sent (building the request may fail). */
  #adapter: ChunkAdapter<TChunk> | undefined;
  #started = false;
  /**
   * A chunk the adapter rejected. `apply` may not throw (core would end the stream without a
   * retry and drop that chunk's events), so the failure is handed to the iterator, whose next
   * `next()` rejects with it: core then retries it when it is retryable and nothing streamed.
   */
  failure: { error: unknown } | undefined;
  /**
   * The current attempt's own controller, following the caller's signal through one listener
   * that `cleanup` removes: `cancel` closes a stalled attempt without ending the call.
   */
  #controller: AbortController | undefined;
  #listening = false;
  readonly #onAbort = (): void => this.#controller?.abort(this.#params.signal?.reason);

  constructor(params: OpenAIStreamParams<TChunk>) {
    this.#params = params;
    this.#builder = new MessageBuilder(params.providerId, params.model);
  }

  /** True once the stream said the model finished. */
  get finished(): boolean {
    return this.#adapter?.finished === true;
  }

  /** The error of a stream that ended before the model finished. */
  unfinishedError(): ProviderError {
    return (
      this.#adapter?.unfinishedError() ??
      new ProviderError('The stream ended before the model finished', { isRetryable: true })
    );
  }

  get streamedContent(): boolean {
    return this.#builder.hasOutput;
  }

  get aborted(): boolean {
    return this.#params.signal?.aborted === true;
  }

  async open(): Promise<AsyncIterable<TChunk>> {
    const signal = this.#params.signal;
    this.#controller?.abort();
    const controller = new AbortController();
    this.#controller = controller;
    if (signal !== undefined && !this.#listening) {
      this.#listening = true;
      signal.addEventListener('abort', this.#onAbort, { once: true });
    }
    if (signal?.aborted === true) controller.abort(signal.reason);
    const stream = await this.#params.open(controller.signal);
    this.#adapter = this.#params.createAdapter(this.#builder);
    return new GuardedChunks(stream[Symbol.asyncIterator](), this);
  }

  apply(chunk: TChunk, out: StreamEvent[]): void {
    if (!this.#started) {
      // Once per call: retries are invisible to the consumer.
      this.#started = true;
      out.push({ type: 'start', model: this.#params.model, provider: this.#params.providerId });
    }
    try {
      // `apply` only follows a successful `open`, which created the adapter.
      this.#adapter?.handle(chunk, out);
    } catch (error) {
      this.failure = { error };
    }
  }

  finish(out: StreamEvent[]): void {
    try {
      if (this.failure !== undefined) throw this.failure.error;
      const adapter = this.#adapter;
      if (adapter === undefined) throw this.unfinishedError();
      out.push(adapter.finish(out));
    } catch (error) {
      out.push(this.fail('error', this.toError(error).error));
    }
  }

  fail(reason: 'error' | 'aborted', error: ProviderError): StreamEvent {
    return this.#builder.fail(reason, error);
  }

  toError(caught: unknown): { error: ProviderError; hints: RetryHints } {
    const id = this.#params.providerId;
    const { error, hints } = toProviderError(caught, id);
    return { error: withProvider(error, id), hints };
  }

  abortError(): ProviderError {
    return abortError(this.#params.providerId, this.#params.signal);
  }

  cancel(): void {
    this.#controller?.abort();
  }

  cleanup(): void {
    if (this.#listening) this.#params.signal?.removeEventListener('abort', this.#onAbort);
    this.#listening = false;
  }

  reset(): void {
    this.#builder = new MessageBuilder(this.#params.providerId, this.#params.model);
    this.#adapter = undefined;
    this.failure = undefined;
  }
}

/**
 * The SDK's chunk iterator as core sees it. Before the first content it checks each result, so
 * that a stream ending early (an empty 200, a cut before any token) rejects with a retryable
 * error instead of ending; after that `next()` is the SDK's own, untouched on the hot path.
 */
class GuardedChunks<TChunk> implements AsyncIterableIterator<TChunk> {
  readonly #inner: AsyncIterator<TChunk>;
  readonly #driver: OpenAIStreamDriver<TChunk>;

  constructor(inner: AsyncIterator<TChunk>, driver: OpenAIStreamDriver<TChunk>) {
    this.#inner = inner;
    this.#driver = driver;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<TChunk>> {
    const driver = this.#driver;
    const failure = driver.failure;
    if (failure !== undefined) {
      // Stop reading: returning the SDK's iterator aborts its HTTP request.
      this.#close();
      return Promise.reject(failure.error);
    }
    if (driver.streamedContent) return this.#inner.next();
    return this.#inner.next().then(this.#checkEnd);
  }

  readonly #checkEnd = (result: IteratorResult<TChunk>): IteratorResult<TChunk> => {
    const driver = this.#driver;
    if (result.done === true && !driver.finished && !driver.aborted) throw driver.unfinishedError();
    return result;
  };

  async return(value?: unknown): Promise<IteratorResult<TChunk>> {
    await this.#inner.return?.(value);
    return { value: undefined, done: true };
  }

  #close(): void {
    this.#inner.return?.()?.catch(() => {
      // The request is being torn down; the failure that caused it is what gets reported.
    });
  }
}

function withProvider(error: ProviderError, provider: string): ProviderError {
  if (error.provider !== undefined) return error;
  return new ProviderError(error.message, {
    provider,
    isRetryable: error.isRetryable,
    ...(error.statusCode === undefined ? {} : { statusCode: error.statusCode }),
    ...(error.responseBody === undefined ? {} : { responseBody: error.responseBody }),
    ...(error.contextOverflow ? { contextOverflow: true } : {}),
    cause: error.cause ?? error,
  });
}
