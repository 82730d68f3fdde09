import type { AgentEvent, AgentStopReason } from './agent-events.js';
import { type AgentLoopHost, runAgentLoop } from './agent-loop.js';
import type { AgentOptions } from './agent-options.js';
import type { Compaction, CompactionOutcome } from './compaction.js';
import { ContextCompactor } from './context-compactor.js';
import { AgentError, type ProviderError } from './errors.js';
import { EventFanout } from './event-queue.js';
import {
  type AssistantMessage,
  type Message,
  type Usage,
  type UserMessage,
  userMessage,
} from './messages.js';
import { ModelCaller } from './model-call.js';
import { ProviderRequestBuilder } from './provider-request.js';
import { RunSteps } from './run-steps.js';
import { assertValidStrategy, type ToolExecutionStrategy } from './strategy.js';
import {
  createStructuredOutputTool,
  type StructuredOutputOptions,
  structuredOutputToolName,
} from './structured-output.js';
import { ToolCatalogue } from './tool-catalogue.js';
import { ToolRegistry } from './tool-registry.js';

/** What a finished run reports. */
export interface AgentRunResult {
  runId: string;
  stopReason: AgentStopReason;
  /** Messages this run added, in order. */
  messages: Message[];
  /** The last assistant message of the run, if any. */
  finalMessage: AssistantMessage | undefined;
  /** Model calls made. */
  turns: number;
  /** Token usage summed over the run's model calls. */
  usage: Usage;
  /**
   * Usage of the whole run tree: this run's model calls plus those of every sub-agent run it
   * started (cost included when known). Equal to `usage` for a run without sub-agents.
   */
  treeUsage: Usage;
  /** Set when `stopReason` is `error` (or `loop-detected`: which call repeated). */
  error?: string;
  /** Set when `stopReason` is `budget-exhausted`: which budget was spent. */
  budgetReason?: string;
  /** The provider's typed error (status, retryability) when a model call ended the run. */
  providerError?: ProviderError;
  /**
   * With `AgentOptions.output`: the value the model submitted through the structured-output tool
   * (validated against the schema; the last one if it submitted more than once), else undefined.
   */
  output?: unknown;
}

/**
 * One run of an agent: iterate it for events, await `result` for the outcome. The run starts
 * on the next microtask whether or not anyone iterates; an iterator sees the events emitted
 * after it was created, so one created in the same tick as `run()` sees them all. Events are
 * not retained for iterators that do not exist (use `onEvent` or `subscribe` to listen).
 */
export interface AgentRun extends AsyncIterable<AgentEvent> {
  readonly runId: string;
  /** Resolves when the run ends; never rejects. */
  readonly result: Promise<AgentRunResult>;
  /** Aborts the run: running tools and the model call are cancelled; every pending call still gets a result. */
  abort(reason?: unknown): void;
}

/** Input that starts a run: text, a user message, or several messages. */
export type AgentInput = string | UserMessage | readonly Message[];

/** A plain-JSON snapshot of an agent's conversation. */
export interface AgentSnapshot {
  messages: Message[];
  /** The compactions of the conversation (what stood in for its older part when sent), when any. */
  compactions?: Compaction[];
}

/** How full the model's context is, as {@link Agent.contextUsage} estimates it. */
export interface ContextUsage {
  /** Estimated tokens of the next request (system prompt, tools, the conversation as sent). */
  tokens: number;
  /** The model's context window in tokens, when known. */
  contextWindow: number | undefined;
  /** Tokens past which the next request is compacted first, when the window is known and compaction is on. */
  thresholdTokens: number | undefined;
  /** Compactions so far. */
  compactions: number;
}

/**
 * The agent loop: calls the model, runs the tools it asks for, feeds results back, until the
 * model answers without tool calls (or a limit, a terminate vote, an abort, or a fatal error).
 * One run at a time per agent.
 */
export class Agent {
  readonly tools: ToolRegistry;
  readonly #options: AgentOptions;
  readonly #strategy: ToolExecutionStrategy;
  readonly #messages: Message[];
  readonly #steering: UserMessage[] = [];
  readonly #followUps: UserMessage[] = [];
  readonly #listeners = new Set<(event: AgentEvent) => void>();
  readonly #catalogue: ToolCatalogue;
  #current: { controller: AbortController; run: AgentRun } | undefined;
  readonly #compactor: ContextCompactor;
  readonly #requests: ProviderRequestBuilder;
  readonly #model: ModelCaller;
  readonly #output: Required<Omit<StructuredOutputOptions, 'description'>> | undefined;
  /** This run's structured-output submission. */
  #submission: { value: unknown } | undefined;

  constructor(options: AgentOptions) {
    this.#options = options;
    this.tools =
      options.tools instanceof ToolRegistry ? options.tools : new ToolRegistry(options.tools ?? []);
    this.#strategy = options.toolExecution ?? { type: 'parallel' };
    assertValidStrategy(this.#strategy);
    for (const [name, value] of [
      ['maxTurns', options.maxTurns],
      ['maxToolCallsPerTurn', options.maxToolCallsPerTurn],
      ['toolTimeoutMs', options.toolTimeoutMs],
      ['abortGraceMs', options.abortGraceMs],
      ['maxResultChars', options.maxResultChars],
      ['maxToolDefinitionChars', options.maxToolDefinitionChars],
      ['toolSearch.maxResults', options.toolSearch?.maxResults],
      ['budget.maxModelCalls', options.budget?.maxModelCalls],
      ['budget.maxTokens', options.budget?.maxTokens],
      ['budget.maxCost', options.budget?.maxCost],
      ['budget.timeoutMs', options.budget?.timeoutMs],
    ] as const) {
      if (value !== undefined && !(value >= 0))
        throw new AgentError(`${name} must be a number >= 0, got ${String(value)}`);
    }
    if (options.output !== undefined) {
      const output: StructuredOutputOptions =
        'schema' in options.output && !('_zod' in options.output)
          ? (options.output as StructuredOutputOptions)
          : { schema: options.output as StructuredOutputOptions['schema'] };
      const name = output.name ?? structuredOutputToolName;
      const maxReminders = output.maxReminders ?? 2;
      if (!(maxReminders >= 0))
        throw new AgentError(`output.maxReminders must be a number >= 0, got ${maxReminders}`);
      if (this.tools.has(name))
        throw new AgentError(
          `A tool is already named "${name}", which the output option needs (set output.name)`,
        );
      this.tools.register(
        createStructuredOutputTool({
          schema: output.schema,
          name,
          // claw-code's name reaches it too, unless one of the agent's tools already has it.
          ...(this.tools.get('StructuredOutput') === undefined ? {} : { aliases: [] }),
          ...(output.description === undefined ? {} : { description: output.description }),
          submit: (value) => {
            this.#submission = { value };
          },
        }),
      );
      this.#output = { schema: output.schema, name, maxReminders };
    }
    this.#messages = structuredClone([...(options.messages ?? [])]);
    this.#compactor = new ContextCompactor({
      provider: options.provider,
      model: options.model,
      settings: options.compaction,
      restored: options.compactions ?? [],
      messageCount: this.#messages.length,
    });
    this.#catalogue = new ToolCatalogue(this.tools, options.toolSearch);
    this.#catalogue.restore(this.#messages);
    const source = {
      options,
      tools: this.tools,
      messages: this.#messages,
      catalogue: this.#catalogue,
      compactor: this.#compactor,
    };
    this.#requests = new ProviderRequestBuilder(source);
    this.#model = new ModelCaller({ ...source, requests: this.#requests });
    if (options.onEvent !== undefined) this.#listeners.add(options.onEvent);
  }

  /** The whole conversation so far (a live read-only view). */
  get messages(): readonly Message[] {
    return this.#messages;
  }

  /** Whether a run is in progress. */
  get isRunning(): boolean {
    return this.#current !== undefined;
  }

  /** Listens to every event of every run; returns the unsubscribe function. */
  subscribe(listener: (event: AgentEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Queues a message to interrupt the current turn: calls not yet started are skipped
   * (`Skipped due to queued user message.`) and the message is sent next.
   */
  steer(message: string | UserMessage): void {
    this.#steering.push(typeof message === 'string' ? userMessage(message) : message);
  }

  /** Queues a message to send when the agent would otherwise stop. */
  followUp(message: string | UserMessage): void {
    this.#followUps.push(typeof message === 'string' ? userMessage(message) : message);
  }

  /**
   * Removes and returns the messages queued with {@link steer} and {@link followUp} that no run
   * has sent yet, steering first: one queued as a run was ending stays queued for the next run
   * (where it would follow that run's input), so a front end can send it as a prompt of its own.
   */
  takeQueuedMessages(): UserMessage[] {
    return [...this.#steering.splice(0), ...this.#followUps.splice(0)];
  }

  /** Aborts the current run, if any. */
  abort(reason?: unknown): void {
    this.#current?.run.abort(reason);
  }

  /** The conversation as plain JSON, to save and later pass back as `messages` (and `compactions`). */
  toJSON(): AgentSnapshot {
    const snapshot: AgentSnapshot = { messages: structuredClone(this.#messages) };
    if (this.#compactor.compactions.length > 0)
      snapshot.compactions = structuredClone([...this.#compactor.compactions]);
    return snapshot;
  }

  /** The compactions so far, oldest first: the latest decides what stands in for the older messages. */
  get compactions(): readonly Compaction[] {
    return this.#compactor.compactions;
  }

  /** How full the context of the next request is (an estimate; exact counts come with each answer's usage). */
  contextUsage(): ContextUsage {
    return {
      tokens: this.#model.estimateContext(this.#requests.request()),
      contextWindow: this.#compactor.contextWindow,
      thresholdTokens: this.#compactor.thresholdTokens,
      compactions: this.#compactor.compactions.length,
    };
  }

  /**
   * Summarises the older turns now (a `/compact`): `focus` says what the summary should keep
   * above all. Emits `compaction-start`/`compaction-end` to `subscribe` listeners. Never rejects,
   * except with an `AgentError` while a run is in progress.
   */
  async compact(
    options: { focus?: string; signal?: AbortSignal } = {},
  ): Promise<CompactionOutcome> {
    if (this.#current !== undefined)
      throw new AgentError('Cannot compact while the agent is running');
    const emit = (event: AgentEvent) => {
      for (const listener of this.#listeners) {
        try {
          listener(event);
        } catch {
          // A failing listener must not break the compaction.
        }
      }
    };
    return this.#model.compact({
      reason: 'manual',
      focus: options.focus,
      signal: options.signal ?? new AbortController().signal,
      emit,
      onUsage: () => undefined,
    });
  }

  /**
   * Starts a run. Throws an `AgentError` if a run is already in progress. With `runId` and a
   * `journal` (AgentOptions), resumes that run: its recorded input replaces `input`, its recorded
   * steps are replayed without calling the model or the tools, and it goes on from there — give
   * the agent the conversation as it was when that run started.
   */
  run(input?: AgentInput, options: RunOptions = {}): AgentRun {
    if (this.#current !== undefined)
      throw new AgentError('Agent is already running; wait for its result, steer() or followUp()');
    if (options.runId !== undefined && (typeof options.runId !== 'string' || options.runId === ''))
      throw new AgentError('runId must be a non-empty string');
    const runId = options.runId ?? globalThis.crypto.randomUUID();
    const controller = new AbortController();
    const external = options.signal;
    const onExternalAbort = () => controller.abort(external?.reason);
    if (external?.aborted) controller.abort(external.reason);
    else external?.addEventListener('abort', onExternalAbort, { once: true });

    const log = new EventFanout<AgentEvent>();
    const inputs = normaliseInput(input);
    const listening = () => log.hasSubscribers || this.#listeners.size > 0;
    const steps = new RunSteps(this.#options.journal, runId);
    const emit = (event: AgentEvent) => {
      log.push(event);
      for (const listener of this.#listeners) {
        try {
          listener(event);
        } catch {
          // A failing listener must not break the run.
        }
      }
    };
    const result = runAgentLoop(this.#loopHost(), {
      steps,
      inputs,
      signal: controller.signal,
      listening,
      emit,
    }).finally(() => {
      log.close();
      external?.removeEventListener('abort', onExternalAbort);
      this.#current = undefined;
    });
    const run: AgentRun = {
      runId,
      result,
      abort: (reason?: unknown) => {
        if (!controller.signal.aborted) controller.abort(reason);
      },
      [Symbol.asyncIterator]: () => log[Symbol.asyncIterator](),
    };
    this.#current = { controller, run };
    return run;
  }

  /** The agent's state as the loop of one run sees it. */
  #loopHost(): AgentLoopHost {
    return {
      options: this.#options,
      tools: this.tools,
      messages: this.#messages,
      steering: this.#steering,
      followUps: this.#followUps,
      catalogue: this.#catalogue,
      strategy: this.#strategy,
      compactor: this.#compactor,
      model: this.#model,
      output: this.#output,
      submitted: () => this.#submission,
      setSubmission: (submission) => {
        this.#submission = submission;
      },
    };
  }

  /**
   * The tool catalogue as the model sees it: the names of deferred tools not loaded yet, those
   * loaded by `tool_search` (in load order), and whether deferral was switched on by the budget.
   */
  get deferredTools(): { pending: string[]; loaded: readonly string[]; automatic: boolean } {
    return {
      pending: this.#catalogue.pending,
      loaded: this.#catalogue.loaded,
      automatic: this.#catalogue.automatic,
    };
  }
}

/** Options of one {@link Agent.run}. */
export interface RunOptions {
  /** Aborts the run. */
  signal?: AbortSignal;
  /** Resumes this run from the agent's journal (a new id is made when absent). */
  runId?: string;
}

/** Options of {@link runAgent}: the agent's options plus the input and an optional signal. */
export interface RunAgentOptions extends AgentOptions {
  input: AgentInput;
  signal?: AbortSignal;
}

/** Creates an agent and starts one run. */
export function runAgent(options: RunAgentOptions): AgentRun {
  const { input, signal, ...agentOptions } = options;
  return new Agent(agentOptions).run(input, signal === undefined ? {} : { signal });
}

function normaliseInput(input: AgentInput | undefined): Message[] {
  if (input === undefined) return [];
  if (typeof input === 'string') return [userMessage(input)];
  if (isMessageArray(input)) return [...input];
  return [input];
}

function isMessageArray(input: UserMessage | readonly Message[]): input is readonly Message[] {
  return Array.isArray(input);
}
