// Reading Gemini's stream: the StreamDriver of one call (a per-call fetch that keeps the
// response headers) and the state machine that turns SDK chunks into our stream events.
import {
  type AssistantContent,
  type AssistantMessage,
  abortError,
  type Citation,
  emptyUsage,
  notAnEventStream,
  ProviderError,
  type ProviderRequest,
  type ProviderStreamOptions,
  RetryingStream,
  type RetryOptions,
  type StopReason,
  type StreamDriver,
  type StreamEvent,
  sameOriginFetch,
  type ToolCallContent,
  tokenCount,
  type Usage,
} from '@agent/core';
import type {
  GenerateContentParameters,
  GenerateContentResponse,
  GenerateContentResponseUsageMetadata,
  GoogleGenAI,
  Part,
} from '@google/genai';
import { toProviderError } from './gemini-errors.js';
import { withGeminiCost } from './gemini-models.js';
import { dropAbsentNulls } from './gemini-schema.js';

/** What one stream needs from its provider. */
export interface GeminiStreamSetup {
  /** Provider id in messages and events. */
  readonly id: string;
  readonly getClient: () => GoogleGenAI;
  readonly buildParams: (request: ProviderRequest) => GenerateContentParameters;
  /** Retries before the first token. */
  readonly maxRetries: number;
  readonly retry: RetryOptions | undefined;
  /** `fetch` to use [globalThis.fetch]. */
  readonly fetch: typeof fetch | undefined;
}

/** Streams one request: a `RetryingStream` over the SDK's chunks of each attempt. */
export function streamGemini(
  setup: GeminiStreamSetup,
  request: ProviderRequest,
  streamOptions: ProviderStreamOptions = {},
): AsyncIterable<StreamEvent> {
  const { id } = setup;
  const signal = streamOptions.signal;
  const state = new GeminiStreamState(id, request);
  // Our own controller per attempt: closing the SDK's stream early does not cancel its fetch, and
  // a stalled attempt is closed without ending the call (a retry opens the next one).
  let controller = new AbortController();
  const forwardAbort = () => controller.abort(signal?.reason);
  if (signal?.aborted) forwardAbort();
  else signal?.addEventListener('abort', forwardAbort, { once: true });
  // Per-call fetch: keeps the response headers (retry-after) that the SDK's errors drop.
  let lastResponse: Response | undefined;
  // The key (x-goog-api-key, which fetch keeps on a redirect to another origin) goes to the base
  // URL's origin only.
  const baseFetch = sameOriginFetch(setup.fetch ?? globalThis.fetch, { provider: id });
  let params: GenerateContentParameters | undefined;
  // A failure a chunk revealed (a resampled finish reason): the attempt's next read rejects with
  // it, so the retry loop treats it as a failed attempt.
  let failure: ProviderError | undefined;
  const driver: StreamDriver<GenerateContentResponse> = {
    open: async () => {
      const sdk = setup.getClient();
      params ??= setup.buildParams(request);
      lastResponse = undefined;
      if (controller.signal.aborted && signal?.aborted !== true) controller = new AbortController();
      const attempt = controller.signal;
      failure = undefined;
      const chunks = await sdk.models.generateContentStream({
        ...params,
        config: {
          ...params.config,
          httpOptions: {
            fetch: async (input, init) => {
              const response = await baseFetch(input, init);
              lastResponse = response;
              // A 200 that is a JSON document or an HTML page (a proxy's) says why it is not a
              // stream (the SDK read it as "Incomplete JSON segment at the end").
              const notStream = await notAnEventStream(response, id);
              if (notStream !== undefined) throw notStream;
              return response;
            },
          },
          abortSignal: attempt,
        },
      });
      const iterator = chunks[Symbol.asyncIterator]();
      return {
        [Symbol.asyncIterator]() {
          return this;
        },
        next: () => (failure === undefined ? iterator.next() : Promise.reject(failure)),
        return: async () => {
          await iterator.return?.(undefined);
          return { value: undefined, done: true };
        },
      } as AsyncIterableIterator<GenerateContentResponse>;
    },
    apply: (chunk, out) => {
      state.apply(chunk, out);
      failure ??= state.resampled();
    },
    finish: (out) => state.finish(out),
    fail: (reason, error) => state.fail(reason, error),
    toError: (caught) => toProviderError(caught, id, lastResponse?.headers),
    abortError: () => abortError(id, signal),
    get streamedContent() {
      return state.streamedContent;
    },
    reset: () => state.reset(),
    cancel: () => controller.abort(),
    cleanup: () => signal?.removeEventListener('abort', forwardAbort),
  };
  return new RetryingStream(driver, { signal, maxRetries: setup.maxRetries, retry: setup.retry });
}

type OpenBlock = { kind: 'text' | 'thinking'; index: number; text: string; signature?: string };

// Finish reasons that end the turn normally; every other one ends it with an error event.
const normalFinish: Record<string, StopReason> = { STOP: 'stop', MAX_TOKENS: 'length' };
/**
 * Finish reasons of a function call the model got wrong — sampled, not a verdict on the request
 * (MALFORMED_FUNCTION_CALL comes with no content at all, now and then): asked again like any
 * retryable failure, while nothing has been streamed.
 */
const resampledFinish = new Set(['MALFORMED_FUNCTION_CALL', 'UNEXPECTED_TOOL_CALL']);

let callCounter = 0;

/** Turns SDK chunks into our stream events and the final message. */
class GeminiStreamState {
  streamedContent = false;
  #started = false;
  #content: AssistantContent[] = [];
  #citations: Citation[] = [];
  #open: OpenBlock | undefined;
  #usageMetadata: GenerateContentResponseUsageMetadata | undefined;
  #finishReason: string | undefined;
  #finishMessage: string | undefined;
  #blockReason: string | undefined;
  readonly #providerId: string;
  readonly #model: string;
  readonly #schemas: Map<string, unknown>;
  readonly #timestamp = Date.now();

  constructor(providerId: string, request: ProviderRequest) {
    this.#providerId = providerId;
    this.#model = request.model;
    this.#schemas = new Map((request.tools ?? []).map((tool) => [tool.name, tool.parameters]));
  }

  reset(): void {
    this.#content = [];
    this.#citations = [];
    this.#open = undefined;
    this.#usageMetadata = undefined;
    this.#finishReason = undefined;
    this.#finishMessage = undefined;
    this.#blockReason = undefined;
  }

  #close(out: StreamEvent[]): void {
    const open = this.#open;
    if (open === undefined) return;
    this.#open = undefined;
    if (open.kind === 'text') {
      this.#content[open.index] = { type: 'text', text: open.text };
      out.push({ type: 'text-end', index: open.index, text: open.text });
      return;
    }
    const block: AssistantContent = { type: 'thinking', thinking: open.text };
    const end: StreamEvent = { type: 'thinking-end', index: open.index, thinking: open.text };
    if (open.signature !== undefined) {
      block.signature = open.signature;
      end.signature = open.signature;
    }
    this.#content[open.index] = block;
    out.push(end);
  }

  #part(part: Part, out: StreamEvent[]): void {
    if (part.functionCall !== undefined) {
      this.#close(out);
      const call = part.functionCall;
      const name = call.name ?? '';
      const generated = call.id === undefined || call.id === '';
      const id = generated ? `call_${Date.now().toString(36)}_${++callCounter}` : (call.id ?? '');
      const args = dropAbsentNulls(call.args ?? {}, this.#schemas.get(name));
      const toolCall: ToolCallContent = {
        type: 'toolCall',
        id,
        name,
        arguments: JSON.stringify(args),
      };
      const metadata: Record<string, unknown> = {};
      if (part.thoughtSignature !== undefined) metadata.thoughtSignature = part.thoughtSignature;
      if (generated) metadata.generatedId = true;
      if (Object.keys(metadata).length > 0) toolCall.providerMetadata = metadata;
      const index = this.#content.length;
      this.#content.push(toolCall);
      this.streamedContent = true;
      out.push({ type: 'tool-call-start', index, id, name });
      out.push({ type: 'tool-call-delta', index, delta: toolCall.arguments });
      out.push({ type: 'tool-call-end', index, toolCall });
      return;
    }
    if (part.text === undefined) return;
    const kind = part.thought === true ? 'thinking' : 'text';
    if (part.text === '' && (kind === 'text' || part.thoughtSignature === undefined)) return;
    if (this.#open?.kind !== kind) {
      this.#close(out);
      const index = this.#content.length;
      this.#open = { kind, index, text: '' };
      this.#content.push(
        kind === 'text' ? { type: 'text', text: '' } : { type: 'thinking', thinking: '' },
      );
      out.push(kind === 'text' ? { type: 'text-start', index } : { type: 'thinking-start', index });
    }
    const open = this.#open;
    if (open === undefined) return;
    if (kind === 'thinking' && part.thoughtSignature !== undefined)
      open.signature = part.thoughtSignature;
    if (part.text === '') return;
    open.text += part.text;
    this.streamedContent = true;
    out.push(
      kind === 'text'
        ? { type: 'text-delta', index: open.index, delta: part.text }
        : { type: 'thinking-delta', index: open.index, delta: part.text },
    );
  }

  /** Appends the events that `chunk` produces to `out`. */
  apply(chunk: GenerateContentResponse, out: StreamEvent[]): void {
    if (!this.#started) {
      this.#started = true;
      out.push({ type: 'start', model: this.#model, provider: this.#providerId });
    }
    // Gemini repeats the running counts on every chunk: keep the last, convert once at the end.
    if (chunk.usageMetadata !== undefined) this.#usageMetadata = chunk.usageMetadata;
    const blockReason = chunk.promptFeedback?.blockReason;
    if (blockReason !== undefined) this.#blockReason = String(blockReason);
    const candidate = chunk.candidates?.[0];
    for (const part of candidate?.content?.parts ?? []) this.#part(part, out);
    for (const grounding of candidate?.groundingMetadata?.groundingChunks ?? []) {
      const uri = grounding.web?.uri;
      if (uri === undefined || this.#citations.some((citation) => citation.url === uri)) continue;
      const citation: Citation = { url: uri };
      if (grounding.web?.title !== undefined && grounding.web.title !== '')
        citation.title = grounding.web.title;
      this.#citations.push(citation);
    }
    if (candidate?.finishReason !== undefined) {
      this.#finishReason = String(candidate.finishReason);
      if (candidate.finishMessage !== undefined) this.#finishMessage = candidate.finishMessage;
    }
  }

  /**
   * A function call the model got wrong (see `resampledFinish`) before anything streamed: the
   * attempt's failure, retried like any other; after content, `finish` reports it.
   */
  resampled(): ProviderError | undefined {
    const reason = this.#finishReason;
    if (reason === undefined || !resampledFinish.has(reason) || this.streamedContent)
      return undefined;
    const detail = this.#finishMessage === undefined ? '' : `: ${this.#finishMessage}`;
    return new ProviderError(`Gemini stopped with finish reason ${reason}${detail}`, {
      provider: this.#providerId,
      isRetryable: true,
    });
  }

  /** Usage from the last `usageMetadata`: cached prompt tokens apart, thoughts counted as output. */
  #usage(): Usage {
    const meta = this.#usageMetadata;
    if (meta === undefined || meta === null) return emptyUsage();
    const prompt = tokenCount(meta.promptTokenCount) ?? 0;
    const cacheRead = Math.min(tokenCount(meta.cachedContentTokenCount) ?? 0, prompt);
    const input = prompt - cacheRead;
    const output =
      (tokenCount(meta.candidatesTokenCount) ?? 0) + (tokenCount(meta.thoughtsTokenCount) ?? 0);
    return withGeminiCost(
      {
        input,
        output,
        cacheRead,
        cacheWrite: 0,
        totalTokens: tokenCount(meta.totalTokenCount) ?? input + output + cacheRead,
      },
      this.#model,
    );
  }

  #message(stopReason: StopReason, content: AssistantContent[]): AssistantMessage {
    return {
      role: 'assistant',
      content,
      provider: this.#providerId,
      model: this.#model,
      usage: this.#usage(),
      stopReason,
      timestamp: this.#timestamp,
    };
  }

  /** The closing events after the SDK stream ended: block ends, usage, then `done` or `error`. */
  finish(out: StreamEvent[]): void {
    if (this.#blockReason !== undefined) {
      out.push(
        this.fail(
          'error',
          new ProviderError(`Gemini blocked the prompt (${this.#blockReason})`, {
            provider: this.#providerId,
            statusCode: 400,
          }),
        ),
      );
      return;
    }
    const reason = this.#finishReason;
    if (reason === undefined) {
      out.push(
        this.fail(
          'error',
          new ProviderError('Gemini stream ended without a finish reason (connection cut?)', {
            provider: this.#providerId,
            isRetryable: true,
          }),
        ),
      );
      return;
    }
    const stop = Object.hasOwn(normalFinish, reason) ? normalFinish[reason] : undefined;
    if (stop === undefined) {
      const detail = this.#finishMessage === undefined ? '' : `: ${this.#finishMessage}`;
      out.push(
        this.fail(
          'error',
          new ProviderError(`Gemini stopped with finish reason ${reason}${detail}`, {
            provider: this.#providerId,
            isRetryable: resampledFinish.has(reason),
          }),
        ),
      );
      return;
    }
    this.#close(out);
    if (this.#citations.length > 0) {
      // Grounding cites the answer as a whole: the sources go on its last text block.
      const last = this.#content.findLastIndex((block) => block.type === 'text');
      const block = this.#content[last];
      if (block?.type === 'text') this.#content[last] = { ...block, citations: this.#citations };
    }
    const hasCalls = this.#content.some((block) => block.type === 'toolCall');
    const message = this.#message(stop === 'stop' && hasCalls ? 'toolUse' : stop, this.#content);
    out.push({ type: 'usage', usage: message.usage });
    out.push({ type: 'done', message });
  }

  /** The terminal `error` event with what arrived so far (function calls arrive whole). */
  fail(reason: 'error' | 'aborted', error: ProviderError): StreamEvent {
    const content = [...this.#content];
    const open = this.#open;
    // An unfinished thought is kept without its signature: it is never replayed as signed.
    if (open !== undefined)
      content[open.index] =
        open.kind === 'text'
          ? { type: 'text', text: open.text }
          : { type: 'thinking', thinking: open.text };
    const message = this.#message(reason, content);
    message.errorMessage = error.message;
    return { type: 'error', reason, error, message };
  }
}
