import {
  type Provider,
  ProviderError,
  type ProviderRequest,
  type ProviderStreamOptions,
  type RetryOptions,
  readEnv,
  type StreamEvent,
  type ThinkingLevel,
  usableApiKey,
} from '@agent/core';
import { type GenerateContentParameters, GoogleGenAI } from '@google/genai';
import { findGeminiModel } from './gemini-models.js';
import { buildGeminiParams } from './gemini-request.js';
import type { GeminiSchemaDialect } from './gemini-schema.js';
import { streamGemini } from './gemini-stream.js';

/** Thinking levels other than `off`. */
export type GeminiBudgetLevel = Exclude<ThinkingLevel, 'off'>;

/** Options of {@link createGeminiProvider}. Every field is optional. */
export interface GeminiProviderOptions {
  /** API key [`GEMINI_API_KEY`, else `GOOGLE_API_KEY`]. */
  apiKey?: string;
  /** API base URL [https://generativelanguage.googleapis.com]. */
  baseURL?: string;
  /** API version path segment [the SDK's default, `v1` in SDK 3.x]. */
  apiVersion?: string;
  /** Extra HTTP headers sent with every request. */
  headers?: Record<string, string>;
  /** Retries of a failed call before the first token (408/409/429/5xx, resets) [3]. */
  maxRetries?: number;
  /** Backoff tuning and an `onRetry` observer; `retry-after` headers or the body's RetryInfo win, capped at 60 s. */
  retry?: RetryOptions;
  /** `thinkingBudget` per level for Gemini 2.5 models [minimal 512, low 2048, medium 8192, high 24576]. */
  thinkingBudgets?: Partial<Record<GeminiBudgetLevel, number>>;
  /** How tool schemas are sent [json-schema: `parametersJsonSchema`]. */
  schemaDialect?: GeminiSchemaDialect;
  /** Receives schema-conversion warnings (once per tool and message) [console.warn]. */
  onWarning?: (message: string) => void;
  /** Provider id in messages and events [google]. */
  id?: string;
  /** `fetch` to use [globalThis.fetch]. */
  fetch?: typeof fetch;
}

/** The Gemini API behind the `Provider` contract. */
export interface GeminiProvider extends Provider {
  /** The SDK parameters this provider would send for `request` (for inspection and tests). */
  buildParams(request: ProviderRequest): GenerateContentParameters;
}

/**
 * A provider for the Gemini API over the official `@google/genai` SDK: streamed text, thought
 * parts and signatures (replayed), function calls with or without ids, usage with cost, tool
 * schemas in Gemini's dialect, and retries before the first token.
 */
export function createGeminiProvider(options: GeminiProviderOptions = {}): GeminiProvider {
  const id = options.id ?? 'google';
  const maxRetries = Math.max(0, options.maxRetries ?? 3);
  const warned = new Set<string>();
  const warn = (message: string) => {
    if (warned.has(message)) return;
    warned.add(message);
    (options.onWarning ?? ((text: string) => console.warn(text)))(message);
  };
  let client: GoogleGenAI | undefined;
  const getClient = (): GoogleGenAI => {
    if (client !== undefined) return client;
    const env = readEnv();
    const apiKey = options.apiKey ?? env.GEMINI_API_KEY ?? env.GOOGLE_API_KEY;
    if (apiKey === undefined || apiKey === '') {
      throw new ProviderError('Gemini API key missing: pass `apiKey` or set GEMINI_API_KEY', {
        provider: id,
        statusCode: 401,
        isRetryable: false,
      });
    }
    client = new GoogleGenAI({
      apiKey: usableApiKey(apiKey, {
        provider: id,
        source:
          options.apiKey !== undefined
            ? 'the apiKey option'
            : env.GEMINI_API_KEY !== undefined
              ? 'GEMINI_API_KEY'
              : 'GOOGLE_API_KEY',
      }),
      httpOptions: {
        ...(options.baseURL === undefined ? {} : { baseUrl: options.baseURL }),
        ...(options.apiVersion === undefined ? {} : { apiVersion: options.apiVersion }),
        ...(options.headers === undefined ? {} : { headers: options.headers }),
      },
    });
    return client;
  };

  const buildParams = (request: ProviderRequest): GenerateContentParameters =>
    buildGeminiParams(request, id, options, warn);

  const stream = (
    request: ProviderRequest,
    streamOptions: ProviderStreamOptions = {},
  ): AsyncIterable<StreamEvent> =>
    streamGemini(
      { id, getClient, buildParams, maxRetries, retry: options.retry, fetch: options.fetch },
      request,
      streamOptions,
    );

  return { id, stream, buildParams, modelInfo: findGeminiModel };
}
