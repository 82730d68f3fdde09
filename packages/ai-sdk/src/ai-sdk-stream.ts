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
  /**
   * `kind:id` → index in `#content`, for text, reasoning and tool calls. Ids are kept apart per
   * kind: a provider may number its text and its tool calls alike ('0'), and one shared key made
   * a text delta start a second block and a call appear twice under one id.
   */
  #blocks = new Map<string, number>();
  /** Ids of the tool calls already ended: a `tool-call` sent again for one is left out. */
  #endedCalls = new Set<string>();
  /**
   * `kind:id` of the text and reasoning blocks already ended: a delta after the end starts a new
   * block (an event after a block's end broke the order our consumers rely on), a second end is
   * left out.
   */
  #endedBlocks = new Set<string>();
  /**
   * The text block the deltas go to, while it is open: a prose answer is hundreds of deltas of
   * one block, each of which built two `text:id` keys and looked them up (~1 % of a run's CPU).
   */
  #openText: { id: string; index: number; block: TextContent } | undefined;
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
    this.#endedCalls.clear();
    this.#endedBlocks.clear();
    this.#openText = undefined;
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
        let open = this.#openText;
        if (open?.id !== part.id) {
          const block = this.#text(part.id, out);
          open = { id: part.id, index: this.#index('text', part.id), block };
          this.#openText = open;
        }
        const delta = textOf(part.delta);
        if (delta === '') return;
        open.block.text += delta;
        this.streamedContent = true;
        out.push({ type: 'text-delta', index: open.index, delta });
        return;
      }
      case 'text-end': {
        if (this.#openText?.id === part.id) this.#openText = undefined;
        if (this.#endedBlocks.has(`text:${part.id}`)) return;
        const block = this.#text(part.id, out);
        this.#endedBlocks.add(`text:${part.id}`);
        out.push({ type: 'text-end', index: this.#index('text', part.id), text: block.text });
        return;
      }
      case 'reasoning-start':
        this.#reasoning(part.id, part.providerMetadata, out);
        return;
      case 'reasoning-delta': {
        const block = this.#reasoning(part.id, part.providerMetadata, out);
        const delta = textOf(part.delta);
        if (delta === '') return;
        block.thinking += delta;
        this.streamedContent = true;
        out.push({ type: 'thinking-delta', index: this.#index('reasoning', part.id), delta });
        return;
      }
      case 'reasoning-end': {
        if (this.#endedBlocks.has(`reasoning:${part.id}`)) return;
        const block = this.#reasoning(part.id, part.providerMetadata, out);
        this.#endedBlocks.add(`reasoning:${part.id}`);
        const metadata = this.#reasoningMetadata.get(part.id);
        if (metadata !== undefined) block.signature = encodeMetadata(metadata);
        out.push({
          type: 'thinking-end',
          index: this.#index('reasoning', part.id),
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
        if (this.#providerExecuted.has(part.id) || this.#endedCalls.has(part.id)) return;
        const index = this.#blocks.get(`tool:${part.id}`);
        const block = index === undefined ? undefined : this.#content[index];
        const delta = textOf(part.delta);
        if (index === undefined || block?.type !== 'toolCall' || delta === '') return;
        block.arguments += delta;
        this.streamedContent = true;
        out.push({ type: 'tool-call-delta', index, delta });
        return;
      }
      case 'tool-call': {
        if (part.providerExecuted === true || this.#providerExecuted.has(part.toolCallId)) return;
        if (this.#endedCalls.has(part.toolCallId)) {
          // One id, two calls: our loop answers each call by its id, so the second would get
          // the first one's result (or a provider refuses the duplicate). The first one stands.
          this.onWarning?.({
            type: 'other',
            message: `the model sent tool call "${part.toolCallId}" twice; the repeat was left out`,
          });
          return;
        }
        this.#endedCalls.add(part.toolCallId);
        const streamed = this.#blocks.has(`tool:${part.toolCallId}`);
        const { index, block } = this.#toolCall(part.toolCallId, part.toolName, out);
        const input = inputText(part.input);
        // The whole input: the arguments as the provider parsed them, streamed or not.
        if (!streamed && input !== '') {
          out.push({ type: 'tool-call-delta', index, delta: input });
        }
        this.streamedContent = true;
        const toolCall: ToolCallContent = {
          type: 'toolCall',
          id: block.id,
          name: part.toolName,
          arguments: input,
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

  #index(kind: 'text' | 'reasoning', id: string): number {
    return this.#blocks.get(`${kind}:${id}`) ?? -1;
  }

  #text(id: string, out: StreamEvent[]): TextContent {
    const index = this.#blocks.get(`text:${id}`);
    const existing = index === undefined ? undefined : this.#content[index];
    if (existing?.type === 'text' && !this.#endedBlocks.delete(`text:${id}`)) return existing;
    const block: TextContent = { type: 'text', text: '' };
    this.#blocks.set(`text:${id}`, this.#content.length);
    out.push({ type: 'text-start', index: this.#content.length });
    this.#content.push(block);
    return block;
  }

  #reasoning(
    id: string,
    metadata: SharedV4ProviderMetadata | undefined,
    out: StreamEvent[],
  ): ThinkingContent {
    const index = this.#blocks.get(`reasoning:${id}`);
    const existing = index === undefined ? undefined : this.#content[index];
    const reused = existing?.type === 'thinking' && !this.#endedBlocks.delete(`reasoning:${id}`);
    // A new block under an ended one's id: its signature metadata starts afresh.
    if (!reused) this.#reasoningMetadata.delete(id);
    if (metadata !== undefined) {
      this.#reasoningMetadata.set(id, mergeMetadata(this.#reasoningMetadata.get(id), metadata));
    }
    if (reused) return existing;
    const block: ThinkingContent = { type: 'thinking', thinking: '' };
    this.#blocks.set(`reasoning:${id}`, this.#content.length);
    out.push({ type: 'thinking-start', index: this.#content.length });
    this.#content.push(block);
    return block;
  }

  #toolCall(
    id: string,
    name: string,
    out: StreamEvent[],
  ): { index: number; block: ToolCallContent } {
    const index = this.#blocks.get(`tool:${id}`);
    const existing = index === undefined ? undefined : this.#content[index];
    if (index !== undefined && existing?.type === 'toolCall') return { index, block: existing };
    const block: ToolCallContent = { type: 'toolCall', id, name, arguments: '' };
    const at = this.#content.length;
    this.#blocks.set(`tool:${id}`, at);
    out.push({ type: 'tool-call-start', index: at, id, name });
    this.#content.push(block);
    return { index: at, block };
  }
}

/**
 * Our usage from the AI SDK's: `input` is the uncached input, as our providers count it. A
 * count the model left out (no usage at all, no `inputTokens`, a null) is 0: the answer matters
 * more than its bill, and a missing field used to turn the whole answer into an error.
 */
export function toUsage(usage: LanguageModelV4Usage | undefined): Usage {
  const inputTokens: Partial<LanguageModelV4Usage['inputTokens']> = usage?.inputTokens ?? {};
  const cacheRead = count(inputTokens.cacheRead);
  const cacheWrite = count(inputTokens.cacheWrite);
  const input =
    typeof inputTokens.noCache === 'number'
      ? count(inputTokens.noCache)
      : Math.max(0, count(inputTokens.total) - cacheRead - cacheWrite);
  const output = count(usage?.outputTokens?.total);
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

/** A token count as given, or 0 when it is missing or not a count. */
function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;
}

/** A delta as text: a model that sends none (or not a string) adds nothing. */
function textOf(delta: unknown): string {
  return typeof delta === 'string' ? delta : '';
}

/** A call's input as the text our tool calls carry (a model may hand the parsed object). */
function inputText(input: unknown): string {
  if (typeof input === 'string') return input;
  if (input === undefined || input === null) return '';
  return JSON.stringify(input);
}
