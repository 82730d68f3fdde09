// Reading a Chat Completions stream: chunks into our stream events, tool calls by index.
import {
  emptyUsage,
  ProviderError,
  type StopReason,
  type StreamEvent,
  tokenCount,
  type Usage,
} from '@agent/core';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { generateToolCallId, type MessageBuilder } from '../message-builder.js';
import { errorChunkError } from '../openai-errors.js';
import { finalToolCall, type PreparedTools } from '../openai-tools.js';

interface ToolCallState {
  index: number;
  id: string;
  /** False when the id was generated because the server sent none. */
  providedId: boolean;
  name: string;
}

/**
 * Turns Chat Completions chunks into stream events. Handles parallel tool calls by `index`,
 * missing tool-call ids (generated), reasoning deltas of compatible servers
 * (`reasoning_content` / `reasoning`), and usage in a final chunk or Groq's `x_groq`.
 */
export class ChatStreamAdapter {
  readonly #builder: MessageBuilder;
  readonly #tools: PreparedTools;
  readonly #model: string;
  readonly #addCost: (usage: Usage, model: string) => Usage;
  #textIndex: number | undefined;
  #thinkingIndex: number | undefined;
  readonly #toolCalls: ToolCallState[] = [];
  readonly #toolCallByKey = new Map<number | string, ToolCallState>();
  #lastKey: number | string | undefined;
  #finishReason: string | undefined;
  #usage: Usage | undefined;

  constructor(
    builder: MessageBuilder,
    tools: PreparedTools,
    model: string,
    addCost: (usage: Usage, model: string) => Usage,
  ) {
    this.#builder = builder;
    this.#tools = tools;
    this.#model = model;
    this.#addCost = addCost;
  }

  /** Applies one chunk; throws a `ProviderError` for a chunk of the wrong shape. */
  handle(chunk: ChatCompletionChunk, out: StreamEvent[]): void {
    if (typeof chunk !== 'object' || chunk === null)
      throw malformed(`expected a JSON object, got ${JSON.stringify(chunk)}`);
    const choices = (chunk as { choices?: unknown }).choices;
    const usage =
      chunk.usage ?? (chunk as { x_groq?: { usage?: ChatCompletionChunk['usage'] } }).x_groq?.usage;
    if (usage !== undefined && usage !== null) this.#usage = toUsage(usage);
    if (choices === undefined || choices === null) {
      const record = chunk as unknown as Record<string, unknown>;
      // A server's error sent as a chunk (vLLM's `{"object": "error", "message", "code"}`): its
      // message, status and overflow flag, not "malformed".
      if (
        record.object === 'error' ||
        record.error !== undefined ||
        typeof record.message === 'string'
      )
        throw errorChunkError(record);
      // Anything else without choices (a keep-alive `{}`, a server's metadata chunk) carries
      // nothing of the answer: skipped, as unknown events of the other APIs are.
      return;
    }
    if (!Array.isArray(choices)) throw malformed('"choices" is not an array');
    const choice = choices[0] as ChatCompletionChunk.Choice | undefined;
    if (choice === undefined) return;
    const delta = choice.delta as
      | (ChatCompletionChunk.Choice.Delta & { reasoning_content?: unknown; reasoning?: unknown })
      | undefined;
    if (delta !== undefined && delta !== null) {
      const reasoning = delta.reasoning_content ?? delta.reasoning;
      if (typeof reasoning === 'string' && reasoning !== '') this.#thinking(reasoning, out);
      if (typeof delta.content === 'string' && delta.content !== '') this.#text(delta.content, out);
      if (typeof delta.refusal === 'string' && delta.refusal !== '') this.#text(delta.refusal, out);
      if (delta.tool_calls !== undefined && delta.tool_calls !== null) {
        if (!Array.isArray(delta.tool_calls)) throw malformed('"tool_calls" is not an array');
        for (const call of delta.tool_calls) this.#toolCall(call, out);
      }
    }
    if (typeof choice.finish_reason === 'string') this.#finishReason = choice.finish_reason;
  }

  /** True once a `finish_reason` arrived. */
  get finished(): boolean {
    return this.#finishReason !== undefined;
  }

  /** The error of a stream that ended before a `finish_reason` (retryable). */
  unfinishedError(): ProviderError {
    return new ProviderError('The stream ended before the model finished (no finish_reason)', {
      isRetryable: true,
    });
  }

  /** The terminal event once the stream ended; throws when it ended before the model finished. */
  finish(out: StreamEvent[]): StreamEvent {
    if (this.#finishReason === undefined) throw this.unfinishedError();
    // Argument deltas for an index that never got a name: nothing could run them, and a
    // nameless call sent back next turn costs a 400.
    const nameless = this.#toolCalls.find((call) => call.name === '');
    if (nameless !== undefined)
      throw malformed(`tool call ${nameless.id} has arguments but no name`);
    // OpenRouter's (and LiteLLM's) way of saying the upstream provider failed mid-answer: what
    // came is a fragment, not an answer. Both end before the calls do: a call cut by the filter
    // is never ended, so it is not kept (its arguments may stop anywhere).
    if (this.#finishReason === 'error')
      throw new ProviderError(
        'The server ended the answer with finish_reason "error" (the model failed mid-answer)',
        { isRetryable: true },
      );
    if (this.#finishReason === 'content_filter')
      throw new ProviderError('The response was stopped by the content filter', {
        isRetryable: false,
      });
    this.#closeText(out);
    this.#closeThinking(out);
    for (const call of this.#toolCalls) {
      this.#builder.endToolCall(
        call.index,
        finalToolCall(
          {
            id: call.id,
            name: call.name,
            rawArguments: this.#builder.toolCallArguments(call.index),
          },
          this.#tools.plans,
        ),
        out,
      );
    }
    this.#builder.usage(this.#addCost(this.#usage ?? emptyUsage(), this.#model), out);
    const reason = this.#finishReason;
    const stop: StopReason =
      reason === 'length'
        ? 'length'
        : this.#toolCalls.length > 0 || reason === 'tool_calls' || reason === 'function_call'
          ? 'toolUse'
          : 'stop';
    return this.#builder.done(stop);
  }

  #text(delta: string, out: StreamEvent[]): void {
    if (this.#textIndex === undefined) {
      this.#closeThinking(out);
      this.#textIndex = this.#builder.startText(out);
    }
    this.#builder.appendText(this.#textIndex, delta, out);
  }

  #thinking(delta: string, out: StreamEvent[]): void {
    if (this.#thinkingIndex === undefined) {
      this.#closeText(out);
      this.#thinkingIndex = this.#builder.startThinking(out);
    }
    this.#builder.appendThinking(this.#thinkingIndex, delta, out);
  }

  #closeText(out: StreamEvent[]): void {
    if (this.#textIndex === undefined) return;
    this.#builder.endText(this.#textIndex, out);
    this.#textIndex = undefined;
  }

  #closeThinking(out: StreamEvent[]): void {
    if (this.#thinkingIndex === undefined) return;
    this.#builder.endThinking(this.#thinkingIndex, out);
    this.#thinkingIndex = undefined;
  }

  #toolCall(call: ChatCompletionChunk.Choice.Delta.ToolCall, out: StreamEvent[]): void {
    if (typeof call !== 'object' || call === null) throw malformed('a tool call is not an object');
    const id = typeof call.id === 'string' && call.id !== '' ? call.id : undefined;
    const name = call.function?.name;
    const args = call.function?.arguments;
    // Without an index, a call with an id or a name is a new call; anything else continues
    // the last one.
    const key: number | string =
      typeof call.index === 'number'
        ? call.index
        : (id ??
          (typeof name === 'string' && name !== ''
            ? `call-${this.#toolCalls.length}`
            : (this.#lastKey ?? 'call-0')));
    this.#lastKey = key;
    let state = this.#toolCallByKey.get(key);
    // Some servers reuse index 0 for every parallel call but give each its own id.
    if (state !== undefined && id !== undefined && state.providedId && id !== state.id)
      state = undefined;
    if (state === undefined) {
      this.#closeText(out);
      this.#closeThinking(out);
      const callId = id ?? generateToolCallId();
      const callName = typeof name === 'string' ? name : '';
      state = {
        index: this.#builder.startToolCall(callId, callName, out),
        id: callId,
        providedId: id !== undefined,
        name: callName,
      };
      this.#toolCalls.push(state);
      this.#toolCallByKey.set(key, state);
    } else if (typeof name === 'string' && name !== '' && name !== state.name) {
      // A name streamed in pieces (rare); the final block carries the whole name.
      state.name = state.name === '' ? name : state.name + name;
    }
    if (typeof args === 'string' && args !== '')
      this.#builder.appendToolCall(state.index, args, out);
  }
}

function toUsage(usage: NonNullable<ChatCompletionChunk['usage']>): Usage {
  const prompt = tokenCount(usage.prompt_tokens) ?? 0;
  const completion = tokenCount(usage.completion_tokens) ?? 0;
  const cached = tokenCount(usage.prompt_tokens_details?.cached_tokens) ?? 0;
  const cacheWrite = tokenCount(usage.prompt_tokens_details?.cache_write_tokens) ?? 0;
  return {
    // prompt_tokens includes cache reads and writes; reasoning tokens are in completion_tokens.
    input: Math.max(0, prompt - cached - cacheWrite),
    output: completion,
    cacheRead: Math.min(cached, prompt),
    cacheWrite: Math.min(cacheWrite, Math.max(0, prompt - cached)),
    totalTokens: tokenCount(usage.total_tokens) ?? prompt + completion,
  };
}

function malformed(detail: string): ProviderError {
  return new ProviderError(`Malformed Chat Completions chunk: ${detail}`, { isRetryable: false });
}
