import { streamAssistantMessage } from './assistant-stream.js';
import {
  type Compaction,
  type CompactionOptions,
  type CompactionOutcome,
  type CompactionReason,
  chooseFirstKeptIndex,
  compactionSummaryMessage,
  compactionSystemPrompt,
  filesTouched,
  summaryRequestText,
  transcriptEntries,
  validateCompactions,
} from './compaction.js';
import { estimateMessageTokens, estimateTextTokens } from './context-estimate.js';
import { AgentError, type ProviderError } from './errors.js';
import {
  addUsage,
  emptyUsage,
  type Message,
  messageText,
  type Usage,
  type UserMessage,
  userMessage,
} from './messages.js';
import type { Provider } from './provider.js';
import { clipText } from './result-budget.js';
import type { AnyAgentTool } from './tool.js';

/** What one compaction needs from the agent. */
export interface CompactRequest {
  /** The stored conversation. */
  messages: readonly Message[];
  /** Message `index` as requests show it (after the history transform), or undefined when left out. */
  view: (index: number) => Message | undefined;
  /** The agent's tool of a name (for the files its calls touched). */
  lookup: (name: string) => AnyAgentTool | undefined;
  reason: CompactionReason;
  focus?: string | undefined;
  signal: AbortSignal;
  /** Estimated tokens of the next request as it is now. */
  tokensBefore: number;
  /** Estimated tokens of the next request once the new compaction is in place. */
  tokensAfter: () => number;
  /** Longest tool result text quoted in the summary's input. */
  maxResultChars: number;
  /** Receives the usage of each summary call (the run counts it). */
  onUsage: (usage: Usage) => void;
  /** Called once there is something to summarise, before the first summary call. */
  onStart: () => void;
}

const defaultThreshold = 0.8;
const defaultSummaryMaxOutputTokens = 8_192;
/** How many times smaller than estimated a summary call's input may be made after overflows (2⁵). */
const maxShrink = 32;

/** A threshold compaction must summarise at least this fraction of the window: no call for crumbs. */
const minimumSpanFraction = 0.05;

/**
 * After a threshold compaction whose summary call was made but gave nothing usable, the context
 * must grow by this fraction of the window (doubled after each further failure) before the
 * threshold tries again: a summary call that fails, or a summary larger than what it would
 * replace, was otherwise paid for again on every turn. An overflow still compacts at once.
 */
const retryGrowthFraction = 0.1;

/**
 * The compaction state of one agent: its compactions (the latest one decides what is sent), the
 * window and threshold, and the summary calls. Stored messages are never changed.
 */
export class ContextCompactor {
  readonly #provider: Provider;
  readonly #model: string;
  readonly #settings: CompactionOptions | undefined;
  readonly #compactions: Compaction[];
  #summary: { compaction: Compaction; message: UserMessage } | undefined;
  /** Set after threshold compactions that failed in a row: the context size that may try again. */
  #thresholdRetry: { failures: number; above: number } | undefined;

  constructor(options: {
    provider: Provider;
    model: string;
    settings: CompactionOptions | false | undefined;
    restored: readonly Compaction[];
    messageCount: number;
  }) {
    this.#provider = options.provider;
    this.#model = options.model;
    this.#settings = options.settings === false ? undefined : checkSettings(options.settings ?? {});
    this.#compactions = validateCompactions(options.restored, options.messageCount);
  }

  /** Whether the agent compacts at all (`compaction: false` turns it off; restored ones still apply). */
  get enabled(): boolean {
    return this.#settings !== undefined;
  }

  /** Every compaction so far, oldest first. */
  get compactions(): readonly Compaction[] {
    return this.#compactions;
  }

  /** Takes a compaction made in an earlier process (a journaled model step replayed). */
  adopt(compaction: Compaction): void {
    this.#compactions.push(structuredClone(compaction));
  }

  /** Index of the first stored message sent as it is (0 before any compaction). */
  get firstKeptIndex(): number {
    return this.#compactions.at(-1)?.firstKeptIndex ?? 0;
  }

  /** The message that stands in for the summarised messages, or undefined before any compaction. */
  summaryMessage(): UserMessage | undefined {
    const latest = this.#compactions.at(-1);
    if (latest === undefined) return undefined;
    if (this.#summary?.compaction !== latest)
      this.#summary = { compaction: latest, message: compactionSummaryMessage(latest) };
    return this.#summary.message;
  }

  /** The model's context window in tokens: the option, else the provider's catalogue. */
  get contextWindow(): number | undefined {
    return this.#settings?.contextWindow ?? this.#provider.modelInfo?.(this.#model)?.contextWindow;
  }

  /** Tokens of the next request past which it is compacted first, when the window is known. */
  get thresholdTokens(): number | undefined {
    const window = this.contextWindow;
    if (window === undefined || this.#settings === undefined) return undefined;
    return Math.floor(window * (this.#settings.threshold ?? defaultThreshold));
  }

  /**
   * Whether a request of `tokens` estimated tokens is compacted first: past the threshold, and
   * past where failed threshold compactions said to wait until.
   */
  dueAtThreshold(tokens: number): boolean {
    const threshold = this.#settings === undefined ? undefined : this.thresholdTokens;
    if (threshold === undefined || tokens <= threshold) return false;
    return this.#thresholdRetry === undefined || tokens > this.#thresholdRetry.above;
  }

  /** Whether a failed call is one a compaction and a retry can fix. */
  compactsOnOverflow(error: ProviderError | undefined): boolean {
    return (
      this.#settings !== undefined &&
      this.#settings.onOverflow !== false &&
      error?.contextOverflow === true
    );
  }

  /** Summarises the older turns; never rejects (a failed summary call is a `failed` outcome). */
  async compact(request: CompactRequest): Promise<CompactionOutcome> {
    let called = false;
    const outcome = await this.#compact({
      ...request,
      onStart: () => {
        called = true;
        request.onStart();
      },
    }).catch(
      (caught: unknown): CompactionOutcome => ({
        type: 'failed',
        error: `Compaction failed: ${String(caught)}`,
      }),
    );
    if (outcome.type === 'compacted') this.#thresholdRetry = undefined;
    else if (called && request.reason === 'threshold' && !request.signal.aborted) {
      const failures = (this.#thresholdRetry?.failures ?? 0) + 1;
      const growth = (this.contextWindow ?? 0) * retryGrowthFraction * 2 ** (failures - 1);
      this.#thresholdRetry = { failures, above: request.tokensBefore + growth };
    }
    return outcome;
  }

  async #compact(request: CompactRequest): Promise<CompactionOutcome> {
    const { messages, view } = request;
    const settings = this.#settings ?? {};
    const window = this.contextWindow;
    const from = this.firstKeptIndex;
    let keep =
      settings.keepRecentTokens ??
      (window === undefined ? 8_000 : Math.min(20_000, Math.floor(window / 4)));
    // The request did not fit: keep less of it word for word.
    if (request.reason === 'overflow') keep = Math.floor(keep / 2);
    // Asked for: everything but the newest turn goes into the summary.
    if (request.reason === 'manual') keep = 0;
    const tokensOf = (index: number) => {
      const message = view(index);
      return message === undefined ? 0 : estimateMessageTokens(message);
    };
    const cut = chooseFirstKeptIndex(messages, from, keep, tokensOf);
    if (cut === undefined)
      return { type: 'skipped', reason: 'nothing older than the newest turn to summarise' };
    const span: Message[] = [];
    let spanTokens = 0;
    for (let index = from; index < cut; index++) {
      const message = view(index);
      if (message === undefined) continue;
      span.push(message);
      spanTokens += estimateMessageTokens(message);
    }
    if (
      request.reason === 'threshold' &&
      window !== undefined &&
      spanTokens < window * minimumSpanFraction
    )
      return {
        type: 'skipped',
        reason: 'too little before the newest turns to be worth a summary',
      };

    request.onStart();
    const model = settings.model ?? this.#model;
    const maxOutputTokens =
      settings.summaryMaxOutputTokens ??
      Math.min(
        defaultSummaryMaxOutputTokens,
        this.#provider.modelInfo?.(model)?.maxOutputTokens ?? defaultSummaryMaxOutputTokens,
        // A summary is a small part of the window it must fit in.
        window === undefined
          ? defaultSummaryMaxOutputTokens
          : Math.max(256, Math.floor(window / 4)),
      );
    // What one summary call may carry: the window less the answer and the prompt, or, with the
    // window unknown (an overflow told us it is smaller than what we sent), half of that.
    const fixedTokens = estimateTextTokens(
      compactionSystemPrompt.length + (settings.instructions?.length ?? 0) + 2_000,
    );
    const inputBudget = Math.max(
      2_000,
      window === undefined
        ? Math.floor(request.tokensBefore / 2)
        : Math.floor(window * 0.75) - maxOutputTokens - fixedTokens,
    );

    const previousSummary = this.#compactions.at(-1)?.summary;
    let summary = previousSummary;
    // A model (or a server) that writes past the answer's limit: what it may keep of a summary.
    const maxSummaryChars = maxOutputTokens * 4;
    const usage = emptyUsage();
    const entries = boundedTranscript(
      transcriptEntries(span, request.maxResultChars),
      inputBudget * maxSummaryCalls * 4,
    );
    let next = 0;
    // How much smaller than the estimate a call's input is made: text denser in tokens than the
    // estimate's four characters a token (CJK, base64) overflows a summary call sized by it.
    let shrink = 1;
    while (next < entries.length) {
      const start = next;
      // Each call carries the summary so far plus as many entries as fit beside it.
      const room = Math.floor(
        (Math.max(1_000, inputBudget - estimateTextTokens(summary?.length ?? 0)) * 4) / shrink,
      );
      const chunk: string[] = [];
      let used = 0;
      while (next < entries.length) {
        const entry = entries[next] as string;
        if (chunk.length > 0 && used + entry.length > room) break;
        chunk.push(clipText(entry, room));
        used += Math.min(entry.length, room) + 2;
        next++;
      }
      const text = summaryRequestText({
        previousSummary: summary,
        transcript: chunk.join('\n\n'),
        focus: request.focus,
        instructions: settings.instructions,
      });
      let failure: ProviderError | undefined;
      const answer = await streamAssistantMessage(
        this.#provider,
        {
          model,
          systemPrompt: compactionSystemPrompt,
          messages: [userMessage(text)],
          maxOutputTokens,
        },
        {
          signal: request.signal,
          onStart: () => undefined,
          onEvent: () => undefined,
          onError: (error) => {
            failure = error;
          },
        },
      );
      addUsage(usage, answer.usage);
      request.onUsage(answer.usage);
      if (
        answer.stopReason === 'error' &&
        (failure as ProviderError | undefined)?.contextOverflow === true &&
        shrink < maxShrink
      ) {
        // Refused as too long: the same entries again, in pieces half the size.
        shrink *= 2;
        next = start;
        continue;
      }
      if (answer.stopReason === 'error' || answer.stopReason === 'aborted') {
        const error = `The summary call ${answer.stopReason === 'aborted' ? 'was aborted' : 'failed'}: ${answer.errorMessage ?? 'no reason given'}`;
        return failure === undefined
          ? { type: 'failed', error }
          : { type: 'failed', error, providerError: failure };
      }
      const written = messageText(answer).trim();
      if (written === '') return { type: 'failed', error: 'The model wrote an empty summary' };
      summary = clipText(written, maxSummaryChars);
    }
    if (summary === undefined) return { type: 'skipped', reason: 'nothing to summarise' };
    // A summary larger than what it stands in for would only make the next request larger (and,
    // at the threshold, be written again on the next turn).
    const replaced = estimateTextTokens(previousSummary?.length ?? 0) + spanTokens;
    const written = estimateTextTokens(summary.length);
    if (written > replaced)
      return {
        type: 'failed',
        error: `The summary (~${written} tokens) is larger than what it would stand in for (~${replaced} tokens): not used`,
      };

    const raw = messages.slice(from, cut);
    const compaction: Compaction = {
      firstKeptIndex: cut,
      summary,
      files: filesTouched(raw, request.lookup, this.#compactions.at(-1)?.files),
      reason: request.reason,
      tokensBefore: request.tokensBefore,
      tokensAfter: 0,
      ...(request.focus === undefined || request.focus.trim() === ''
        ? {}
        : { focus: request.focus.trim() }),
      model,
      usage,
      timestamp: Date.now(),
    };
    this.#compactions.push(compaction);
    compaction.tokensAfter = request.tokensAfter();
    return { type: 'compacted', compaction };
  }
}

/**
 * At most this many summary calls' worth of transcript is read by one compaction. A span far
 * past the window — a long session saved without compaction, resumed — was read whole, in pieces:
 * 1,000 turns of file reads took 56 summary calls (~7.5 million input tokens) before the first answer.
 */
const maxSummaryCalls = 4;

/**
 * `entries` within `maxChars`: the opening (the goal, as the user first put it) and as much of the
 * newest part as fits, the middle left out with one entry saying how much (the stored
 * conversation keeps it all).
 */
function boundedTranscript(entries: readonly string[], maxChars: number): string[] {
  let total = 0;
  for (const entry of entries) total += entry.length;
  if (total <= maxChars) return [...entries];
  const headBudget = Math.floor(maxChars / 8);
  const head: string[] = [];
  let used = 0;
  for (const entry of entries) {
    if (head.length > 0 && used + entry.length > headBudget) break;
    head.push(entry);
    used += Math.min(entry.length, headBudget);
  }
  const tail: string[] = [];
  let tailUsed = 0;
  for (let index = entries.length - 1; index >= head.length; index--) {
    const entry = entries[index] as string;
    if (tail.length > 0 && used + tailUsed + entry.length > maxChars) break;
    tail.unshift(entry);
    tailUsed += entry.length;
  }
  const left = entries.length - head.length - tail.length;
  if (left <= 0) return [...entries];
  let leftChars = total - used - tailUsed;
  if (leftChars < 0) leftChars = 0;
  return [
    ...head,
    `[${left} messages (~${estimateTextTokens(leftChars)} tokens) between these were left out: more than one compaction reads. Say in the summary that this part of the conversation is not covered.]`,
    ...tail,
  ];
}

function checkSettings(settings: CompactionOptions): CompactionOptions {
  const positive = (name: string, value: number | undefined) => {
    if (value !== undefined && !(value > 0))
      throw new AgentError(`compaction.${name} must be a number > 0, got ${String(value)}`);
  };
  positive('contextWindow', settings.contextWindow);
  positive('summaryMaxOutputTokens', settings.summaryMaxOutputTokens);
  if (settings.keepRecentTokens !== undefined && !(settings.keepRecentTokens >= 0))
    throw new AgentError(
      `compaction.keepRecentTokens must be a number >= 0, got ${String(settings.keepRecentTokens)}`,
    );
  const threshold = settings.threshold;
  if (threshold !== undefined && !(threshold > 0 && threshold <= 1))
    throw new AgentError(`compaction.threshold must be in (0, 1], got ${String(threshold)}`);
  return settings;
}
