// Reading the Messages API's stream: one attempt's SSE events (the StreamDriver of the retry loop),
// continued with another request when the API paused the turn. The state machine that turns the
// events into our stream events and the final message is anthropic-stream-state.ts.
import {
  type AssistantMessage,
  abortError,
  errorMessage,
  notAnEventStream,
  ProviderError,
  type ProviderRequest,
  type ProviderStreamOptions,
  RetryingStream,
  type RetryOptions,
  type StreamDriver,
  type StreamEvent,
} from '@agent/core';
import type Anthropic from '@anthropic-ai/sdk';
import { APIError } from '@anthropic-ai/sdk';
import { type ServerSentEvent, Stream } from '@anthropic-ai/sdk/core/streaming';
import type {
  MessageCreateParamsStreaming,
  RawMessageStreamEvent,
} from '@anthropic-ai/sdk/resources';
import { toProviderError } from './anthropic-errors.js';
import { AnthropicStreamState } from './anthropic-stream-state.js';

/** What one stream needs from its provider. */
export interface AnthropicStreamSetup {
  /** Provider id in messages and events. */
  readonly id: string;
  readonly getClient: () => Anthropic;
  readonly buildParams: (request: ProviderRequest) => MessageCreateParamsStreaming;
  /** Retries before the first token. */
  readonly maxRetries: number;
  readonly retry: RetryOptions | undefined;
  /** Requests that continue a turn the API paused (`pause_turn`) before the stream gives up. */
  readonly maxPauseContinuations: number;
}

/** Streams one request: a `RetryingStream` over the SSE events of each attempt. */
export function streamAnthropic(
  setup: AnthropicStreamSetup,
  request: ProviderRequest,
  streamOptions: ProviderStreamOptions = {},
): AsyncIterable<StreamEvent> {
  const { id } = setup;
  const signal = streamOptions.signal;
  const state = new AnthropicStreamState(id, request.model, setup.maxPauseContinuations);
  let params: MessageCreateParamsStreaming | undefined;
  /** The paused turn last handed to `onCheckpoint` (a retry of its continuation asks no more). */
  let recorded: AssistantMessage | undefined;
  const checkpoint = async (paused: AssistantMessage): Promise<void> => {
    try {
      await streamOptions.onCheckpoint?.(paused);
    } catch (error) {
      throw new ProviderError(`The paused turn could not be recorded: ${errorMessage(error)}`, {
        provider: id,
        isRetryable: false,
        cause: error,
      });
    }
  };
  // Our own controller per attempt, linked to the caller's signal by one listener per stream
  // that `cleanup` removes: the SDK's listener then sits on this short-lived signal, so a
  // long-lived caller signal collects nothing, and `cancel` can abort the request too.
  let attempt: SseEvents | undefined;
  let controller: AbortController | undefined;
  const onAbort = (): void => controller?.abort(signal?.reason);
  let listening = false;
  const driver: StreamDriver<ServerSentEvent> = {
    open: async () => {
      // A paused turn goes back as it is, as the last (assistant) message: the API resumes it.
      const paused = state.pausedMessage;
      if (paused !== undefined && paused !== recorded) {
        // Recorded first (a journaled run): a crash mid-continuation resumes from it.
        recorded = paused;
        await checkpoint(paused);
      }
      params ??= setup.buildParams(
        paused === undefined ? request : { ...request, messages: [...request.messages, paused] },
      );
      // A retry: the failed attempt's request goes, as the SDK's iterator aborts it on a throw.
      controller?.abort();
      const current = new AbortController();
      controller = current;
      if (signal !== undefined && !listening) {
        listening = true;
        signal.addEventListener('abort', onAbort, { once: true });
      }
      if (signal?.aborted === true) current.abort(signal.reason);
      const response = await setup
        .getClient()
        .messages.create(params, { signal: current.signal, maxRetries: 0 })
        .asResponse();
      // A 200 that is a JSON document or an HTML page (a proxy's) says why it is not a stream.
      const notStream = await notAnEventStream(response, id);
      if (notStream !== undefined) throw notStream;
      attempt = new SseEvents(response, current);
      return attempt;
    },
    apply: (event, out) => {
      // The SDK's `Stream` iterator, minus its async-generator hop per event: the SDK splits
      // the SSE framing (`Stream.rawEvents`), we only parse each event's JSON `data`.
      const name = event.event;
      if (name === 'error') {
        attempt?.fail(streamError(event, attempt.headers));
        return;
      }
      if (name === null || name === 'ping' || event.data === '') return;
      let parsed: RawMessageStreamEvent;
      try {
        parsed = JSON.parse(event.data) as RawMessageStreamEvent;
      } catch (malformed) {
        // Rejected by the iterator like the SDK's own parse error (not as a bug of `apply`).
        attempt?.fail(malformed);
        return;
      }
      if (
        typeof (parsed as unknown) !== 'object' ||
        parsed === null ||
        typeof parsed.type !== 'string'
      ) {
        attempt?.fail(
          new SyntaxError(
            `expected an event object with a "type", got ${event.data.slice(0, 100)}`,
          ),
        );
        return;
      }
      try {
        state.apply(parsed, out);
      } catch (shape) {
        // Valid JSON of another shape than the event type's (a field missing or null): the
        // server's fault, said as such rather than as "Cannot read properties of undefined".
        attempt?.fail(
          new SyntaxError(`a ${parsed.type} event of an unexpected shape (${errorMessage(shape)})`),
        );
      }
    },
    finish: (out) => {
      out.push(state.finish());
    },
    fail: (reason, error) => state.fail(reason, error),
    toError: (caught) => toProviderError(caught, id),
    abortError: () => abortError(id, signal),
    get streamedContent() {
      return state.streamedContent;
    },
    reset: () => state.reset(),
    continues: () => {
      if (!state.continues()) return false;
      params = undefined;
      return true;
    },
    cancel: () => controller?.abort(),
    // Kept after cleanup: the retry loop ends (cleanup) before it cancels on an early stop.
    cleanup: () => {
      if (listening) signal?.removeEventListener('abort', onAbort);
      listening = false;
    },
  };
  return new RetryingStream(driver, { signal, maxRetries: setup.maxRetries, retry: setup.retry });
}

/** The SDK's error for an in-stream `error` event (what its `Stream` iterator throws). */
function streamError(event: ServerSentEvent, headers: Headers): APIError {
  // As the SDK: the parsed body (its `error.type` read by the constructor), else the raw text.
  let body: object | string = event.data;
  try {
    body = JSON.parse(event.data) ?? event.data;
  } catch {
    // Not JSON: the raw text is the body.
  }
  return new APIError(undefined, body, undefined, headers);
}

/**
 * The SSE events of one attempt, straight from the SDK's `Stream.rawEvents` (a plain iterator,
 * not an async generator: `next` hands on the SDK's promise, no extra hop per event). An
 * in-stream failure seen by `apply` is reported by rejecting the next `next()`, so the retry
 * loop treats it like the SDK iterator's throw (retried before the first token).
 */
class SseEvents implements AsyncIterableIterator<ServerSentEvent> {
  readonly headers: Headers;
  readonly #events: AsyncGenerator<ServerSentEvent, void, unknown>;
  readonly #controller: AbortController;
  #failed = false;
  #failure: unknown;

  constructor(response: Response, controller: AbortController) {
    this.headers = response.headers;
    this.#controller = controller;
    this.#events = Stream.rawEvents(response, controller);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<ServerSentEvent>> {
    if (this.#failed) return Promise.reject(this.#failure);
    return this.#events.next() as Promise<IteratorResult<ServerSentEvent>>;
  }

  /** Ends the attempt with `error`: the request is aborted, as the SDK does when it throws. */
  fail(error: unknown): void {
    if (this.#failed) return;
    this.#failed = true;
    this.#failure = error;
    this.#controller.abort();
    this.#events.return(undefined).catch(() => {
      // Torn down on purpose; the failure is reported by `next`.
    });
  }

  async return(): Promise<IteratorResult<ServerSentEvent>> {
    // Aborts the HTTP request even when the body is mid-read.
    this.#controller.abort();
    await this.#events.return(undefined);
    return { value: undefined, done: true };
  }
}
