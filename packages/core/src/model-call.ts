// One model call at the provider boundary, and the compactions made around it: before a request
// that passes the threshold of the model's window, and after a context-overflow error.
import type { AgentEvent } from './agent-events.js';
import type { AgentOptions } from './agent-options.js';
import { streamAssistantMessage } from './assistant-stream.js';
import type { CompactionOutcome, CompactionReason } from './compaction.js';
import type { ContextCompactor } from './context-compactor.js';
import { estimateMessageTokens, estimateRequestTokens } from './context-estimate.js';
import type { ProviderError } from './errors.js';
import type { AssistantMessage, Message, Usage } from './messages.js';
import type { ProviderRequest } from './provider.js';
import { defaultMaxResultChars, type ProviderRequestBuilder } from './provider-request.js';
import { answerableToolCalls } from './tool-call-ids.js';
import type { ToolRegistry } from './tool-registry.js';

/** What a model call needs from the loop. */
export interface ModelCall {
  runId: string;
  signal: AbortSignal;
  emit: (event: AgentEvent) => void;
  listening: () => boolean;
  /** Receives the usage of compaction calls made for this call. */
  onUsage: (usage: Usage) => void;
  /** Receives the typed error when the call (after any retry) failed. */
  onError: (error: ProviderError) => void;
  /** A paused turn recorded before a crash: sent back so the API resumes it (see `continues`). */
  continues?: AssistantMessage;
  /** Records a paused turn before the provider continues it (a journaled run only). */
  onCheckpoint?: (paused: AssistantMessage) => Promise<void>;
}

/** What one compaction is for and where its events and usage go. */
export interface CompactOptions {
  reason: CompactionReason;
  focus?: string | undefined;
  tokensBefore?: number;
  runId?: string;
  signal: AbortSignal;
  emit: (event: AgentEvent) => void;
  onUsage: (usage: Usage) => void;
}

/** What the model caller reads from its agent. */
export interface ModelCallerSource {
  readonly options: AgentOptions;
  readonly tools: ToolRegistry;
  readonly messages: readonly Message[];
  readonly compactor: ContextCompactor;
  readonly requests: ProviderRequestBuilder;
}

/** Calls the agent's model, compacting the conversation when it would not fit. */
export class ModelCaller {
  readonly #source: ModelCallerSource;
  /** Tokens the last model call reported for its request and answer, and on which compaction. */
  #measured: { index: number; tokens: number; compactions: number } | undefined;

  constructor(source: ModelCallerSource) {
    this.#source = source;
  }

  /**
   * One model call at the provider boundary: compacted first when the next request passes the
   * threshold of the model's window; on a context-overflow error, compacted and sent once more.
   */
  async call(call: ModelCall): Promise<AssistantMessage> {
    const { compactor, requests, options } = this.#source;
    let request = requests.request();
    const threshold = compactor.enabled ? compactor.thresholdTokens : undefined;
    if (threshold !== undefined) {
      const tokens = this.estimateContext(request);
      if (compactor.dueAtThreshold(tokens)) {
        const outcome = await this.compact({ ...call, reason: 'threshold', tokensBefore: tokens });
        if (outcome.type === 'compacted') request = requests.request();
      }
    }
    let failure: ProviderError | undefined;
    const continues = call.continues;
    const send = (sent: ProviderRequest) =>
      streamAssistantMessage(options.provider, withPausedTurn(sent, continues), {
        signal: call.signal,
        conversation: this.#source.messages,
        ...(continues === undefined ? {} : { continues }),
        ...(call.onCheckpoint === undefined ? {} : { onCheckpoint: call.onCheckpoint }),
        onStart: (partial) => call.emit({ type: 'message-start', message: partial }),
        // One per streamed delta: not built when nobody listens.
        onEvent: (partial, event) => {
          if (call.listening()) call.emit({ type: 'message-update', message: partial, event });
        },
        onError: (error) => {
          failure = error;
        },
      });
    let assistant = await send(request);
    if (
      assistant.stopReason === 'error' &&
      !call.signal.aborted &&
      compactor.compactsOnOverflow(failure)
    ) {
      const outcome = await this.compact({
        ...call,
        reason: 'overflow',
        tokensBefore: estimateRequestTokens(request),
      });
      if (outcome.type === 'compacted') {
        call.onUsage(assistant.usage);
        failure = undefined;
        assistant = await send(requests.request());
      }
    }
    if (failure !== undefined && assistant.stopReason === 'error') call.onError(failure);
    // Repeated, reused or empty call ids and empty names made answerable before anything runs
    // (and before the journal records the answer); the stream renamed them as they started, so
    // this changes only calls a provider's final message brought without events.
    return answerableToolCalls(assistant, this.#source.messages);
  }

  /** Runs one compaction with its events; never rejects. */
  async compact(options: CompactOptions): Promise<CompactionOutcome> {
    const { compactor, requests, messages, tools } = this.#source;
    const { reason, emit } = options;
    const tokensBefore = options.tokensBefore ?? this.estimateContext(requests.request());
    const run = options.runId === undefined ? {} : { runId: options.runId };
    let started = false;
    const outcome = await compactor.compact({
      messages,
      view: (index) => requests.olderView(index),
      lookup: (name) => tools.get(name),
      reason,
      focus: options.focus,
      signal: options.signal,
      tokensBefore,
      tokensAfter: () => this.estimateContext(requests.request()),
      maxResultChars: this.#source.options.maxResultChars ?? defaultMaxResultChars,
      onUsage: options.onUsage,
      onStart: () => {
        started = true;
        emit({ type: 'compaction-start', ...run, reason, tokensBefore });
      },
    });
    if (!started) return outcome;
    switch (outcome.type) {
      case 'compacted':
        emit({ type: 'compaction-end', ...run, reason, compaction: outcome.compaction });
        break;
      case 'failed':
        emit({ type: 'compaction-end', ...run, reason, error: outcome.error });
        break;
      case 'skipped':
        emit({ type: 'compaction-end', ...run, reason, error: outcome.reason });
        break;
      default: {
        const _exhaustive: never = outcome;
        return _exhaustive;
      }
    }
    return outcome;
  }

  /**
   * Estimated tokens of `request`: the last answer's reported usage (its request and its output)
   * when it was made on the current compaction, plus estimates of the messages added since;
   * otherwise the whole request estimated from its characters.
   */
  estimateContext(request: ProviderRequest): number {
    const { messages, compactor } = this.#source;
    const measured = this.#measured;
    if (
      measured !== undefined &&
      measured.compactions === compactor.compactions.length &&
      measured.index < messages.length
    ) {
      let tokens = measured.tokens;
      for (let index = measured.index + 1; index < messages.length; index++)
        tokens += estimateMessageTokens(messages[index] as Message);
      return tokens;
    }
    return estimateRequestTokens(request);
  }

  /** Keeps the reported size of the call that produced `assistant` (appended next). */
  measure(assistant: AssistantMessage): void {
    const { input, cacheRead, cacheWrite, output } = assistant.usage;
    const tokens = input + cacheRead + cacheWrite + output;
    if (tokens === 0 || assistant.stopReason === 'error' || assistant.stopReason === 'aborted')
      return;
    this.#measured = {
      index: this.#source.messages.length,
      tokens,
      compactions: this.#source.compactor.compactions.length,
    };
  }
}

/** The request with a paused turn as its last message: the API resumes the turn from it. */
function withPausedTurn(
  request: ProviderRequest,
  paused: AssistantMessage | undefined,
): ProviderRequest {
  return paused === undefined ? request : { ...request, messages: [...request.messages, paused] };
}
