import {
  abortError,
  type Provider,
  type ProviderRequest,
  type ProviderStreamOptions,
  RetryingStream,
  type RetryOptions,
  type StreamDriver,
  type StreamEvent,
} from '@agent/core';
import type {
  LanguageModelV4,
  LanguageModelV4StreamPart,
  LanguageModelV4StreamResult,
  SharedV4ProviderOptions,
  SharedV4Warning,
} from '@ai-sdk/provider';
import { toProviderError } from './ai-sdk-errors.js';
import { toCallOptions } from './ai-sdk-messages.js';
import { AiSdkStreamState } from './ai-sdk-stream.js';

/** Options of {@link fromAiSdkModel}. */
export interface AiSdkProviderOptions {
  /** Our provider id [the model's `provider`, e.g. `anthropic.messages`]. */
  id?: string;
  /** Retries of a retryable failure (408/409/429/5xx, connection reset) before the first token [3]. */
  maxRetries?: number;
  /** Backoff delays and the `onRetry` observer. */
  retry?: RetryOptions;
  /** Passed to every call as the AI SDK's `providerOptions` (e.g. `{ anthropic: { … } }`). */
  providerOptions?: SharedV4ProviderOptions;
  /** Extra HTTP headers for every call. */
  headers?: Record<string, string | undefined>;
  /** Receives the warnings the model reports (an unsupported setting, a hosted tool left out). */
  onWarning?: (warning: SharedV4Warning) => void;
}

/**
 * Any AI SDK language model (specification v4: `@ai-sdk/openai`, `@ai-sdk/anthropic`,
 * `@ai-sdk/amazon-bedrock`, `@ai-sdk/mistral`, … or your own) as our `Provider`: text, reasoning
 * and tool calls stream as our events (arguments as they arrive), usage and the stop reason end
 * the message, failures arrive as the `error` event (never a throw), aborting cancels the call.
 * Retryable failures are retried before the first token, honouring `retry-after`. The model id
 * is the model's own; `ProviderRequest.model` is not sent (the model object is bound to one).
 */
export function fromAiSdkModel(
  model: LanguageModelV4,
  options: AiSdkProviderOptions = {},
): Provider {
  const id = options.id ?? model.provider;
  const maxRetries = Math.max(0, options.maxRetries ?? 3);

  const stream = (
    request: ProviderRequest,
    streamOptions: ProviderStreamOptions = {},
  ): AsyncIterable<StreamEvent> => {
    const signal = streamOptions.signal;
    const state = new AiSdkStreamState(id, model.modelId, options.onWarning);
    let controller: AbortController | undefined;
    let parts: StreamParts | undefined;
    // One listener on the caller's signal per stream (removed by `cleanup`): it aborts the
    // attempt's own controller, which the model's fetch listens to, and releases a pending read
    // of a model that does not watch its signal.
    const onAbort = (): void => {
      controller?.abort(signal?.reason);
      parts?.cancel(signal?.reason);
    };
    let listening = false;
    if (request.hostedTools !== undefined && request.hostedTools.length > 0) {
      options.onWarning?.({
        type: 'other',
        message: `hosted tools (${request.hostedTools.map((tool) => tool.type).join(', ')}) are not passed to AI SDK models; give the model its provider tools instead`,
      });
    }

    const driver: StreamDriver<LanguageModelV4StreamPart> = {
      open: async () => {
        controller?.abort();
        parts?.cancel(undefined);
        const current = new AbortController();
        controller = current;
        if (signal !== undefined && !listening) {
          listening = true;
          signal.addEventListener('abort', onAbort, { once: true });
        }
        if (signal?.aborted === true) current.abort(signal.reason);
        const result = await untilAborted(
          model.doStream({
            ...toCallOptions(request, options.providerOptions),
            abortSignal: current.signal,
            ...(options.headers === undefined ? {} : { headers: options.headers }),
          }),
          current.signal,
        );
        parts = new StreamParts(result.stream.getReader());
        return parts;
      },
      apply: (part, out) => state.apply(part, out),
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
      cancel: () => {
        controller?.abort();
        parts?.cancel(undefined);
      },
      cleanup: () => {
        if (listening) signal?.removeEventListener('abort', onAbort);
        listening = false;
      },
    };
    return new RetryingStream(driver, { signal, maxRetries, retry: options.retry });
  };

  return { id, stream };
}

/**
 * `doStream`'s promise, settled by the attempt's abort too: a model that does not watch its
 * `abortSignal` (a custom model, a middleware awaiting something else) held the call for ever —
 * neither the caller's abort nor the idle timeout, which both abort the attempt, ended it. A
 * stream that arrives after the abort is cancelled.
 */
function untilAborted(
  promise: PromiseLike<LanguageModelV4StreamResult>,
  signal: AbortSignal,
): Promise<LanguageModelV4StreamResult> {
  return new Promise((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (result) => {
        signal.removeEventListener('abort', onAbort);
        if (signal.aborted) {
          result.stream?.cancel(signal.reason).catch(() => {
            // Already errored or closed: nothing to release.
          });
        }
        resolve(result);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/**
 * The parts of one `doStream` as an iterator whose `next()` rejects on an `error` part, so a
 * failure the model streams takes the same path (retry before the first token, or the `error`
 * event) as one it threw.
 */
class StreamParts implements AsyncIterableIterator<LanguageModelV4StreamPart> {
  #cancelled = false;

  constructor(private readonly reader: ReadableStreamDefaultReader<LanguageModelV4StreamPart>) {}

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<LanguageModelV4StreamPart>> {
    return this.reader.read().then(throwOnErrorPart);
  }

  cancel(reason: unknown): void {
    if (this.#cancelled) return;
    this.#cancelled = true;
    this.reader.cancel(reason).catch(() => {
      // The stream already failed or closed: nothing left to release.
    });
  }

  async return(): Promise<IteratorResult<LanguageModelV4StreamPart>> {
    this.cancel(undefined);
    return { done: true, value: undefined };
  }
}

type ReadResult = Awaited<
  ReturnType<ReadableStreamDefaultReader<LanguageModelV4StreamPart>['read']>
>;

function throwOnErrorPart(result: ReadResult): IteratorResult<LanguageModelV4StreamPart> {
  if (result.done) return { done: true, value: undefined };
  if (result.value.type === 'error') throw result.value.error;
  return result;
}
