import {
  type AssistantContent,
  type AssistantMessage,
  type Citation,
  emptyUsage,
  type Provider,
  ProviderError,
  type ProviderRequest,
  type ProviderStreamOptions,
  RetryingStream,
  type RetryOptions,
  type StopReason,
  type StreamDriver,
  type StreamEvent,
  type ThinkingLevel,
  type ToolCallContent,
  type ToolChoice,
  type ToolDefinition,
  type Usage,
} from '@agent/core';
import Anthropic, { APIError } from '@anthropic-ai/sdk';
import { type ServerSentEvent, Stream } from '@anthropic-ai/sdk/core/streaming';
import type {
  ToolChoice as AnthropicToolChoice,
  MessageCreateParamsStreaming,
  RawMessageStreamEvent,
  TextBlockParam,
  ThinkingConfigParam,
  Tool,
} from '@anthropic-ai/sdk/resources';
import { toProviderError } from './anthropic-errors.js';
import { toAnthropicMessages } from './anthropic-messages.js';
import { findAnthropicModel, withAnthropicCost } from './anthropic-models.js';
import {
  type AnthropicProgrammaticOptions,
  applyProgrammaticToolCalling,
  ProgrammaticCapture,
  programmaticSetting,
  type StreamedServerToolUse,
} from './anthropic-programmatic.js';

/** Thinking levels other than `off`. */
export type AnthropicThinkingLevel = Exclude<ThinkingLevel, 'off'>;

/** Options of {@link createAnthropicProvider}. Every field is optional. */
export interface AnthropicProviderOptions {
  /** API key [`ANTHROPIC_API_KEY`]. */
  apiKey?: string;
  /** API base URL [`ANTHROPIC_BASE_URL`, else https://api.anthropic.com]. */
  baseURL?: string;
  /** Extra HTTP headers sent with every request (e.g. `anthropic-beta`). */
  headers?: Record<string, string>;
  /** Retries of a failed call before the first token (408/409/429/5xx/529, resets) [3]. */
  maxRetries?: number;
  /** Backoff tuning and an `onRetry` observer; a server's `retry-after-ms`/`retry-after` wins, capped at 60 s. */
  retry?: RetryOptions;
  /** Marks system prompt, last tool and last message with `cache_control` [false]. */
  promptCaching?: boolean | { ttl: '5m' | '1h' };
  /** `budget_tokens` per thinking level [minimal 1024, low 4096, medium 10000, high 32000]. */
  thinkingBudgets?: Partial<Record<AnthropicThinkingLevel, number>>;
  /** `max_tokens` when the request sets none [the model's catalogue limit, else 8192]. */
  defaultMaxOutputTokens?: number;
  /** Provider id in messages and events [anthropic]. */
  id?: string;
  /** A configured SDK client to use instead of building one (its retries are not disabled). */
  client?: Anthropic;
  /**
   * Load deferred tools natively: every deferred tool is sent with `defer_loading`, and the
   * agent's `tool_search` results name what they loaded in `tool_reference` blocks, so the tool
   * list never changes and stays cached [the models that support it: Opus/Sonnet 4.5 and later].
   */
  nativeToolSearch?: boolean;
  /**
   * Anthropic's programmatic tool calling: Claude may write code, run in Anthropic's container,
   * that calls the tools (all, or those named); each call reaches the loop as an ordinary tool
   * call, through the same gate and hooks [off]. See anthropic-programmatic.ts.
   */
  programmaticToolCalling?: boolean | AnthropicProgrammaticOptions;
}

const defaultThinkingBudgets: Record<AnthropicThinkingLevel, number> = {
  minimal: 1024,
  low: 4096,
  medium: 10_000,
  high: 32_000,
};

/** The Anthropic Messages API behind the `Provider` contract. */
export interface AnthropicProvider extends Provider {
  /** The request body this provider would send for `request` (for inspection and tests). */
  buildParams(request: ProviderRequest): MessageCreateParamsStreaming;
}

/**
 * A provider for the Anthropic Messages API over the official SDK: streamed text, thinking
 * (signatures kept for replay, redacted thinking), tool use with streamed input JSON, images,
 * usage with cache tokens and cost, prompt caching, and retries before the first token.
 */
export function createAnthropicProvider(options: AnthropicProviderOptions = {}): AnthropicProvider {
  const id = options.id ?? 'anthropic';
  const maxRetries = Math.max(0, options.maxRetries ?? 3);
  let client = options.client;
  const getClient = (): Anthropic => {
    if (client !== undefined) return client;
    const env = readEnv();
    const apiKey = options.apiKey ?? env.ANTHROPIC_API_KEY;
    if (apiKey === undefined || apiKey === '') {
      throw new ProviderError('Anthropic API key missing: pass `apiKey` or set ANTHROPIC_API_KEY', {
        provider: id,
        statusCode: 401,
        isRetryable: false,
      });
    }
    client = new Anthropic({
      apiKey,
      // Our retry loop governs (retry-after cap, only before the first token).
      maxRetries: 0,
      ...(options.baseURL === undefined ? {} : { baseURL: options.baseURL }),
      ...(options.headers === undefined ? {} : { defaultHeaders: options.headers }),
    });
    return client;
  };

  const buildParams = (request: ProviderRequest): MessageCreateParamsStreaming =>
    buildAnthropicParams(request, id, options);
  const defersTools = (model: string): boolean =>
    options.nativeToolSearch ?? findAnthropicModel(model)?.toolSearch === true;

  const stream = (
    request: ProviderRequest,
    streamOptions: ProviderStreamOptions = {},
  ): AsyncIterable<StreamEvent> => {
    const signal = streamOptions.signal;
    const state = new AnthropicStreamState(id, request.model);
    let params: MessageCreateParamsStreaming | undefined;
    // Our own controller per attempt, linked to the caller's signal by one listener per stream
    // that `cleanup` removes: the SDK's listener then sits on this short-lived signal, so a
    // long-lived caller signal collects nothing, and `cancel` can abort the request too.
    let attempt: SseEvents | undefined;
    let controller: AbortController | undefined;
    const onAbort = (): void => controller?.abort(signal?.reason);
    let listening = false;
    const driver: StreamDriver<ServerSentEvent> = {
      open: async () => {
        params ??= buildParams(request);
        // A retry: the failed attempt's request goes, as the SDK's iterator aborts it on a throw.
        controller?.abort();
        const current = new AbortController();
        controller = current;
        if (signal !== undefined && !listening) {
          listening = true;
          signal.addEventListener('abort', onAbort, { once: true });
        }
        if (signal?.aborted === true) current.abort(signal.reason);
        const response = await getClient()
          .messages.create(params, { signal: current.signal, maxRetries: 0 })
          .asResponse();
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
        state.apply(parsed, out);
      },
      finish: (out) => {
        out.push(state.finish());
      },
      fail: (reason, error) => state.fail(reason, error),
      toError: (caught) => {
        const { error, headers } = toProviderError(caught, id);
        return { error, hints: headers };
      },
      abortError: () => abortError(id, signal),
      get streamedContent() {
        return state.streamedContent;
      },
      reset: () => state.reset(),
      cancel: () => controller?.abort(),
      // Kept after cleanup: the retry loop ends (cleanup) before it cancels on an early stop.
      cleanup: () => {
        if (listening) signal?.removeEventListener('abort', onAbort);
        listening = false;
      },
    };
    return new RetryingStream(driver, { signal, maxRetries, retry: options.retry });
  };

  return { id, stream, buildParams, defersTools, modelInfo: findAnthropicModel };
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

function abortError(providerId: string, signal: AbortSignal | undefined): ProviderError {
  return new ProviderError('Aborted', { provider: providerId, cause: signal?.reason });
}

function readEnv(): Record<string, string | undefined> {
  const processLike = (globalThis as { process?: { env?: Record<string, string | undefined> } })
    .process;
  return processLike?.env ?? {};
}

function cacheControl(options: AnthropicProviderOptions) {
  const caching = options.promptCaching;
  if (caching === undefined || caching === false) return undefined;
  return caching === true
    ? { type: 'ephemeral' as const }
    : { type: 'ephemeral' as const, ttl: caching.ttl };
}

function toolChoiceParam(choice: ToolChoice): AnthropicToolChoice {
  if (choice === 'auto') return { type: 'auto' };
  if (choice === 'none') return { type: 'none' };
  if (choice === 'required') return { type: 'any' };
  return { type: 'tool', name: choice.name };
}

function toolParam(tool: ToolDefinition): Tool {
  // Anthropic accepts JSON Schema as is; only the meta keyword is dropped.
  const { $schema: _schema, ...schema } = tool.parameters;
  return { name: tool.name, description: tool.description, input_schema: schema };
}

/** Builds the Messages API request body for a provider request. */
export function buildAnthropicParams(
  request: ProviderRequest,
  providerId: string,
  options: AnthropicProviderOptions = {},
): MessageCreateParamsStreaming {
  const info = findAnthropicModel(request.model);
  let maxTokens =
    request.maxOutputTokens ?? options.defaultMaxOutputTokens ?? info?.maxOutputTokens ?? 8192;
  const cache = cacheControl(options);
  const messages = toAnthropicMessages(request.messages, providerId, request.deferredTools);
  const params: MessageCreateParamsStreaming = {
    model: request.model,
    max_tokens: maxTokens,
    messages,
    stream: true,
  };
  if (request.systemPrompt !== undefined && request.systemPrompt !== '') {
    const system: TextBlockParam = { type: 'text', text: request.systemPrompt };
    if (cache !== undefined) system.cache_control = cache;
    params.system = [system];
  }
  if (request.tools !== undefined && request.tools.length > 0) {
    const tools = request.tools.map(toolParam);
    // The breakpoint goes on the last tool sent in full: deferred ones are not in the prompt.
    const last = tools[tools.length - 1];
    if (cache !== undefined && last !== undefined) last.cache_control = cache;
    for (const deferred of request.deferredTools?.tools ?? [])
      tools.push({ ...toolParam(deferred), defer_loading: true });
    params.tools = tools;
    if (request.toolChoice !== undefined) params.tool_choice = toolChoiceParam(request.toolChoice);
  }
  for (const hosted of request.hostedTools ?? []) {
    if (hosted.type !== 'web_search') continue;
    // Anthropic's server-side web search: the model searches within this call; results come
    // back as server-tool blocks (not part of our contract) and citations on the text.
    const search: Record<string, unknown> = { type: 'web_search_20250305', name: 'web_search' };
    if (hosted.maxUses !== undefined) search.max_uses = hosted.maxUses;
    if (hosted.allowedDomains !== undefined && hosted.allowedDomains.length > 0)
      search.allowed_domains = [...hosted.allowedDomains];
    else if (hosted.blockedDomains !== undefined && hosted.blockedDomains.length > 0)
      search.blocked_domains = [...hosted.blockedDomains];
    params.tools = [
      ...(params.tools ?? []),
      search as unknown as NonNullable<typeof params.tools>[number],
    ];
  }
  applyProgrammaticToolCalling(
    params,
    request,
    programmaticSetting(options.programmaticToolCalling),
  );
  if (cache !== undefined) {
    const last = messages[messages.length - 1];
    if (last !== undefined) {
      if (typeof last.content === 'string')
        last.content = [{ type: 'text', text: last.content, cache_control: cache }];
      const block = last.content[last.content.length - 1];
      if (block !== undefined && 'cache_control' in block === false && canCache(block.type))
        (block as { cache_control?: unknown }).cache_control = cache;
    }
  }
  const level = request.thinkingLevel;
  if (level !== undefined && level !== 'off' && canThink(params)) {
    let budget = options.thinkingBudgets?.[level] ?? defaultThinkingBudgets[level];
    const ceiling = info?.maxOutputTokens;
    // max_tokens must exceed the thinking budget and leave room for the answer.
    if (maxTokens <= budget) maxTokens = budget + Math.max(1024, maxTokens);
    if (ceiling !== undefined && maxTokens > ceiling) {
      maxTokens = ceiling;
      budget = Math.min(budget, ceiling - 1024);
    }
    params.max_tokens = maxTokens;
    const thinking: ThinkingConfigParam = {
      type: 'enabled',
      budget_tokens: Math.max(1024, budget),
    };
    params.thinking = thinking;
    // The API only accepts the default temperature while thinking.
  } else if (request.temperature !== undefined) {
    // No longer in the SDK's types (deprecated by the API for newer models); sent when asked.
    (params as MessageCreateParamsStreaming & { temperature?: number }).temperature =
      request.temperature;
  }
  return params;
}

/**
 * Whether the API accepts thinking for this request: not with a forced tool choice (`any` or
 * one tool), and not when the turn being continued after tool results does not start with a
 * thinking block (its reasoning came from another provider or ran without thinking). Both
 * would be a 400; the request goes without thinking instead.
 */
function canThink(params: MessageCreateParamsStreaming): boolean {
  const choice = params.tool_choice?.type;
  if (choice === 'any' || choice === 'tool') return false;
  const messages = params.messages;
  const last = messages[messages.length - 1];
  if (last?.role !== 'user' || typeof last.content === 'string') return true;
  if (!last.content.some((block) => block.type === 'tool_result')) return true;
  const turn = messages[messages.length - 2];
  if (turn?.role !== 'assistant' || typeof turn.content === 'string') return true;
  const first = turn.content[0]?.type;
  return first === 'thinking' || first === 'redacted_thinking';
}

function canCache(type: string): boolean {
  return type === 'text' || type === 'image' || type === 'tool_result' || type === 'tool_use';
}

/**
 * The streamed text of one block, kept as its pieces and joined when read (at the block's end).
 * `text += delta` builds a rope with one node per delta that lives as long as the stream, and
 * V8's young-generation GC copies it again and again: over 2,000-delta streams that took ~7x the
 * GC time of the raw SDK loop; with an array of pieces it is ~1.4x.
 */
class StreamedText {
  #pieces: string[];

  constructor(initial: string) {
    this.#pieces = [initial];
  }

  append(piece: string): void {
    this.#pieces.push(piece);
  }

  /** The text so far; joins the pieces once, so reading it again is free. */
  get value(): string {
    const pieces = this.#pieces;
    if (pieces.length === 1) return pieces[0] ?? '';
    // One concatenation loop after the last piece: ~3x faster than `join('')` for thousands of
    // small pieces, and the rope it builds no longer lives through the stream's GC cycles.
    let text = '';
    for (const piece of pieces) text += piece;
    this.#pieces = [text];
    return text;
  }
}

type BlockState =
  | { kind: 'text'; index: number; text: StreamedText; citations?: Citation[] }
  | { kind: 'thinking'; index: number; thinking: StreamedText; signature: string }
  | { kind: 'redacted'; index: number; data: string }
  | { kind: 'tool'; index: number; id: string; name: string; json: StreamedText }
  | StreamedServerToolUse
  | { kind: 'ignored' };

const stopReasons: Record<string, StopReason> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  pause_turn: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'toolUse',
};

/** Turns raw SSE events into our stream events and the final message. */
class AnthropicStreamState {
  finished = false;
  /** True once a content delta was emitted: no retry after that. */
  streamedContent = false;
  #started = false;
  #content: AssistantContent[] = [];
  // Indexed by the API's block index (a dense array: faster than a Map on the per-delta path).
  #blocks: Array<BlockState | undefined> = [];
  #usage: Usage = emptyUsage();
  #stopReason: StopReason = 'stop';
  #refusal = false;
  #model: string;
  #programmatic = new ProgrammaticCapture();
  readonly #providerId: string;
  readonly #timestamp = Date.now();

  constructor(providerId: string, model: string) {
    this.#providerId = providerId;
    this.#model = model;
  }

  /** Forgets a failed attempt that streamed nothing. */
  reset(): void {
    this.finished = false;
    this.#content = [];
    this.#blocks = [];
    this.#usage = emptyUsage();
    this.#stopReason = 'stop';
    this.#refusal = false;
    this.#programmatic = new ProgrammaticCapture();
  }

  /** Appends the events that `event` produces to `out` (no per-event allocation beyond them). */
  apply(event: RawMessageStreamEvent, out: StreamEvent[]): void {
    // The hot case first: one content_block_delta per streamed token.
    switch (event.type) {
      case 'content_block_delta': {
        const state = this.#blocks[event.index];
        const delta = event.delta;
        if (state === undefined || state.kind === 'ignored') return;
        if (state.kind === 'server') {
          if (delta.type === 'input_json_delta') state.json += delta.partial_json;
          return;
        }
        if (delta.type === 'text_delta' && state.kind === 'text') {
          state.text.append(delta.text);
          this.streamedContent = true;
          out.push({ type: 'text-delta', index: state.index, delta: delta.text });
        } else if (delta.type === 'citations_delta' && state.kind === 'text') {
          const citation = citationOf(delta.citation);
          if (citation !== undefined) {
            if (state.citations === undefined) state.citations = [];
            state.citations.push(citation);
          }
        } else if (delta.type === 'thinking_delta' && state.kind === 'thinking') {
          state.thinking.append(delta.thinking);
          this.streamedContent = true;
          out.push({ type: 'thinking-delta', index: state.index, delta: delta.thinking });
        } else if (delta.type === 'signature_delta' && state.kind === 'thinking') {
          state.signature += delta.signature;
        } else if (delta.type === 'input_json_delta' && state.kind === 'tool') {
          this.streamedContent = true;
          if (delta.partial_json !== '') {
            state.json.append(delta.partial_json);
            out.push({ type: 'tool-call-delta', index: state.index, delta: delta.partial_json });
          }
        }
        return;
      }
      case 'message_start': {
        const usage = event.message.usage;
        this.#usage = this.#makeUsage(
          usage.input_tokens,
          usage.output_tokens,
          usage.cache_read_input_tokens,
          usage.cache_creation_input_tokens,
        );
        if (!this.#started) {
          this.#started = true;
          out.push({ type: 'start', model: this.#model, provider: this.#providerId });
        }
        return;
      }
      case 'content_block_start': {
        const block = event.content_block;
        const index = this.#content.length;
        switch (block.type) {
          case 'text':
            this.#blocks[event.index] = { kind: 'text', index, text: new StreamedText(block.text) };
            this.#content.push({ type: 'text', text: block.text });
            out.push({ type: 'text-start', index });
            if (block.text !== '') out.push({ type: 'text-delta', index, delta: block.text });
            return;
          case 'thinking':
            this.#blocks[event.index] = {
              kind: 'thinking',
              index,
              thinking: new StreamedText(block.thinking),
              signature: block.signature ?? '',
            };
            this.#content.push({ type: 'thinking', thinking: block.thinking });
            out.push({ type: 'thinking-start', index });
            return;
          case 'redacted_thinking':
            this.#blocks[event.index] = { kind: 'redacted', index, data: block.data };
            this.#content.push({ type: 'thinking', thinking: '', redacted: true });
            out.push({ type: 'thinking-start', index });
            return;
          case 'tool_use':
            this.#programmatic.toolUse(block);
            this.#blocks[event.index] = {
              kind: 'tool',
              index,
              id: block.id,
              name: block.name,
              json: new StreamedText(''),
            };
            this.#content.push({ type: 'toolCall', id: block.id, name: block.name, arguments: '' });
            out.push({ type: 'tool-call-start', index, id: block.id, name: block.name });
            return;
          case 'server_tool_use':
            // Not part of the contract; kept only for replaying the calls its code makes.
            this.#blocks[event.index] = this.#programmatic.serverToolUse(block);
            return;
          default:
            // Other server-tool blocks (search results, code output) are not part of the contract.
            this.#blocks[event.index] = { kind: 'ignored' };
            return;
        }
      }
      case 'content_block_stop': {
        const state = this.#blocks[event.index];
        if (state === undefined) return;
        this.streamedContent = true;
        switch (state.kind) {
          case 'text': {
            const text = state.text.value;
            this.#content[state.index] =
              state.citations === undefined
                ? { type: 'text', text }
                : { type: 'text', text, citations: state.citations };
            out.push({ type: 'text-end', index: state.index, text });
            return;
          }
          case 'thinking': {
            const thinking = state.thinking.value;
            const block: AssistantContent = { type: 'thinking', thinking };
            if (state.signature !== '') block.signature = state.signature;
            this.#content[state.index] = block;
            const end: StreamEvent = { type: 'thinking-end', index: state.index, thinking };
            if (state.signature !== '') end.signature = state.signature;
            out.push(end);
            return;
          }
          case 'redacted':
            this.#content[state.index] = {
              type: 'thinking',
              thinking: '',
              signature: state.data,
              redacted: true,
            };
            out.push({
              type: 'thinking-end',
              index: state.index,
              thinking: '',
              signature: state.data,
              redacted: true,
            });
            return;
          case 'tool': {
            // A call without parameters streams no input JSON at all.
            const json = state.json.value;
            const toolCall: ToolCallContent = {
              type: 'toolCall',
              id: state.id,
              name: state.name,
              arguments: json === '' ? '{}' : json,
            };
            this.#content[state.index] = toolCall;
            out.push({ type: 'tool-call-end', index: state.index, toolCall });
            return;
          }
          case 'server':
          case 'ignored':
            return;
          default: {
            const _exhaustive: never = state;
            return void _exhaustive;
          }
        }
      }
      case 'message_delta': {
        const usage = event.usage;
        this.#usage = this.#makeUsage(
          usage.input_tokens ?? this.#usage.input,
          usage.output_tokens,
          usage.cache_read_input_tokens ?? this.#usage.cacheRead,
          usage.cache_creation_input_tokens ?? this.#usage.cacheWrite,
        );
        this.#programmatic.container(event.delta.container);
        const reason = event.delta.stop_reason;
        if (reason === 'refusal') this.#refusal = true;
        else if (reason !== null) this.#stopReason = stopReasons[reason] ?? 'stop';
        out.push({ type: 'usage', usage: this.#usage });
        return;
      }
      case 'message_stop':
        this.finished = true;
        return;
      default: {
        const _exhaustive: never = event;
        return void _exhaustive;
      }
    }
  }

  #makeUsage(
    input: number,
    output: number,
    cacheRead: number | null,
    cacheWrite: number | null,
  ): Usage {
    const usage: Usage = {
      input,
      output,
      cacheRead: cacheRead ?? 0,
      cacheWrite: cacheWrite ?? 0,
      totalTokens: input + output + (cacheRead ?? 0) + (cacheWrite ?? 0),
    };
    return withAnthropicCost(usage, this.#model);
  }

  #message(stopReason: StopReason, content: AssistantContent[]): AssistantMessage {
    return {
      role: 'assistant',
      content,
      provider: this.#providerId,
      model: this.#model,
      usage: this.#usage,
      stopReason,
      timestamp: this.#timestamp,
    };
  }

  /** The terminal event after the SDK stream ended. */
  finish(): StreamEvent {
    if (!this.finished)
      return this.fail(
        'error',
        new ProviderError('Anthropic stream ended before message_stop (connection cut?)', {
          provider: this.#providerId,
          isRetryable: true,
        }),
      );
    if (this.#refusal)
      return this.fail(
        'error',
        new ProviderError('Anthropic model refused the request (stop_reason refusal)', {
          provider: this.#providerId,
          isRetryable: false,
        }),
      );
    // At the output-token limit a tool call may be cut anywhere: its raw partial input goes to
    // the loop (an invalid-args result, never executed); one cut before any input is dropped,
    // since an empty input would read as `{}` and run.
    const content = this.#programmatic.annotate(
      this.#settledContent(this.#stopReason === 'length' ? 'length' : 'finished'),
    );
    const hasCalls = content.some((block) => block.type === 'toolCall');
    const stopReason = this.#stopReason === 'stop' && hasCalls ? 'toolUse' : this.#stopReason;
    return { type: 'done', message: this.#message(stopReason, content) };
  }

  /** The terminal `error` event: partial text and thinking kept, unfinished tool calls dropped. */
  fail(reason: 'error' | 'aborted', error: ProviderError): StreamEvent {
    const message = this.#message(reason, this.#settledContent('failed'));
    message.errorMessage = error.message;
    return { type: 'error', reason, error, message };
  }

  /**
   * The content with blocks that never saw `content_block_stop` settled: streamed text kept,
   * cut-off thoughts kept unsigned (never replayed as thinking). Unfinished tool calls are
   * dropped after a failure and keep their raw input otherwise; at the token limit a call
   * without any input is dropped too.
   */
  #settledContent(ending: 'finished' | 'length' | 'failed'): AssistantContent[] {
    const content = [...this.#content];
    const dropped = new Set<number>();
    for (const state of this.#blocks) {
      if (state === undefined || state.kind === 'ignored' || state.kind === 'server') continue;
      const block = content[state.index];
      if (state.kind === 'text') {
        const text = state.text.value;
        if (block?.type === 'text' && block.text !== text)
          content[state.index] = { type: 'text', text };
      } else if (state.kind === 'thinking') {
        if (block?.type === 'thinking' && block.signature === undefined)
          content[state.index] = { type: 'thinking', thinking: state.thinking.value };
      } else if (state.kind === 'tool' && block?.type === 'toolCall') {
        // Only a stopped call has arguments (at least `{}`).
        const unfinished = block.arguments === '';
        const json = state.json.value;
        if (unfinished && ending !== 'failed' && json !== '')
          content[state.index] = { ...block, arguments: json };
        else if (unfinished || (ending === 'length' && json === '')) dropped.add(state.index);
      }
    }
    return dropped.size === 0 ? content : content.filter((_block, index) => !dropped.has(index));
  }
}

/** Our citation from an Anthropic `web_search_result_location` (other kinds cite documents, not the web). */
function citationOf(raw: unknown): Citation | undefined {
  const value = raw as {
    type?: string;
    url?: unknown;
    title?: unknown;
    cited_text?: unknown;
  } | null;
  if (value?.type !== 'web_search_result_location' || typeof value.url !== 'string')
    return undefined;
  const citation: Citation = { url: value.url };
  if (typeof value.title === 'string' && value.title !== '') citation.title = value.title;
  if (typeof value.cited_text === 'string' && value.cited_text !== '')
    citation.citedText = value.cited_text;
  return citation;
}
