import {
  type Provider,
  ProviderError,
  type ProviderRequest,
  type ProviderStreamOptions,
  type RetryOptions,
  readEnv,
  type StreamEvent,
  sameOriginFetch,
  type ThinkingLevel,
  usableApiKey,
} from '@agent/core';
import Anthropic from '@anthropic-ai/sdk';
import type { MessageCreateParamsStreaming } from '@anthropic-ai/sdk/resources';
import { findAnthropicModel } from './anthropic-models.js';
import type { AnthropicProgrammaticOptions } from './anthropic-programmatic.js';
import { buildAnthropicParams } from './anthropic-request.js';
import { streamAnthropic } from './anthropic-stream.js';

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
  /** `fetch` the client sends its requests with [globalThis.fetch]. */
  fetch?: typeof fetch;
  /**
   * Requests sent to continue a turn the API paused (`pause_turn`, a server tool such as web
   * search running long): the paused response goes back as it is and the model carries on, all
   * in one assistant message. Past this many the stream ends with an error saying so [5]. Each
   * paused turn is handed to the stream's `onCheckpoint` before its continuation is sent (the
   * loop's journal records it, so a resumed run continues from it).
   */
  maxPauseContinuations?: number;
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
  const maxPauseContinuations = Math.max(0, options.maxPauseContinuations ?? 5);
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
      apiKey: usableApiKey(apiKey, {
        provider: id,
        source: options.apiKey === undefined ? 'ANTHROPIC_API_KEY' : 'the apiKey option',
      }),
      // Our retry loop governs (retry-after cap, only before the first token).
      maxRetries: 0,
      // The key and the headers given (a gateway's own key) go to the base URL's origin only.
      fetch: sameOriginFetch(options.fetch ?? globalThis.fetch, { provider: id }),
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
  ): AsyncIterable<StreamEvent> =>
    streamAnthropic(
      { id, getClient, buildParams, maxRetries, retry: options.retry, maxPauseContinuations },
      request,
      streamOptions,
    );

  return { id, stream, buildParams, defersTools, modelInfo: findAnthropicModel };
}
