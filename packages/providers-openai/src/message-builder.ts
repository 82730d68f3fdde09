import {
  type AssistantMessage,
  type Citation,
  emptyUsage,
  type OpaqueContent,
  type ProviderError,
  type StopReason,
  type StreamEvent,
  type ToolCallContent,
  type Usage,
} from '@agent/core';

/**
 * Builds the assistant message of one call while emitting the matching stream events into an
 * output array. Indices are positions in the final `content`.
 */
export class MessageBuilder {
  readonly message: AssistantMessage;
  /** True once any content delta was emitted: from then on a failure is not retried. */
  hasOutput = false;
  /** Indices of the tool calls that ended (whole arguments). */
  readonly #endedCalls = new Set<number>();
  /**
   * Opaque blocks and the content index they came before: kept apart while streaming, since no
   * stream event carries them and the events' indices must stay positions in `content`.
   */
  readonly #opaque: { before: number; block: OpaqueContent }[] = [];

  constructor(provider: string, model: string) {
    this.message = {
      role: 'assistant',
      content: [],
      provider,
      model,
      usage: emptyUsage(),
      stopReason: 'stop',
      timestamp: Date.now(),
    };
  }

  startText(out: StreamEvent[]): number {
    const index = this.message.content.push({ type: 'text', text: '' }) - 1;
    this.hasOutput = true;
    out.push({ type: 'text-start', index });
    return index;
  }

  appendText(index: number, delta: string, out: StreamEvent[]): void {
    const block = this.message.content[index];
    if (block?.type !== 'text') return;
    block.text += delta;
    out.push({ type: 'text-delta', index, delta });
  }

  /** Sources the provider's own web search cited for a text block. */
  setCitations(index: number, citations: Citation[]): void {
    const block = this.message.content[index];
    if (block?.type === 'text') block.citations = citations;
  }

  endText(index: number, out: StreamEvent[]): void {
    const block = this.message.content[index];
    if (block?.type === 'text') out.push({ type: 'text-end', index, text: block.text });
  }

  startThinking(out: StreamEvent[]): number {
    const index = this.message.content.push({ type: 'thinking', thinking: '' }) - 1;
    this.hasOutput = true;
    out.push({ type: 'thinking-start', index });
    return index;
  }

  appendThinking(index: number, delta: string, out: StreamEvent[]): void {
    const block = this.message.content[index];
    if (block?.type !== 'thinking') return;
    block.thinking += delta;
    out.push({ type: 'thinking-delta', index, delta });
  }

  endThinking(
    index: number,
    out: StreamEvent[],
    final: { thinking?: string; signature?: string } = {},
  ): void {
    const block = this.message.content[index];
    if (block?.type !== 'thinking') return;
    if (final.thinking !== undefined && block.thinking === '') block.thinking = final.thinking;
    if (final.signature !== undefined) block.signature = final.signature;
    const event: StreamEvent = { type: 'thinking-end', index, thinking: block.thinking };
    if (block.signature !== undefined) event.signature = block.signature;
    out.push(event);
  }

  startToolCall(id: string, name: string, out: StreamEvent[]): number {
    const index = this.message.content.push({ type: 'toolCall', id, name, arguments: '' }) - 1;
    this.hasOutput = true;
    out.push({ type: 'tool-call-start', index, id, name });
    return index;
  }

  appendToolCall(index: number, delta: string, out: StreamEvent[]): void {
    const block = this.message.content[index];
    if (block?.type !== 'toolCall') return;
    block.arguments += delta;
    out.push({ type: 'tool-call-delta', index, delta });
  }

  /** The raw argument text streamed so far for a tool call. */
  toolCallArguments(index: number): string {
    const block = this.message.content[index];
    return block?.type === 'toolCall' ? block.arguments : '';
  }

  /** Ends a tool call with its final block (name, id, mapped arguments, metadata). */
  endToolCall(index: number, toolCall: ToolCallContent, out: StreamEvent[]): void {
    this.#endedCalls.add(index);
    this.message.content[index] = toolCall;
    out.push({ type: 'tool-call-end', index, toolCall });
  }

  /** A block only this provider understands (no event), placed after the content so far. */
  addOpaque(data: Record<string, unknown>): void {
    this.#opaque.push({
      before: this.message.content.length,
      block: { type: 'opaque', provider: this.message.provider, data },
    });
  }

  usage(usage: Usage, out: StreamEvent[]): void {
    this.message.usage = usage;
    out.push({ type: 'usage', usage });
  }

  done(stopReason: StopReason): StreamEvent {
    this.message.stopReason = stopReason;
    if (this.#opaque.length === 0) return { type: 'done', message: this.message };
    return { type: 'done', message: { ...this.message, content: this.#withOpaque() } };
  }

  /** The content with each opaque block back in its place (before the block that followed it). */
  #withOpaque(
    keep: (block: AssistantMessage['content'][number], index: number) => boolean = () => true,
  ): AssistantMessage['content'] {
    const merged: AssistantMessage['content'] = [];
    let next = 0;
    this.message.content.forEach((block, index) => {
      for (; next < this.#opaque.length && (this.#opaque[next]?.before ?? 0) <= index; next++)
        merged.push((this.#opaque[next] as { block: OpaqueContent }).block);
      if (keep(block, index)) merged.push(block);
    });
    for (; next < this.#opaque.length; next++)
      merged.push((this.#opaque[next] as { block: OpaqueContent }).block);
    return merged;
  }

  /**
   * The terminal `error` event: what streamed is kept, except tool calls that never ended (their
   * arguments cut anywhere; as on every provider, a failed turn's calls are never run).
   */
  fail(reason: 'error' | 'aborted', error: ProviderError): StreamEvent {
    return {
      type: 'error',
      reason,
      error,
      message: {
        ...this.message,
        content: this.#withOpaque(
          (block, index) => block.type !== 'toolCall' || this.#endedCalls.has(index),
        ),
        stopReason: reason,
        errorMessage: error.message,
      },
    };
  }
}

/** A tool-call id for servers that send none (`call_` and 24 random hex digits). */
export function generateToolCallId(): string {
  return `call_${globalThis.crypto.randomUUID().replaceAll('-', '').slice(0, 24)}`;
}
