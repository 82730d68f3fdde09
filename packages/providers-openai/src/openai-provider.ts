import {
  abortableDelay,
  type Provider,
  ProviderError,
  type ProviderRequest,
  type ProviderStreamOptions,
  type RetryDelayOptions,
  retryDelayMs,
  type StreamEvent,
} from '@agent/core';
import OpenAI, { type ClientOptions } from 'openai';
import { type BuildContext, buildChatRequest, ChatStreamAdapter } from './chat-completions.js';
import { detectCompatServer, type OpenAICompat, resolveCompat } from './compat.js';
import { errorHeaders, toProviderError } from './errors.js';
import { MessageBuilder } from './message-builder.js';
import { addCost, getOpenAIModel } from './models.js';
import { prepareTools } from './openai-tools.js';
import { buildResponsesRequest, ResponsesStreamAdapter } from './responses.js';

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
  /** Backoff tuning (initial delay, caps, jitter source). */
  retry?: RetryDelayOptions;
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
      apiKey,
      maxRetries: 0,
    };
    if (baseURL !== undefined) clientOptions.baseURL = baseURL;
    if (options.timeoutMs !== undefined) clientOptions.timeout = options.timeoutMs;
    if (options.headers !== undefined) clientOptions.defaultHeaders = options.headers;
    if (options.organization !== undefined) clientOptions.organization = options.organization;
    if (options.project !== undefined) clientOptions.project = options.project;
    client = new OpenAI(clientOptions);
    return client;
  };

  async function* stream(
    request: ProviderRequest,
    streamOptions: ProviderStreamOptions = {},
  ): AsyncGenerator<StreamEvent> {
    const signal = streamOptions.signal;
    const builder = new MessageBuilder(id, request.model);
    const aborted = (cause?: unknown) =>
      builder.fail('aborted', new ProviderError('Aborted', { provider: id, cause }));
    const failed = (error: unknown) =>
      builder.fail('error', withProvider(toProviderError(error, id), id));
    if (signal?.aborted) {
      yield aborted(signal.reason);
      return;
    }
    yield { type: 'start', model: request.model, provider: id };

    let context: BuildContext;
    let body: ReturnType<typeof buildChatRequest> | ReturnType<typeof buildResponsesRequest>;
    try {
      const tools = prepareTools(request.tools, { strict: compat.strictTools, warn, warned });
      context = {
        compat,
        tools,
        reasoning: getOpenAIModel(request.model)?.reasoning ?? true,
        providerId: id,
      };
      body =
        api === 'chat'
          ? buildChatRequest(request, context)
          : buildResponsesRequest(request, context);
      getClient();
    } catch (error) {
      yield failed(error);
      return;
    }

    const out: StreamEvent[] = [];
    for (let attempt = 0; ; attempt++) {
      try {
        const sdk = getClient();
        const requestOptions = { signal, maxRetries: 0 } as const;
        if (api === 'chat') {
          const adapter = new ChatStreamAdapter(builder, context.tools, request.model, addCost);
          const chunks = await sdk.chat.completions.create(
            body as ReturnType<typeof buildChatRequest>,
            requestOptions,
          );
          for await (const chunk of chunks) {
            adapter.handle(chunk, out);
            for (const event of out) yield event;
            out.length = 0;
          }
          if (signal?.aborted) {
            yield aborted(signal.reason);
            return;
          }
          const terminal = adapter.finish(out);
          for (const event of out) yield event;
          out.length = 0;
          yield terminal;
          return;
        }
        const adapter = new ResponsesStreamAdapter(builder, context.tools, request.model, addCost, {
          keepReasoningWithoutEncryptedContent: !compat.statelessResponses,
        });
        const events = await sdk.responses.create(
          body as ReturnType<typeof buildResponsesRequest>,
          requestOptions,
        );
        for await (const event of events) {
          adapter.handle(event, out);
          for (const streamed of out) yield streamed;
          out.length = 0;
        }
        if (signal?.aborted) {
          yield aborted(signal.reason);
          return;
        }
        const terminal = adapter.finish(out);
        for (const event of out) yield event;
        out.length = 0;
        yield terminal;
        return;
      } catch (error) {
        // Events of the chunk that failed were applied to the message; flush them so the
        // error's partial message and the events seen agree.
        for (const event of out) yield event;
        out.length = 0;
        if (signal?.aborted) {
          yield aborted(signal.reason);
          return;
        }
        const providerError = toProviderError(error, id);
        if (!providerError.isRetryable || builder.hasOutput || attempt >= maxRetries) {
          yield builder.fail('error', withProvider(providerError, id));
          return;
        }
        try {
          await abortableDelay(retryDelayMs(attempt, errorHeaders(error), options.retry), signal);
        } catch {
          yield aborted(signal?.reason);
          return;
        }
      }
    }
  }

  return {
    id,
    api,
    compat,
    baseURL,
    stream,
  };
}

function withProvider(error: ProviderError, provider: string): ProviderError {
  if (error.provider !== undefined) return error;
  return new ProviderError(error.message, {
    provider,
    isRetryable: error.isRetryable,
    ...(error.statusCode === undefined ? {} : { statusCode: error.statusCode }),
    ...(error.responseBody === undefined ? {} : { responseBody: error.responseBody }),
    cause: error.cause ?? error,
  });
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}
