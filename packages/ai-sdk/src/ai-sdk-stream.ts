import {
  type AssistantContent,
  type AssistantMessage,
  emptyUsage,
  ProviderError,
  type StopReason,
  type StreamEvent,
  type TextContent,
  type ThinkingContent,
  type ToolCallContent,
  type Usage,
} from '@agent/core';
import type {
  LanguageModelV4FinishReason,
  LanguageModelV4StreamPart,
  LanguageModelV4Usage,
  SharedV4ProviderMetadata,
  SharedV4Warning,
} from '@ai-sdk/provider';
import { encodeMetadata } from './ai-sdk-messages.js';

// The AI SDK's stream parts (language-model specification v4) as our stream events. Blocks are
// numbered in the order they start; a tool call the model sends whole (no `tool-input-*` parts
// before it) still gets its start, one delta and its end. Calls the provider ran itself
// (`providerExecuted`) and their results are its own business, not ours to run: left out.

/** One `doStream` call's translation into our events; `reset` forgets a failed attempt. */
export class AiSdkStreamState {
  #content: AssistantContent[] = [];
  /** Stream part id → index in `#content`, for text, reasoning and streamed tool input. */
  #blocks = new Map<string, number>();
  /** Provider metadata gathered per reasoning id (a signature may come on any of its parts). */
  #reasoningMetadata = new Map<string, SharedV4ProviderMetadata>();
  /** Tool-input ids of calls the provider executes itself. */
  #providerExecuted = new Set<string>();
  #usage: Usage = emptyUsage();
  #finish: LanguageModelV4FinishReason | undefined;
  #model: string;
  #started = false;
  streamedContent = false;

  constructor(
    readonly providerId: string,
    model: string,
    private readonly onWarning: ((warning: SharedV4Warning) => void) | undefined,
  ) {
    this.#model = model;
  }

  reset(): void {
    this.#content = [];
    this.#blocks.clear();
    this.#reasoningMetadata.clear();
    this.#providerExecuted.clear();
    this.#usage = emptyUsage();
    this.#finish = undefined;
    this.streamedContent = false;
  }

  /** Appends the events of one part to `out` (`error` parts never reach here: they reject the read). */
  apply(part: LanguageModelV4StreamPart, out: StreamEvent[]): void {
    if (!this.#started) {
      this.#started = true;
      out.push({ type: 'start', model: this.#model, provider: this.providerId });
    }
    switch (part.type) {
      case 'stream-start':
        for (const warning of part.warnings) this.onWarning?.(warning);
        return;
      case 'response-metadata':
        if (part.modelId !== undefined) this.#model = part.modelId;
        return;
      case 'text-start':
        this.#text(part.id, out);
        return;
      case 'text-delta': {
        const block = this.#text(part.id, out);
        block.text += part.delta;
        this.streamedContent = true;
        out.push({ type: 'text-delta', index: this.#index(part.id), delta: part.delta });
        return;
      }
      case 'text-end': {
        const block = this.#text(part.id, out);
        out.push({ type: 'text-end', index: this.#index(part.id), text: block.text });
        return;
      }
      case 'reasoning-start':
        this.#reasoning(part.id, part.providerMetadata, out);
        return;
      case 'reasoning-delta': {
        const block = this.#reasoning(part.id, part.providerMetadata, out);
        if (part.delta === '') return;
        block.thinking += part.delta;
        this.streamedContent = true;
        out.push({ type: 'thinking-delta', index: this.#index(part.id), delta: part.delta });
        return;
      }
      case 'reasoning-end': {
        const block = this.#reasoning(part.id, part.providerMetadata, out);
        const metadata = this.#reasoningMetadata.get(part.id);
        if (metadata !== undefined) block.signature = encodeMetadata(metadata);
        out.push({
          type: 'thinking-end',
          index: this.#index(part.id),
          thinking: block.thinking,
          ...(block.signature === undefined ? {} : { signature: block.signature }),
        });
        return;
      }
      case 'tool-input-start': {
        if (part.providerExecuted === true) {
          this.#providerExecuted.add(part.id);
          return;
        }
        this.#toolCall(part.id, part.toolName, out);
        return;
      }
      case 'tool-input-delta': {
        if (this.#providerExecuted.has(part.id)) return;
        const index = this.#blocks.get(part.id);
        const block = index === undefined ? undefined : this.#content[index];
        if (index === undefined || block?.type !== 'toolCall') return;
        block.arguments += part.delta;
        this.streamedContent = true;
        out.push({ type: 'tool-call-delta', index, delta: part.delta });
        return;
      }
      case 'tool-call': {
        if (part.providerExecuted === true || this.#providerExecuted.has(part.toolCallId)) return;
        const streamed = this.#blocks.has(part.toolCallId);
        const { index, block } = this.#toolCall(part.toolCallId, part.toolName, out);
        // The whole input: the arguments as the provider parsed them, streamed or not.
        if (!streamed && part.input !== '') {
          out.push({ type: 'tool-call-delta', index, delta: part.input });
        }
        this.streamedContent = true;
        const toolCall: ToolCallContent = {
          type: 'toolCall',
          id: block.id,
          name: part.toolName,
          arguments: part.input,
          ...(part.providerMetadata === undefined
            ? {}
            : { providerMetadata: part.providerMetadata as Record<string, unknown> }),
        };
        this.#content[index] = toolCall;
        out.push({ type: 'tool-call-end', index, toolCall });
        return;
      }
      case 'finish':
        this.#usage = toUsage(part.usage);
        this.#finish = part.finishReason;
        out.push({ type: 'usage', usage: this.#usage });
        return;
      case 'tool-input-end':
      case 'tool-result':
      case 'tool-approval-request':
      case 'source':
      case 'file':
      case 'reasoning-file':
      case 'custom':
      case 'raw':
      case 'ping':
      case 'error':
        return;
      default: {
        const _exhaustive: never = part;
        void _exhaustive;
      }
    }
  }

  /** The terminal event after the last part: `done`, or `error` when the model's finish says so. */
  finish(): StreamEvent {
    const finish = this.#finish;
    if (finish === undefined) {
      return this.fail(
        'error',
        new ProviderError('The model stream ended without a finish part', {
          provider: this.providerId,
          isRetryable: true,
        }),
      );
    }
    if (finish.unified === 'content-filter' || finish.unified === 'error') {
      const why =
        finish.unified === 'content-filter'
          ? "The provider's content filter stopped the response"
          : 'The model finished with an error';
      return this.fail(
        'error',
        new ProviderError(finish.raw === undefined ? why : `${why} (${finish.raw})`, {
          provider: this.providerId,
        }),
      );
    }
    return { type: 'done', message: this.#message(this.#stopReason(finish)) };
  }

  /** The terminal `error` event with what arrived so far. */
  fail(reason: 'error' | 'aborted', error: ProviderError): StreamEvent {
    return {
      type: 'error',
      reason,
      error,
      message: { ...this.#message(reason), errorMessage: error.message },
    };
  }

  #stopReason(finish: LanguageModelV4FinishReason): StopReason {
    const hasToolCalls = this.#content.some((block) => block.type === 'toolCall');
    switch (finish.unified) {
      case 'length':
        return 'length';
      case 'interrupted':
        return 'aborted';
      default:
        // Some providers say `stop` after tool calls; the calls are what the loop acts on.
        return hasToolCalls ? 'toolUse' : 'stop';
    }
  }

  #message(stopReason: StopReason): AssistantMessage {
    return {
      role: 'assistant',
      content: this.#content.filter((block) => block !== undefined),
      provider: this.providerId,
      model: this.#model,
      usage: this.#usage,
      stopReason,
      timestamp: Date.now(),
    };
  }

  #index(id: string): number {
    return this.#blocks.get(id) ?? -1;
  }

  #text(id: string, out: StreamEvent[]): TextContent {
    const index = this.#blocks.get(id);
    const existing = index === undefined ? undefined : this.#content[index];
    if (existing?.type === 'text') return existing;
    const block: TextContent = { type: 'text', text: '' };
    this.#blocks.set(id, this.#content.length);
    out.push({ type: 'text-start', index: this.#content.length });
    this.#content.push(block);
    return block;
  }

  #reasoning(
    id: string,
    metadata: SharedV4ProviderMetadata | undefined,
    out: StreamEvent[],
  ): ThinkingContent {
    if (metadata !== undefined) {
      this.#reasoningMetadata.set(id, mergeMetadata(this.#reasoningMetadata.get(id), metadata));
    }
    const index = this.#blocks.get(id);
    const existing = index === undefined ? undefined : this.#content[index];
    if (existing?.type === 'thinking') return existing;
    const block: ThinkingContent = { type: 'thinking', thinking: '' };
    this.#blocks.set(id, this.#content.length);
    out.push({ type: 'thinking-start', index: this.#content.length });
    this.#content.push(block);
    return block;
  }

  #toolCall(
    id: string,
    name: string,
    out: StreamEvent[],
  ): { index: number; block: ToolCallContent } {
    const index = this.#blocks.get(id);
    const existing = index === undefined ? undefined : this.#content[index];
    if (index !== undefined && existing?.type === 'toolCall') return { index, block: existing };
    const block: ToolCallContent = { type: 'toolCall', id, name, arguments: '' };
    const at = this.#content.length;
    this.#blocks.set(id, at);
    out.push({ type: 'tool-call-start', index: at, id, name });
    this.#content.push(block);
    return { index: at, block };
  }
}

/** Our usage from the AI SDK's: `input` is the uncached input, as our providers count it. */
export function toUsage(usage: LanguageModelV4Usage): Usage {
  const cacheRead = usage.inputTokens.cacheRead ?? 0;
  const cacheWrite = usage.inputTokens.cacheWrite ?? 0;
  const input =
    usage.inputTokens.noCache ??
    Math.max(0, (usage.inputTokens.total ?? 0) - cacheRead - cacheWrite);
  const output = usage.outputTokens.total ?? 0;
  return {
    input,
    output,
    cacheRead,
    cacheWrite,
    totalTokens: input + output + cacheRead + cacheWrite,
  };
}

/** Metadata of several parts of one block, merged per provider key (later values win). */
function mergeMetadata(
  before: SharedV4ProviderMetadata | undefined,
  next: SharedV4ProviderMetadata,
): SharedV4ProviderMetadata {
  if (before === undefined) return next;
  const merged: SharedV4ProviderMetadata = { ...before };
  for (const [key, value] of Object.entries(next)) {
    merged[key] = { ...(merged[key] ?? {}), ...value };
  }
  return merged;
}
