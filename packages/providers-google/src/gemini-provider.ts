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
  type Usage,
} from '@agent/core';
import {
  FunctionCallingConfigMode,
  type FunctionDeclaration,
  ThinkingLevel as GeminiThinkingLevel,
  type GenerateContentConfig,
  type GenerateContentParameters,
  type GenerateContentResponse,
  type GenerateContentResponseUsageMetadata,
  GoogleGenAI,
  type Part,
  type ThinkingConfig,
} from '@google/genai';
import { toProviderError } from './gemini-errors.js';
import { toGeminiContents } from './gemini-messages.js';
import { findGeminiModel, withGeminiCost } from './gemini-models.js';
import { dropAbsentNulls, type GeminiSchemaDialect, toGeminiSchema } from './gemini-schema.js';

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

const defaultThinkingBudgets: Record<GeminiBudgetLevel, number> = {
  minimal: 512,
  low: 2048,
  medium: 8192,
  high: 24_576,
};

const geminiLevels: Record<GeminiBudgetLevel, GeminiThinkingLevel> = {
  minimal: GeminiThinkingLevel.MINIMAL,
  low: GeminiThinkingLevel.LOW,
  medium: GeminiThinkingLevel.MEDIUM,
  high: GeminiThinkingLevel.HIGH,
};

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
      apiKey,
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
  ): AsyncIterable<StreamEvent> => {
    const signal = streamOptions.signal;
    const state = new GeminiStreamState(id, request);
    // Our own controller: closing the SDK's stream early does not cancel its fetch.
    const controller = new AbortController();
    const forwardAbort = () => controller.abort(signal?.reason);
    if (signal?.aborted) forwardAbort();
    else signal?.addEventListener('abort', forwardAbort, { once: true });
    // Per-call fetch: keeps the response headers (retry-after) that the SDK's errors drop.
    let lastResponse: Response | undefined;
    const baseFetch = options.fetch ?? globalThis.fetch;
    let params: GenerateContentParameters | undefined;
    const driver: StreamDriver<GenerateContentResponse> = {
      open: async () => {
        const sdk = getClient();
        params ??= buildParams(request);
        lastResponse = undefined;
        return sdk.models.generateContentStream({
          ...params,
          config: {
            ...params.config,
            httpOptions: {
              fetch: async (input, init) => {
                const response = await baseFetch(input, init);
                lastResponse = response;
                return response;
              },
            },
            abortSignal: controller.signal,
          },
        });
      },
      apply: (chunk, out) => state.apply(chunk, out),
      finish: (out) => state.finish(out),
      fail: (reason, error) => state.fail(reason, error),
      toError: (caught) => {
        const { error, retryHeaders } = toProviderError(caught, id, lastResponse?.headers);
        return { error, hints: retryHeaders };
      },
      abortError: () => abortError(id, signal),
      get streamedContent() {
        return state.streamedContent;
      },
      reset: () => state.reset(),
      cancel: () => controller.abort(),
      cleanup: () => signal?.removeEventListener('abort', forwardAbort),
    };
    return new RetryingStream(driver, { signal, maxRetries, retry: options.retry });
  };

  return { id, stream, buildParams, modelInfo: findGeminiModel };
}

function abortError(providerId: string, signal: AbortSignal | undefined): ProviderError {
  return new ProviderError('Aborted', { provider: providerId, cause: signal?.reason });
}

function readEnv(): Record<string, string | undefined> {
  const processLike = (globalThis as { process?: { env?: Record<string, string | undefined> } })
    .process;
  return processLike?.env ?? {};
}

function toolConfig(choice: ToolChoice): GenerateContentConfig['toolConfig'] {
  if (choice === 'auto') return { functionCallingConfig: { mode: FunctionCallingConfigMode.AUTO } };
  if (choice === 'none') return { functionCallingConfig: { mode: FunctionCallingConfigMode.NONE } };
  if (choice === 'required')
    return { functionCallingConfig: { mode: FunctionCallingConfigMode.ANY } };
  return {
    functionCallingConfig: {
      mode: FunctionCallingConfigMode.ANY,
      allowedFunctionNames: [choice.name],
    },
  };
}

function thinkingConfig(
  request: ProviderRequest,
  options: GeminiProviderOptions,
): ThinkingConfig | undefined {
  const level = request.thinkingLevel;
  if (level === undefined) return undefined;
  const info = findGeminiModel(request.model);
  const usesLevels = info?.thinkingLevels ?? /(^|\/)gemini-3/.test(request.model);
  if (level === 'off') {
    // Gemini 3 cannot turn thinking off; 2.5 Pro needs at least 128 tokens.
    if (usesLevels) return { thinkingLevel: GeminiThinkingLevel.LOW, includeThoughts: false };
    return { thinkingBudget: request.model.includes('pro') ? 128 : 0, includeThoughts: false };
  }
  if (usesLevels) return { thinkingLevel: geminiLevels[level], includeThoughts: true };
  return {
    thinkingBudget: options.thinkingBudgets?.[level] ?? defaultThinkingBudgets[level],
    includeThoughts: true,
  };
}

/** Builds the SDK parameters for a provider request (without signal and transport options). */
export function buildGeminiParams(
  request: ProviderRequest,
  providerId: string,
  options: GeminiProviderOptions = {},
  warn: (message: string) => void = (message) => console.warn(message),
): GenerateContentParameters {
  const config: GenerateContentConfig = {
    // We run our own retries; continuation hops would re-send on their own.
    automaticContinuation: false,
  };
  if (request.systemPrompt !== undefined && request.systemPrompt !== '')
    config.systemInstruction = request.systemPrompt;
  if (request.tools !== undefined && request.tools.length > 0) {
    const dialect = options.schemaDialect ?? 'json-schema';
    const declarations: FunctionDeclaration[] = request.tools.map((tool) => {
      const { schema, warnings } = toGeminiSchema(tool.parameters, dialect);
      for (const warning of warnings)
        warn(`Gemini tool "${tool.name}": ${warning} (still enforced when validating arguments)`);
      const declaration: FunctionDeclaration = { name: tool.name, description: tool.description };
      // The OpenAPI form rejects an OBJECT without properties ("should be non-empty for OBJECT
      // type"): a parameterless tool is declared without `parameters`.
      if (dialect === 'openapi') {
        if (hasProperties(schema)) declaration.parameters = schema;
      } else declaration.parametersJsonSchema = schema;
      return declaration;
    });
    config.tools = [{ functionDeclarations: declarations }];
    if (request.toolChoice !== undefined) {
      const tools = toolConfig(request.toolChoice);
      if (tools !== undefined) config.toolConfig = tools;
    }
  }
  for (const hosted of request.hostedTools ?? []) {
    if (hosted.type !== 'web_search') continue;
    // Grounding with Google Search: run by the API; sources come back as groundingMetadata.
    config.tools = [...(config.tools ?? []), { googleSearch: {} }];
    if ((hosted.allowedDomains?.length ?? 0) > 0 || (hosted.blockedDomains?.length ?? 0) > 0)
      warn('Gemini search grounding takes no domain lists; allowedDomains/blockedDomains ignored');
  }
  if (request.maxOutputTokens !== undefined) config.maxOutputTokens = request.maxOutputTokens;
  if (request.temperature !== undefined) config.temperature = request.temperature;
  const thinking = thinkingConfig(request, options);
  if (thinking !== undefined) config.thinkingConfig = thinking;
  return {
    model: request.model,
    contents: toGeminiContents(request.messages, providerId),
    config,
  };
}

function hasProperties(schema: Record<string, unknown>): boolean {
  const properties = schema.properties;
  return (
    (properties !== null && typeof properties === 'object' && Object.keys(properties).length > 0) ||
    schema.anyOf !== undefined
  );
}

type OpenBlock = { kind: 'text' | 'thinking'; index: number; text: string; signature?: string };

// Finish reasons that end the turn normally; every other one ends it with an error event.
const normalFinish: Record<string, StopReason> = { STOP: 'stop', MAX_TOKENS: 'length' };

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

  /** Usage from the last `usageMetadata`: cached prompt tokens apart, thoughts counted as output. */
  #usage(): Usage {
    const meta = this.#usageMetadata;
    if (meta === undefined) return emptyUsage();
    const cacheRead = meta.cachedContentTokenCount ?? 0;
    const input = Math.max(0, (meta.promptTokenCount ?? 0) - cacheRead);
    const output = (meta.candidatesTokenCount ?? 0) + (meta.thoughtsTokenCount ?? 0);
    return withGeminiCost(
      {
        input,
        output,
        cacheRead,
        cacheWrite: 0,
        totalTokens: meta.totalTokenCount ?? input + output + cacheRead,
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
    const stop = normalFinish[reason];
    if (stop === undefined) {
      const detail = this.#finishMessage === undefined ? '' : `: ${this.#finishMessage}`;
      out.push(
        this.fail(
          'error',
          new ProviderError(`Gemini stopped with finish reason ${reason}${detail}`, {
            provider: this.#providerId,
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
