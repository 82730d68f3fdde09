// Reading a Responses API stream: output items and their deltas into our stream events.
import {
  type Citation,
  emptyUsage,
  ProviderError,
  type StopReason,
  type StreamEvent,
  tokenCount,
  type Usage,
} from '@agent/core';
import type { ResponseStreamEvent, ResponseUsage } from 'openai/resources/responses/responses';
import { generateToolCallId, type MessageBuilder } from '../message-builder.js';
import { isContextOverflow } from '../openai-errors.js';
import { finalToolCall, type PreparedTools } from '../openai-tools.js';
import { ProgramCapture } from './responses-programmatic.js';
import { isServerItem } from './responses-server-items.js';

interface ItemState {
  kind: 'text' | 'thinking' | 'toolCall';
  index: number;
  /** True once the block's end event was emitted. */
  ended: boolean;
  callId?: string;
  name?: string;
  summaryIndex?: number;
}

/**
 * Turns Responses API stream events into stream events: output text and refusals, reasoning
 * summaries (and raw reasoning text of open-weight models), function calls with streamed
 * arguments; the reasoning item (with encrypted content) becomes the thinking block's
 * signature so it can be replayed; items the API's servers ran (web search, file search, code
 * interpreter…) become opaque content, replayed to this provider.
 */
export class ResponsesStreamAdapter {
  readonly #builder: MessageBuilder;
  readonly #tools: PreparedTools;
  readonly #model: string;
  readonly #addCost: (usage: Usage, model: string) => Usage;
  readonly #keepReasoning: boolean;
  /** The agent's search tool, which the model calls as a client `tool_search` (native deferral). */
  readonly #searchTool: string | undefined;
  /** Blocks by `item_id` (text parts by `item_id:content_index`). */
  readonly #items = new Map<string, ItemState>();
  /** Function-call keys by `output_index`, for servers that send no item ids. */
  readonly #callKeys = new Map<number, string>();
  /** Programs (programmatic tool calling) and the calls they made. */
  readonly #programs = new ProgramCapture();
  #terminal: { stop: StopReason; usage: Usage } | undefined;

  constructor(
    builder: MessageBuilder,
    tools: PreparedTools,
    model: string,
    addCost: (usage: Usage, model: string) => Usage,
    options: { keepReasoningWithoutEncryptedContent: boolean; searchTool?: string },
  ) {
    this.#searchTool = options.searchTool;
    this.#builder = builder;
    this.#tools = tools;
    this.#model = model;
    this.#addCost = addCost;
    this.#keepReasoning = options.keepReasoningWithoutEncryptedContent;
  }

  /** Applies one event; throws a `ProviderError` for a failed response or a malformed event. */
  handle(event: ResponseStreamEvent, out: StreamEvent[]): void {
    if (typeof event !== 'object' || event === null || typeof event.type !== 'string')
      throw malformed(`expected an event object with a "type", got ${JSON.stringify(event)}`);
    switch (event.type) {
      case 'response.output_text.delta':
      case 'response.refusal.delta':
        this.#text(event.item_id, event.content_index, event.delta, out);
        return;
      case 'response.reasoning_summary_text.delta':
        this.#thinking(event.item_id, event.delta, out, event.summary_index);
        return;
      case 'response.reasoning_text.delta':
        this.#thinking(event.item_id, event.delta, out);
        return;
      case 'response.function_call_arguments.delta': {
        const state = this.#callState(event.item_id, event.output_index);
        if (state === undefined)
          throw malformed(`arguments for unknown item ${event.item_id ?? event.output_index}`);
        this.#builder.appendToolCall(state.index, event.delta, out);
        return;
      }
      case 'response.output_item.added': {
        const item = event.item;
        if (item.type === 'function_call') {
          const key = item.id ?? `#${event.output_index}`;
          const callId = item.call_id || generateToolCallId();
          const index = this.#builder.startToolCall(callId, item.name, out);
          this.#programs.functionCall(callId, item.caller);
          this.#items.set(key, { kind: 'toolCall', index, ended: false, callId, name: item.name });
          this.#callKeys.set(event.output_index, key);
          if (item.arguments) this.#builder.appendToolCall(index, item.arguments, out);
        } else if (item.type === 'tool_search_call' && this.#searchTool !== undefined) {
          // Its arguments arrive whole with the finished item.
          const key = item.id ?? `#${event.output_index}`;
          const callId = item.call_id || generateToolCallId();
          const index = this.#builder.startToolCall(callId, this.#searchTool, out);
          this.#items.set(key, {
            kind: 'toolCall',
            index,
            ended: false,
            callId,
            name: this.#searchTool,
          });
          this.#callKeys.set(event.output_index, key);
        } else if (item.type === 'program') {
          this.#programs.program(item);
        } else if (item.type === 'reasoning') {
          this.#items.set(item.id, {
            kind: 'thinking',
            index: this.#builder.startThinking(out),
            ended: false,
          });
        }
        return;
      }
      case 'response.output_item.done':
        this.#itemDone(event.item, event.output_index, out);
        return;
      case 'response.completed':
      case 'response.incomplete': {
        const response = event.response;
        const usage = this.#addCost(toUsage(response.usage), this.#model);
        let stop: StopReason = [...this.#items.values()].some((item) => item.kind === 'toolCall')
          ? 'toolUse'
          : 'stop';
        if (event.type === 'response.incomplete') {
          const reason = response.incomplete_details?.reason;
          if (reason === 'content_filter')
            throw new ProviderError('The response was stopped by the content filter', {
              isRetryable: false,
            });
          stop = 'length';
        }
        this.#terminal = { stop, usage };
        return;
      }
      case 'response.failed': {
        const error = event.response.error;
        const code = error?.code ?? '';
        const message = error?.message ?? 'no reason given';
        throw new ProviderError(`The response failed: ${message}`, {
          isRetryable: code === 'server_error' || code === 'rate_limit_exceeded',
          responseBody: JSON.stringify(error ?? null),
          ...(isContextOverflow(code, message) ? { contextOverflow: true } : {}),
        });
      }
      case 'error':
        throw new ProviderError(`Stream error: ${event.message}`, {
          isRetryable: event.code === 'server_error' || event.code === 'rate_limit_exceeded',
          responseBody: JSON.stringify(event),
          ...(isContextOverflow(event.code ?? '', event.message) ? { contextOverflow: true } : {}),
        });
      default:
        return;
    }
  }

  /** True once `response.completed` or `response.incomplete` arrived. */
  get finished(): boolean {
    return this.#terminal !== undefined;
  }

  /** The error of a stream that ended before the response completed (retryable). */
  unfinishedError(): ProviderError {
    return new ProviderError('The stream ended before the response completed', {
      isRetryable: true,
    });
  }

  /**
   * The terminal event once the stream ended; throws when it ended before the response
   * completed. Blocks still open (an incomplete response stops mid-item) are ended first, so
   * a call cut by the token limit reaches the loop, which rejects its partial arguments.
   */
  finish(out: StreamEvent[]): StreamEvent {
    const terminal = this.#terminal;
    if (terminal === undefined) throw this.unfinishedError();
    const open = [...this.#items.values()].filter((state) => !state.ended);
    for (const state of open.sort((a, b) => a.index - b.index)) {
      state.ended = true;
      if (state.kind === 'text') this.#builder.endText(state.index, out);
      else if (state.kind === 'thinking') this.#builder.endThinking(state.index, out);
      else
        this.#builder.endToolCall(
          state.index,
          finalToolCall(
            {
              id: state.callId ?? generateToolCallId(),
              name: state.name ?? '',
              rawArguments: this.#builder.toolCallArguments(state.index),
            },
            this.#tools.plans,
          ),
          out,
        );
    }
    this.#builder.usage(terminal.usage, out);
    const done = this.#builder.done(terminal.stop);
    if (done.type === 'done') this.#programs.annotate(done.message.content);
    return done;
  }

  #text(itemId: string, contentIndex: number, delta: string, out: StreamEvent[]): void {
    const key = `${itemId}:${contentIndex}`;
    let state = this.#items.get(key);
    if (state === undefined) {
      state = { kind: 'text', index: this.#builder.startText(out), ended: false };
      this.#items.set(key, state);
    }
    this.#builder.appendText(state.index, delta, out);
  }

  #callState(itemId: string | undefined, outputIndex: number): ItemState | undefined {
    let state = itemId === undefined ? undefined : this.#items.get(itemId);
    if (state === undefined) {
      const key = this.#callKeys.get(outputIndex);
      state = key === undefined ? undefined : this.#items.get(key);
    }
    return state?.kind === 'toolCall' ? state : undefined;
  }

  #thinking(itemId: string, delta: string, out: StreamEvent[], summaryIndex?: number): void {
    let state = this.#items.get(itemId);
    if (state === undefined) {
      state = { kind: 'thinking', index: this.#builder.startThinking(out), ended: false };
      this.#items.set(itemId, state);
    }
    if (summaryIndex !== undefined) {
      if (state.summaryIndex !== undefined && summaryIndex !== state.summaryIndex)
        this.#builder.appendThinking(state.index, '\n\n', out);
      state.summaryIndex = summaryIndex;
    }
    this.#builder.appendThinking(state.index, delta, out);
  }

  #itemDone(
    item: Extract<ResponseStreamEvent, { type: 'response.output_item.done' }>['item'],
    outputIndex: number,
    out: StreamEvent[],
  ): void {
    if (item.type === 'message') {
      item.content.forEach((part, contentIndex) => {
        const key = `${item.id}:${contentIndex}`;
        let state = this.#items.get(key);
        const text = part.type === 'output_text' ? part.text : part.refusal;
        if (state === undefined) {
          // A server that sent no deltas: the whole text arrives here.
          state = { kind: 'text', index: this.#builder.startText(out), ended: false };
          this.#items.set(key, state);
          this.#builder.appendText(state.index, text, out);
        }
        state.ended = true;
        if (part.type === 'output_text') {
          const citations = urlCitations(part.annotations);
          if (citations.length > 0) this.#builder.setCitations(state.index, citations);
        }
        this.#builder.endText(state.index, out);
      });
      return;
    }
    if (item.type === 'program') {
      this.#programs.program(item);
      return;
    }
    if (isServerItem(item)) {
      this.#builder.addOpaque(item as unknown as Record<string, unknown>);
      return;
    }
    if (item.type === 'reasoning') {
      let state = this.#items.get(item.id);
      if (state === undefined) {
        state = { kind: 'thinking', index: this.#builder.startThinking(out), ended: false };
        this.#items.set(item.id, state);
      }
      state.ended = true;
      const summary = item.summary.map((part) => part.text).join('\n\n');
      const replayable = typeof item.encrypted_content === 'string' || this.#keepReasoning;
      const signature = replayable
        ? JSON.stringify({
            type: 'reasoning',
            id: item.id,
            summary: item.summary,
            ...(typeof item.encrypted_content === 'string'
              ? { encrypted_content: item.encrypted_content }
              : {}),
          })
        : undefined;
      this.#builder.endThinking(state.index, out, {
        thinking: summary,
        ...(signature === undefined ? {} : { signature }),
      });
      return;
    }
    if (item.type === 'tool_search_call' && this.#searchTool !== undefined) {
      const state = this.#callState(item.id, outputIndex);
      if (state === undefined)
        throw malformed(`tool_search_call ${item.id ?? outputIndex} ended without starting`);
      state.ended = true;
      const rawArguments = JSON.stringify(item.arguments ?? {});
      this.#builder.appendToolCall(state.index, rawArguments, out);
      this.#builder.endToolCall(
        state.index,
        finalToolCall(
          { id: state.callId ?? item.call_id ?? '', name: this.#searchTool, rawArguments },
          this.#tools.plans,
        ),
        out,
      );
      return;
    }
    if (item.type === 'function_call') {
      const state = this.#callState(item.id, outputIndex);
      if (state === undefined)
        throw malformed(`function_call ${item.id ?? outputIndex} ended without starting`);
      state.ended = true;
      const streamed = this.#builder.toolCallArguments(state.index);
      const rawArguments = typeof item.arguments === 'string' ? item.arguments : streamed;
      this.#builder.endToolCall(
        state.index,
        finalToolCall(
          {
            id: state.callId ?? item.call_id,
            name: item.name || (state.name ?? ''),
            rawArguments,
            ...(item.id === undefined ? {} : { itemId: item.id }),
          },
          this.#tools.plans,
        ),
        out,
      );
    }
  }
}

function toUsage(usage: ResponseUsage | null | undefined): Usage {
  if (usage === null || usage === undefined) return emptyUsage();
  const input = tokenCount(usage.input_tokens) ?? 0;
  const output = tokenCount(usage.output_tokens) ?? 0;
  const cached = tokenCount(usage.input_tokens_details?.cached_tokens) ?? 0;
  const cacheWrite = tokenCount(usage.input_tokens_details?.cache_write_tokens) ?? 0;
  return {
    input: Math.max(0, input - cached - cacheWrite),
    output,
    cacheRead: Math.min(cached, input),
    cacheWrite: Math.min(cacheWrite, Math.max(0, input - cached)),
    totalTokens: tokenCount(usage.total_tokens) ?? input + output,
  };
}

function malformed(detail: string): ProviderError {
  return new ProviderError(`Malformed Responses API event: ${detail}`, { isRetryable: false });
}

/** Our citations from a Responses output text's `url_citation` annotations (one per URL). */
function urlCitations(annotations: unknown): Citation[] {
  if (!Array.isArray(annotations)) return [];
  const byUrl = new Map<string, Citation>();
  for (const annotation of annotations as { type?: unknown; url?: unknown; title?: unknown }[]) {
    if (annotation?.type !== 'url_citation' || typeof annotation.url !== 'string') continue;
    if (byUrl.has(annotation.url)) continue;
    const citation: Citation = { url: annotation.url };
    if (typeof annotation.title === 'string' && annotation.title !== '')
      citation.title = annotation.title;
    byUrl.set(annotation.url, citation);
  }
  return [...byUrl.values()];
}
