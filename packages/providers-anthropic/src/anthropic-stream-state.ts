// The Messages API stream's state machine: raw SSE events in, our stream events and the final
// message out — text, thinking, tool calls, opaque server blocks, usage, and the checkpoint of a
// turn the API paused (pause_turn). The connection side is anthropic-stream.ts.
import {
  type AssistantContent,
  type AssistantMessage,
  addUsage,
  type Citation,
  emptyUsage,
  type OpaqueContent,
  ProviderError,
  type StopReason,
  type StreamEvent,
  type ToolCallContent,
  tokenCount,
  type Usage,
} from '@agent/core';
import type { RawMessageStreamEvent } from '@anthropic-ai/sdk/resources';
import { withAnthropicCost } from './anthropic-models.js';
import { ProgrammaticCapture, type StreamedServerToolUse } from './anthropic-programmatic.js';

/**
 * The streamed text of one block, kept as its pieces and joined when read (at the block's end).
 * `text += delta` builds a rope with one node per delta that lives as long as the stream, and
 * V8's young-generation GC copies it again and again: over 2,000-delta streams that took ~7x the
 * GC time of the raw SDK loop; with an array of pieces it is ~1.4x.
 */
class StreamedText {
  #pieces: string[];

  constructor(initial: string) {
    this.#pieces = [initial];
  }

  append(piece: string): void {
    this.#pieces.push(piece);
  }

  /** The text so far; joins the pieces once, so reading it again is free. */
  get value(): string {
    const pieces = this.#pieces;
    if (pieces.length === 1) return pieces[0] ?? '';
    // One concatenation loop after the last piece: ~3x faster than `join('')` for thousands of
    // small pieces, and the rope it builds no longer lives through the stream's GC cycles.
    let text = '';
    for (const piece of pieces) text += piece;
    this.#pieces = [text];
    return text;
  }
}

type BlockState =
  | { kind: 'text'; index: number; text: StreamedText; citations?: Citation[] }
  | { kind: 'thinking'; index: number; thinking: StreamedText; signature: string }
  | { kind: 'redacted'; index: number; data: string }
  | { kind: 'tool'; index: number; id: string; name: string; json: StreamedText }
  | OpaqueBlock
  | { kind: 'ignored' };

/**
 * A block kept as the API sent it (server tool calls and results, and kinds this version does not
 * know), to go back unchanged; its input, where it streams, arrives as JSON deltas.
 */
interface OpaqueBlock {
  kind: 'opaque';
  content: OpaqueContent;
  json: string;
  /** A `server_tool_use` block, also kept for replaying the calls its code makes. */
  server: StreamedServerToolUse | undefined;
}

const stopReasons: Record<string, StopReason> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'toolUse',
};

/** Where a turn the API paused stands: the content so far and what it cost. */
interface PauseCheckpoint {
  /** Continuations sent so far. */
  continuations: number;
  content: AssistantContent[];
  opaque: PlacedOpaque[];
  usage: Usage;
  /** The paused turn as it goes back to the API. */
  message: AssistantMessage;
}

/** An opaque block and the index of the content block it came before. */
interface PlacedOpaque {
  before: number;
  block: OpaqueContent;
}

/** Turns raw SSE events into our stream events and the final message. */
export class AnthropicStreamState {
  finished = false;
  /** True once a content delta of the current response was emitted: no retry after that. */
  streamedContent = false;
  #started = false;
  /** Whether this attempt's response began (message_start): a stream without one is no Messages stream. */
  #responseBegan = false;
  #content: AssistantContent[] = [];
  // Kept apart so the indices of content events stay those of text, thinking and calls (a
  // partial message built from the events has no holes); merged in place at the end.
  #opaque: PlacedOpaque[] = [];
  // Indexed by the API's block index (a dense array: faster than a Map on the per-delta path).
  #blocks: Array<BlockState | undefined> = [];
  /** The current response's own counts; `#usage` adds those of the responses it continues. */
  #responseUsage: Usage = emptyUsage();
  #usage: Usage = emptyUsage();
  #stopReason: StopReason = 'stop';
  #paused = false;
  #refusal = false;
  #model: string;
  #programmatic = new ProgrammaticCapture();
  #checkpoint: PauseCheckpoint | undefined;
  readonly #maxContinuations: number;
  readonly #providerId: string;
  readonly #timestamp = Date.now();

  constructor(providerId: string, model: string, maxContinuations: number) {
    this.#providerId = providerId;
    this.#model = model;
    this.#maxContinuations = maxContinuations;
  }

  /** Forgets a failed attempt that streamed nothing (back to the pause it continued, if any). */
  reset(): void {
    const checkpoint = this.#checkpoint;
    this.finished = false;
    this.#responseBegan = false;
    this.#content = checkpoint === undefined ? [] : [...checkpoint.content];
    this.#opaque = checkpoint === undefined ? [] : [...checkpoint.opaque];
    this.#blocks = [];
    this.#responseUsage = emptyUsage();
    this.#usage = checkpoint === undefined ? emptyUsage() : checkpoint.usage;
    this.#stopReason = 'stop';
    this.#paused = false;
    this.#refusal = false;
    if (checkpoint === undefined) this.#programmatic = new ProgrammaticCapture();
  }

  /** The paused turn the next request continues, once `continues` said so. */
  get pausedMessage(): AssistantMessage | undefined {
    return this.#checkpoint?.message;
  }

  /**
   * After a whole response: true when it paused (`pause_turn`: a server tool's long turn) and
   * another request continues it — not when it also called our tools (their results come first,
   * from the loop), and not past the cap (then `finish` says so).
   */
  continues(): boolean {
    if (!this.finished || !this.#paused || this.#refusal) return false;
    const continuations = (this.#checkpoint?.continuations ?? 0) + 1;
    if (continuations > this.#maxContinuations) return false;
    const content = this.#programmatic.annotate(this.#settledContent('finished'));
    if (content.some((block) => block.type === 'toolCall')) return false;
    this.#checkpoint = {
      continuations,
      content: [...this.#content],
      opaque: [...this.#opaque],
      usage: this.#usage,
      message: this.#message('stop', content),
    };
    this.finished = false;
    this.streamedContent = false;
    this.#blocks = [];
    this.#responseUsage = emptyUsage();
    this.#stopReason = 'stop';
    this.#paused = false;
    return true;
  }

  /** Appends the events that `event` produces to `out` (no per-event allocation beyond them). */
  apply(event: RawMessageStreamEvent, out: StreamEvent[]): void {
    // The hot case first: one content_block_delta per streamed token.
    switch (event.type) {
      case 'content_block_delta': {
        const state = this.#blocks[event.index];
        const delta = event.delta;
        if (state === undefined || state.kind === 'ignored') return;
        if (state.kind === 'opaque') {
          if (delta.type === 'input_json_delta') {
            state.json += delta.partial_json;
            if (state.server !== undefined) state.server.json += delta.partial_json;
          }
          return;
        }
        if (delta.type === 'text_delta' && state.kind === 'text') {
          state.text.append(delta.text);
          this.streamedContent = true;
          out.push({ type: 'text-delta', index: state.index, delta: delta.text });
        } else if (delta.type === 'citations_delta' && state.kind === 'text') {
          const citation = citationOf(delta.citation);
          if (citation !== undefined) {
            if (state.citations === undefined) state.citations = [];
            state.citations.push(citation);
          }
        } else if (delta.type === 'thinking_delta' && state.kind === 'thinking') {
          state.thinking.append(delta.thinking);
          this.streamedContent = true;
          out.push({ type: 'thinking-delta', index: state.index, delta: delta.thinking });
        } else if (delta.type === 'signature_delta' && state.kind === 'thinking') {
          state.signature += delta.signature;
        } else if (delta.type === 'input_json_delta' && state.kind === 'tool') {
          this.streamedContent = true;
          if (delta.partial_json !== '') {
            state.json.append(delta.partial_json);
            out.push({ type: 'tool-call-delta', index: state.index, delta: delta.partial_json });
          }
        }
        return;
      }
      case 'message_start': {
        this.#responseBegan = true;
        // A server that leaves usage out (or sends null) still gives counts, never NaN.
        const usage: Partial<typeof event.message.usage> = event.message.usage ?? {};
        this.#setUsage(
          tokenCount(usage.input_tokens) ?? 0,
          tokenCount(usage.output_tokens) ?? 0,
          tokenCount(usage.cache_read_input_tokens) ?? 0,
          tokenCount(usage.cache_creation_input_tokens) ?? 0,
        );
        if (!this.#started) {
          this.#started = true;
          out.push({ type: 'start', model: this.#model, provider: this.#providerId });
        }
        return;
      }
      case 'content_block_start': {
        const block = event.content_block;
        const index = this.#content.length;
        switch (block.type) {
          case 'text':
            this.#blocks[event.index] = { kind: 'text', index, text: new StreamedText(block.text) };
            this.#content.push({ type: 'text', text: block.text });
            out.push({ type: 'text-start', index });
            if (block.text !== '') out.push({ type: 'text-delta', index, delta: block.text });
            return;
          case 'thinking':
            this.#blocks[event.index] = {
              kind: 'thinking',
              index,
              thinking: new StreamedText(block.thinking),
              signature: block.signature ?? '',
            };
            this.#content.push({ type: 'thinking', thinking: block.thinking });
            out.push({ type: 'thinking-start', index });
            return;
          case 'redacted_thinking':
            this.#blocks[event.index] = { kind: 'redacted', index, data: block.data };
            this.#content.push({ type: 'thinking', thinking: '', redacted: true });
            out.push({ type: 'thinking-start', index });
            return;
          case 'tool_use':
            this.#programmatic.toolUse(block);
            this.#blocks[event.index] = {
              kind: 'tool',
              index,
              id: block.id,
              name: block.name,
              json: new StreamedText(''),
            };
            this.#content.push({ type: 'toolCall', id: block.id, name: block.name, arguments: '' });
            out.push({ type: 'tool-call-start', index, id: block.id, name: block.name });
            return;
          default: {
            // Server tool calls and results (a web search, code output) and kinds this version
            // does not know: not part of the contract, kept as sent for the next request.
            const opaque: OpaqueContent = {
              type: 'opaque',
              provider: this.#providerId,
              data: { ...(block as object) },
            };
            this.#opaque.push({ before: index, block: opaque });
            this.#blocks[event.index] = {
              kind: 'opaque',
              content: opaque,
              json: '',
              server:
                block.type === 'server_tool_use'
                  ? this.#programmatic.serverToolUse(block)
                  : undefined,
            };
            return;
          }
        }
      }
      case 'content_block_stop': {
        const state = this.#blocks[event.index];
        if (state === undefined) return;
        this.streamedContent = true;
        switch (state.kind) {
          case 'text': {
            const text = state.text.value;
            this.#content[state.index] =
              state.citations === undefined
                ? { type: 'text', text }
                : { type: 'text', text, citations: state.citations };
            out.push({ type: 'text-end', index: state.index, text });
            return;
          }
          case 'thinking': {
            const thinking = state.thinking.value;
            const block: AssistantContent = { type: 'thinking', thinking };
            if (state.signature !== '') block.signature = state.signature;
            this.#content[state.index] = block;
            const end: StreamEvent = { type: 'thinking-end', index: state.index, thinking };
            if (state.signature !== '') end.signature = state.signature;
            out.push(end);
            return;
          }
          case 'redacted':
            this.#content[state.index] = {
              type: 'thinking',
              thinking: '',
              signature: state.data,
              redacted: true,
            };
            out.push({
              type: 'thinking-end',
              index: state.index,
              thinking: '',
              signature: state.data,
              redacted: true,
            });
            return;
          case 'tool': {
            // A call without parameters streams no input JSON at all.
            const json = state.json.value;
            const toolCall: ToolCallContent = {
              type: 'toolCall',
              id: state.id,
              name: state.name,
              arguments: json === '' ? '{}' : json,
            };
            this.#content[state.index] = toolCall;
            out.push({ type: 'tool-call-end', index: state.index, toolCall });
            return;
          }
          case 'opaque':
            // The input streamed as JSON replaces the start's (`{}`); a cut one keeps that.
            if (state.json !== '') {
              try {
                state.content.data.input = JSON.parse(state.json);
              } catch {
                // Malformed: the block goes back as it started.
              }
            }
            return;
          case 'ignored':
            return;
          default: {
            const _exhaustive: never = state;
            return void _exhaustive;
          }
        }
      }
      case 'message_delta': {
        const usage: Partial<typeof event.usage> = event.usage ?? {};
        const response = this.#responseUsage;
        this.#setUsage(
          tokenCount(usage.input_tokens) ?? response.input,
          tokenCount(usage.output_tokens) ?? response.output,
          tokenCount(usage.cache_read_input_tokens) ?? response.cacheRead,
          tokenCount(usage.cache_creation_input_tokens) ?? response.cacheWrite,
        );
        this.#programmatic.container(event.delta.container);
        const reason = event.delta.stop_reason;
        if (reason === 'refusal') this.#refusal = true;
        else if (reason === 'pause_turn') this.#paused = true;
        else if (reason !== null)
          this.#stopReason =
            (Object.hasOwn(stopReasons, reason) ? stopReasons[reason] : undefined) ?? 'stop';
        out.push({ type: 'usage', usage: this.#usage });
        return;
      }
      case 'message_stop':
        this.finished = true;
        return;
      default: {
        const _exhaustive: never = event;
        return void _exhaustive;
      }
    }
  }

  /** The current response's counts; the message's usage adds those of the turn it continues. */
  #setUsage(input: number, output: number, cacheRead: number, cacheWrite: number): void {
    const usage: Usage = {
      input,
      output,
      cacheRead,
      cacheWrite,
      totalTokens: input + output + cacheRead + cacheWrite,
    };
    this.#responseUsage = withAnthropicCost(usage, this.#model);
    const earlier = this.#checkpoint?.usage;
    this.#usage =
      earlier === undefined
        ? this.#responseUsage
        : addUsage(structuredClone(earlier), this.#responseUsage);
  }

  #message(stopReason: StopReason, content: AssistantContent[]): AssistantMessage {
    return {
      role: 'assistant',
      content,
      provider: this.#providerId,
      model: this.#model,
      usage: this.#usage,
      stopReason,
      timestamp: this.#timestamp,
    };
  }

  /** The terminal event after the SDK stream ended. */
  finish(): StreamEvent {
    if (!this.finished)
      return this.fail(
        'error',
        new ProviderError(
          this.#responseBegan
            ? 'Anthropic stream ended before message_stop (connection cut?)'
            : // An OpenAI-compatible server behind ANTHROPIC_BASE_URL answers 200 with its own
              // chunks (`data:` lines, no `event: message_start`), which the SDK passes over.
              'the server answered with a stream that holds no Anthropic Messages events (no message_start): is the base URL an Anthropic Messages API? An OpenAI-compatible server (Ollama, vLLM, LiteLLM) is reached with the openai provider and its base URL',
          { provider: this.#providerId, isRetryable: true },
        ),
      );
    if (this.#refusal)
      return this.fail(
        'error',
        new ProviderError('Anthropic model refused the request (stop_reason refusal)', {
          provider: this.#providerId,
          isRetryable: false,
        }),
      );
    // At the output-token limit a tool call may be cut anywhere: its raw partial input goes to
    // the loop (an invalid-args result, never executed); one cut before any input is dropped,
    // since an empty input would read as `{}` and run.
    const content = this.#programmatic.annotate(
      this.#settledContent(this.#stopReason === 'length' ? 'length' : 'finished'),
    );
    const hasCalls = content.some((block) => block.type === 'toolCall');
    if (this.#paused && !hasCalls) {
      // Past the cap: an unfinished turn, never passed off as the model's answer.
      const continuations = this.#checkpoint?.continuations ?? 0;
      return this.fail(
        'error',
        new ProviderError(
          `Anthropic paused the turn (stop_reason pause_turn) after ${continuations} continuation${continuations === 1 ? '' : 's'}; no more are sent (maxPauseContinuations ${this.#maxContinuations})`,
          { provider: this.#providerId, isRetryable: false },
        ),
      );
    }
    const stopReason = this.#stopReason === 'stop' && hasCalls ? 'toolUse' : this.#stopReason;
    return { type: 'done', message: this.#message(stopReason, content) };
  }

  /** The terminal `error` event: partial text and thinking kept, unfinished tool calls dropped. */
  fail(reason: 'error' | 'aborted', error: ProviderError): StreamEvent {
    const message = this.#message(reason, this.#settledContent('failed'));
    message.errorMessage = error.message;
    return { type: 'error', reason, error, message };
  }

  /**
   * The content with blocks that never saw `content_block_stop` settled: streamed text kept,
   * cut-off thoughts kept unsigned (never replayed as thinking). Unfinished tool calls are
   * dropped after a failure and keep their raw input otherwise; at the token limit a call
   * without any input is dropped too.
   */
  #settledContent(ending: 'finished' | 'length' | 'failed'): AssistantContent[] {
    const content = [...this.#content];
    const dropped = new Set<number>();
    for (const state of this.#blocks) {
      if (state === undefined || state.kind === 'ignored' || state.kind === 'opaque') continue;
      const block = content[state.index];
      if (state.kind === 'text') {
        const text = state.text.value;
        if (block?.type === 'text' && block.text !== text)
          content[state.index] = { type: 'text', text };
      } else if (state.kind === 'thinking') {
        if (block?.type === 'thinking' && block.signature === undefined)
          content[state.index] = { type: 'thinking', thinking: state.thinking.value };
      } else if (state.kind === 'tool' && block?.type === 'toolCall') {
        // Only a stopped call has arguments (at least `{}`).
        const unfinished = block.arguments === '';
        const json = state.json.value;
        if (unfinished && ending !== 'failed' && json !== '')
          content[state.index] = { ...block, arguments: json };
        else if (unfinished || (ending === 'length' && json === '')) dropped.add(state.index);
      }
    }
    if (this.#opaque.length === 0)
      return dropped.size === 0 ? content : content.filter((_block, index) => !dropped.has(index));
    // Each opaque block back in its place: before the content block that followed it.
    const merged: AssistantContent[] = [];
    let next = 0;
    for (const [index, block] of content.entries()) {
      while (next < this.#opaque.length && (this.#opaque[next]?.before ?? 0) <= index)
        merged.push((this.#opaque[next++] as PlacedOpaque).block);
      if (!dropped.has(index)) merged.push(block);
    }
    for (; next < this.#opaque.length; next++)
      merged.push((this.#opaque[next] as PlacedOpaque).block);
    return merged;
  }
}

/** Our citation from an Anthropic `web_search_result_location` (other kinds cite documents, not the web). */
function citationOf(raw: unknown): Citation | undefined {
  const value = raw as {
    type?: string;
    url?: unknown;
    title?: unknown;
    cited_text?: unknown;
  } | null;
  if (value?.type !== 'web_search_result_location' || typeof value.url !== 'string')
    return undefined;
  const citation: Citation = { url: value.url };
  if (typeof value.title === 'string' && value.title !== '') citation.title = value.title;
  if (typeof value.cited_text === 'string' && value.cited_text !== '')
    citation.citedText = value.cited_text;
  return citation;
}
