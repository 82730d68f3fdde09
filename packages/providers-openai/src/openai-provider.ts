import {
  notAnEventStream,
  type Provider,
  ProviderError,
  type ProviderRequest,
  type ProviderStreamOptions,
  type RetryOptions,
  type StreamEvent,
  sameOriginFetch,
  usableApiKey,
} from '@agent/core';
import OpenAI, { type ClientOptions } from 'openai';
import type {
  ChatCompletionChunk,
  ChatCompletionCreateParamsStreaming,
} from 'openai/resources/chat/completions';
import type {
  ResponseCreateParamsStreaming,
  ResponseStreamEvent,
} from 'openai/resources/responses/responses';
import { type BuildContext, buildChatRequest } from './chat/chat-request.js';
import { ChatStreamAdapter } from './chat/chat-stream.js';
import { detectCompatServer, type OpenAICompat, resolveCompat } from './compat.js';
import { addCost, getOpenAIModel, supportsToolSearch } from './openai-models.js';
import { openAIStream } from './openai-stream.js';
import { prepareTools } from './openai-tools.js';
import {
  type OpenAIProgrammaticOptions,
  programmaticSetting,
} from './responses/responses-programmatic.js';
import { buildResponsesRequest } from './responses/responses-request.js';
import { ResponsesStreamAdapter } from './responses/responses-stream.js';

/** Which OpenAI API a provider speaks. */
export type OpenAIApi = 'chat' | 'responses';

/** Options of {@link createOpenAIProvider}. Everything is optional. */
export interface OpenAIProviderOptions {
  /** `chat` (Chat Completions) or `responses` [responses for OpenAI itself, chat for other servers]. */
  api?: OpenAIApi;
  /** API key [env `OPENAI_API_KEY`; a placeholder for non-OpenAI servers, which often need none]. */
  apiKey?: string;
  /** Base URL of an OpenAI-compatible server, e.g. `http://localhost:11434/v1` [env `OPENAI_BASE_URL`, else OpenAI]. */
  baseURL?: string;
  /** Provider id stamped on messages [`openai` for OpenAI, else the detected server, e.g. `ollama`]. */
  id?: string;
  /** What the server accepts; auto-detected from `baseURL`, these fields override the guess. */
  compat?: Partial<OpenAICompat>;
  /** Retries of a failed call before the first token (408, 409, 429, 5xx, resets) [2]. */
  maxRetries?: number;
  /** Backoff tuning (initial delay, caps, jitter source) and an `onRetry` observer. */
  retry?: RetryOptions;
  /** Timeout of one HTTP attempt in ms [600000]. */
  timeoutMs?: number;
  /** Extra headers on every request. */
  headers?: Record<string, string>;
  /** OpenAI organization and project ids [env `OPENAI_ORG_ID`, `OPENAI_PROJECT_ID`]. */
  organization?: string;
  project?: string;
  /** Receives warnings, e.g. a tool sent without strict mode [console.warn]. */
  onWarning?: (message: string) => void;
  /** More options for the `openai` client (e.g. `fetch`, `logLevel`); `maxRetries` is always 0. */
  clientOptions?: Omit<ClientOptions, 'maxRetries' | 'apiKey' | 'baseURL'>;
  /** Environment to read defaults from [process.env]. */
  env?: Record<string, string | undefined>;
  /**
   * Responses API: load deferred tools natively — the agent's `tool_search` becomes a
   * client-executed `tool_search` tool, and its results come back as `tool_search_output` items
   * carrying the loaded definitions, so the tool list never changes [OpenAI with gpt-5.4 and
   * later]. Chat Completions has no such tool: always the client-side list there.
   */
  nativeToolSearch?: boolean;
  /**
   * OpenAI's programmatic tool calling (Responses API): the model may write a program, run by
   * OpenAI, that calls the tools (all, or those named); each call reaches the loop as an ordinary
   * tool call, through the same gate and hooks [off]. See responses-programmatic.ts.
   */
  programmaticToolCalling?: boolean | OpenAIProgrammaticOptions;
}

/** An OpenAI (or OpenAI-compatible) provider. */
export interface OpenAIProvider extends Provider {
  /** The API it speaks. */
  readonly api: OpenAIApi;
  /** The compat settings in force (detected, then overridden). */
  readonly compat: Readonly<OpenAICompat>;
  /** The base URL in use, or `undefined` for OpenAI's default. */
  readonly baseURL: string | undefined;
}

const placeholderApiKey = 'not-needed';

/**
 * Creates a provider over the official `openai` SDK, speaking Chat Completions or the Responses
 * API to OpenAI or any compatible server. `stream` never throws: failures (HTTP errors, resets,
 * a cut or malformed stream, abort) end in one `error` event with a typed `ProviderError`.
 * Retries happen before the first token only, honouring `retry-after-ms`/`retry-after`
 * (capped at 60 s); the SDK's own retries are disabled.
 */
export function createOpenAIProvider(options: OpenAIProviderOptions = {}): OpenAIProvider {
  const env = options.env ?? (typeof process === 'undefined' ? {} : process.env);
  const baseURL = options.baseURL ?? nonEmpty(env.OPENAI_BASE_URL);
  const server = detectCompatServer(baseURL);
  const compat = resolveCompat(baseURL, options.compat);
  const api: OpenAIApi = options.api ?? (server === 'openai' ? 'responses' : 'chat');
  const id =
    options.id ??
    (server === 'openai' ? 'openai' : server === 'generic' ? 'openai-compatible' : server);
  const apiKey =
    options.apiKey ??
    nonEmpty(env.OPENAI_API_KEY) ??
    (server === 'openai' ? undefined : placeholderApiKey);
  const maxRetries = Math.max(0, options.maxRetries ?? 2);
  const warn = options.onWarning ?? ((message: string) => console.warn(`[${id}] ${message}`));
  const warned = new WeakSet<object>();
  const programmatic = programmaticSetting(options.programmaticToolCalling);
  if (programmatic !== undefined && api === 'chat')
    warn('programmaticToolCalling needs the Responses API (api: "responses"); ignored');
  let client: OpenAI | undefined;

  const getClient = (): OpenAI => {
    if (client !== undefined) return client;
    if (apiKey === undefined)
      throw new ProviderError(
        'No OpenAI API key: set OPENAI_API_KEY or pass apiKey to createOpenAIProvider',
        { provider: id, statusCode: 401, isRetryable: false },
      );
    const clientOptions: ClientOptions = {
      ...options.clientOptions,
      apiKey: usableApiKey(apiKey, {
        provider: id,
        source: options.apiKey === undefined ? 'OPENAI_API_KEY' : 'the apiKey option',
      }),
      maxRetries: 0,
    };
    // The SDK prints to the console (console.error) what it then throws: a malformed chunk of
    // the stream came out as "Could not parse message into JSON: … From chunk: …" on the caller's
    // stderr (a CLI's terminal, a server's log) before the error event said it once. Quiet unless
    // asked for (the `logLevel` option, or OPENAI_LOG, which the SDK reads).
    if (clientOptions.logLevel === undefined && nonEmpty(env.OPENAI_LOG) === undefined)
      clientOptions.logLevel = 'off';
    if (baseURL !== undefined) clientOptions.baseURL = baseURL;
    // Every request is for a streamed answer: a 200 that is a JSON document or an HTML page (a
    // proxy's, a server ignoring `stream: true`) says why it is not one, instead of the SDK
    // reading it as an empty stream.
    // The key (and any header given) goes to the base URL's origin only, not where a redirect points.
    const baseFetch = sameOriginFetch(options.clientOptions?.fetch ?? globalThis.fetch, {
      provider: id,
    });
    clientOptions.fetch = async (input, init) => {
      const response = await baseFetch(input, init);
      const notStream = await notAnEventStream(response, id);
      if (notStream !== undefined) throw notStream;
      return response;
    };
    if (options.timeoutMs !== undefined) clientOptions.timeout = options.timeoutMs;
    if (options.headers !== undefined) clientOptions.defaultHeaders = options.headers;
    if (options.organization !== undefined) clientOptions.organization = options.organization;
    if (options.project !== undefined) clientOptions.project = options.project;
    client = new OpenAI(clientOptions);
    return client;
  };

  const stream = (
    request: ProviderRequest,
    streamOptions: ProviderStreamOptions = {},
  ): AsyncIterable<StreamEvent> => {
    const signal = streamOptions.signal;
    // Each attempt has a signal of its own (following `signal`): a stalled one is closed alone.
    const requestOptions = (attempt: AbortSignal) => ({ signal: attempt, maxRetries: 0 });
    // Built on the first attempt (inside the stream, so a bad request is an `error` event).
    let context: BuildContext | undefined;
    const prepare = (): BuildContext => {
      if (context !== undefined) return context;
      // Deferred tools are converted too: their definitions travel in search outputs, and their
      // calls' arguments come back through the same strict plans.
      const definitions =
        request.deferredTools === undefined
          ? request.tools
          : [...(request.tools ?? []), ...request.deferredTools.tools];
      const tools = prepareTools(definitions, { strict: compat.strictTools, warn, warned });
      if (api === 'chat' && (request.hostedTools?.length ?? 0) > 0)
        warn('hostedTools (web search) need the Responses API (api: "responses"); ignored');
      context = {
        compat,
        tools,
        reasoning: getOpenAIModel(request.model)?.reasoning ?? true,
        providerId: id,
        ...(programmatic === undefined ? {} : { programmatic }),
      };
      return context;
    };
    const common = {
      providerId: id,
      model: request.model,
      signal,
      maxRetries,
      retry: options.retry,
    };
    if (api === 'chat') {
      let body: ChatCompletionCreateParamsStreaming | undefined;
      return openAIStream<ChatCompletionChunk>({
        ...common,
        open: async (attempt) => {
          body ??= buildChatRequest(request, prepare());
          return getClient().chat.completions.create(body, requestOptions(attempt));
        },
        createAdapter: (builder) =>
          new ChatStreamAdapter(builder, prepare().tools, request.model, addCost),
      });
    }
    let body: ResponseCreateParamsStreaming | undefined;
    return openAIStream<ResponseStreamEvent>({
      ...common,
      open: async (attempt) => {
        body ??= buildResponsesRequest(request, prepare());
        return getClient().responses.create(body, requestOptions(attempt));
      },
      createAdapter: (builder) =>
        new ResponsesStreamAdapter(builder, prepare().tools, request.model, addCost, {
          keepReasoningWithoutEncryptedContent: !compat.statelessResponses,
          ...(request.deferredTools === undefined
            ? {}
            : { searchTool: request.deferredTools.searchTool }),
        }),
    });
  };

  const defersTools = (model: string): boolean =>
    api === 'responses' &&
    (options.nativeToolSearch ?? (server === 'openai' && supportsToolSearch(model)));

  return {
    id,
    api,
    compat,
    baseURL,
    defersTools,
    stream,
    modelInfo: (model) => {
      const info = getOpenAIModel(model);
      return info === undefined
        ? undefined
        : { id: info.id, contextWindow: info.contextWindow, maxOutputTokens: info.maxOutputTokens };
    },
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}
