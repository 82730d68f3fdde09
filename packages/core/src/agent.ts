import type { AgentEvent, AgentStopReason } from './agent-events.js';
import type { AgentOptions } from './agent-options.js';
import { streamAssistantMessage } from './assistant-stream.js';
import type { Compaction, CompactionOutcome, CompactionReason } from './compaction.js';
import { ContextCompactor } from './context-compactor.js';
import { estimateMessageTokens, estimateRequestTokens } from './context-estimate.js';
import { AgentError, errorMessage, type ProviderError } from './errors.js';
import { EventFanout } from './event-queue.js';
import { LoopDetector } from './loop-detector.js';
import {
  type AssistantMessage,
  addUsage,
  emptyUsage,
  type Message,
  type ToolCallContent,
  type ToolResultMessage,
  toolCallsOf,
  type Usage,
  type UserMessage,
  userMessage,
} from './messages.js';
import type { ProviderRequest } from './provider.js';
import { sharedResourceLocks } from './resource-locks.js';
import { olderToolResultForModel } from './result-budget.js';
import { eitherDenies, RunBudget, type RunContext } from './run-context.js';
import { RunSteps } from './run-steps.js';
import { fitToolDefinition } from './schema-budget.js';
import { assertValidStrategy, type ToolExecutionStrategy } from './strategy.js';
import {
  createStructuredOutputTool,
  type StructuredOutputOptions,
  structuredOutputReminder,
  structuredOutputToolName,
} from './structured-output.js';
import { type AnyAgentTool, type ToolDefinition, toToolDefinition } from './tool.js';
import { ToolCatalogue } from './tool-catalogue.js';
import { defaultAbortGraceMs, defaultToolTimeoutMs, executeToolCalls } from './tool-execution.js';
import { ToolRegistry } from './tool-registry.js';
import { unexecutedResults } from './tool-results.js';

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

/** What a model call needs from the loop. */
interface ModelCall {
  runId: string;
  signal: AbortSignal;
  emit: (event: AgentEvent) => void;
  listening: () => boolean;
  /** Receives the usage of compaction calls made for this call. */
  onUsage: (usage: Usage) => void;
  /** Receives the typed error when the call (after any retry) failed. */
  onError: (error: ProviderError) => void;
}

const defaultMaxTurns = 100;
const defaultMaxResultChars = 30_000;

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
  readonly #nativeDefinitions: {
    version: number;
    value:
      | { tools: ToolDefinition[]; deferred: NonNullable<ProviderRequest['deferredTools']> }
      | undefined;
  } = { version: -1, value: undefined };
  readonly #definitions: { version: number; loaded: number; list: ToolDefinition[] } = {
    version: -1,
    loaded: -1,
    list: [],
  };
  readonly #providerPrefix: {
    messages: Message[];
    start: number;
    end: number;
    registryVersion: number;
  } = {
    messages: [],
    start: 0,
    end: 0,
    registryVersion: -1,
  };
  #current: { controller: AbortController; run: AgentRun } | undefined;
  readonly #compactor: ContextCompactor;
  /** Tokens the last model call reported for its request and answer, and on which compaction. */
  #measured: { index: number; tokens: number; compactions: number } | undefined;
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
      tokens: this.#estimateContext(this.#request()),
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
    return this.#compact({
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
    const result = this.#loop(steps, inputs, controller.signal, listening, (event) => {
      log.push(event);
      for (const listener of this.#listeners) {
        try {
          listener(event);
        } catch {
          // A failing listener must not break the run.
        }
      }
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

  async #loop(
    steps: RunSteps,
    inputs: Message[],
    signal: AbortSignal,
    listening: () => boolean,
    emit: (event: AgentEvent) => void,
  ): Promise<AgentRunResult> {
    const { runId } = steps;
    const added: Message[] = [];
    const usage = emptyUsage();
    const parent = this.#options.parentRun;
    const budget = new RunBudget(this.#options.budget ?? {}, parent?.context.budget);
    const depthLimit = parent?.depthLimit ?? parent?.context.depthLimit;
    const isPathDenied = eitherDenies(this.#options.isPathDenied, parent?.context.isPathDenied);
    const runContext: RunContext = {
      runId,
      agentPath: parent === undefined ? [] : [...parent.context.agentPath, parent.name],
      depth: parent === undefined ? 0 : parent.context.depth + 1,
      budget,
      ...(depthLimit === undefined ? {} : { depthLimit }),
      ...(this.#options.permissionGate === undefined
        ? {}
        : { permissionGate: this.#options.permissionGate }),
      ...(isPathDenied === undefined ? {} : { isPathDenied }),
      ...(this.#options.hooks === undefined ? {} : { hooks: this.#options.hooks }),
    };
    let budgetReason: string | undefined;
    const loops =
      this.#options.loopDetection === false
        ? undefined
        : new LoopDetector(this.#options.loopDetection ?? {});
    let turns = 0;
    let reminders = 0;
    this.#submission = undefined;
    let finalMessage: AssistantMessage | undefined;
    let stopReason: AgentStopReason = 'completed';
    let error: string | undefined;
    let providerError: ProviderError | undefined;
    const append = (message: Message) => {
      this.#messages.push(message);
      added.push(message);
      // Two events per tool result: not built when nobody receives them.
      if (!listening()) return;
      emit({ type: 'message-start', message });
      emit({ type: 'message-end', message });
    };

    // Let the caller attach iterators before the first event.
    await Promise.resolve();
    emit({ type: 'agent-start', runId });
    try {
      const started = await steps.input(() => [
        // A conversation saved (or crashed) between a tool call and its result would be rejected
        // by every provider: answer such calls before anything else is added.
        ...this.#unansweredToolCallResults(),
        ...inputs,
        // A message steered while the agent was idle is simply the next user message.
        ...this.#steering.splice(0),
      ]);
      for (const message of started) append(message);
      const maxTurns = this.#options.maxTurns ?? defaultMaxTurns;
      outer: while (true) {
        while (true) {
          if (signal.aborted) {
            stopReason = 'aborted';
            break outer;
          }
          if (turns >= maxTurns) {
            stopReason = 'max-turns';
            break outer;
          }
          // Reserved synchronously: concurrent sub-agents cannot both take the last model call.
          budgetReason = budget.startModelCall();
          if (budgetReason !== undefined) {
            stopReason = 'budget-exhausted';
            break outer;
          }
          turns++;
          emit({ type: 'turn-start', runId, turn: turns });
          const response = await steps.modelResponse(turns, async () => {
            const compacted = this.#compactor.compactions.length;
            const message = await this.#callModel({
              runId,
              signal,
              emit,
              listening,
              onUsage: (spent) => {
                addUsage(usage, spent);
                budget.consume(spent);
              },
              onError: (failure) => {
                providerError = failure;
              },
            });
            // Compactions made for this call are part of its step: a replay restores them.
            const made = this.#compactor.compactions.slice(compacted);
            return made.length === 0
              ? { message }
              : { message, compactions: structuredClone(made) };
          });
          const assistant = response.message;
          if (response.replayed) {
            for (const compaction of response.compactions ?? []) this.#compactor.adopt(compaction);
            emit({ type: 'message-start', message: assistant });
          }
          addUsage(usage, assistant.usage);
          budget.consume(assistant.usage);
          this.#measure(assistant);
          this.#messages.push(assistant);
          added.push(assistant);
          finalMessage = assistant;
          emit({ type: 'message-end', message: assistant });
          const calls = toolCallsOf(assistant);

          if (assistant.stopReason === 'error' || assistant.stopReason === 'aborted') {
            const results = unexecutedResults(calls, this.tools, assistant.stopReason);
            for (const message of results) append(message);
            emit({
              type: 'turn-end',
              runId,
              turn: turns,
              message: assistant,
              toolResults: results,
            });
            stopReason = assistant.stopReason === 'aborted' || signal.aborted ? 'aborted' : 'error';
            if (stopReason === 'error') error = assistant.errorMessage ?? 'The model call failed';
            break outer;
          }
          if (calls.length === 0) {
            emit({ type: 'turn-end', runId, turn: turns, message: assistant, toolResults: [] });
            break;
          }

          const outcome = await executeToolCalls({
            calls,
            assistant,
            registry: this.#catalogue.lookup,
            strategy: this.#strategy,
            runSignal: signal,
            run: runContext,
            hooks: this.#options.hooks ?? {},
            permissionGate: this.#options.permissionGate,
            locks: this.#options.resourceLocks ?? sharedResourceLocks,
            defaultTimeoutMs: this.#options.toolTimeoutMs ?? defaultToolTimeoutMs,
            abortGraceMs: this.#options.abortGraceMs ?? defaultAbortGraceMs,
            maxToolCallsPerTurn: this.#options.maxToolCallsPerTurn ?? Number.POSITIVE_INFINITY,
            emit,
            listening,
            steeringPending: () => this.#steering.length > 0,
            steps,
            turn: turns,
          });
          // Replayed calls of the output tool do not run its callback: their results carry the value.
          const submitted = submissionOf(outcome.results, this.#output?.name);
          if (submitted !== undefined) this.#submission = submitted;
          this.#catalogue.observe(calls, outcome.results);
          const loop = loops?.observe(
            calls,
            outcome.results,
            this.#catalogue.lookup,
            outcome.parsedArguments,
          );
          for (const message of outcome.results) append(message);
          emit({
            type: 'turn-end',
            runId,
            turn: turns,
            message: assistant,
            toolResults: outcome.results,
          });
          if (loop?.stop === true) {
            stopReason = 'loop-detected';
            error = `The model repeated the same ${loop.repeated ?? 'tool'} call too many times in a row`;
            break outer;
          }

          if (outcome.fatal !== undefined) {
            stopReason = 'error';
            error = outcome.fatal.message;
            break outer;
          }
          if (signal.aborted) {
            stopReason = 'aborted';
            break outer;
          }
          if (outcome.terminate) {
            // A submitted structured result is how a run with `output` completes.
            stopReason =
              this.#output !== undefined && this.#submitted() !== undefined
                ? 'completed'
                : 'terminated';
            break outer;
          }
          const steered = await steps.queuedMessages(turns, 'after-tools', () =>
            this.#steering.splice(0),
          );
          for (const message of steered) append(message);
        }
        const pending = await steps.queuedMessages(turns, 'before-stop', () => [
          ...this.#steering.splice(0),
          ...this.#followUps.splice(0),
        ]);
        const output = this.#output;
        if (pending.length === 0 && output !== undefined && this.#submitted() === undefined) {
          if (reminders >= output.maxReminders) {
            stopReason = 'error';
            error = `The model ended without calling ${output.name}${reminders > 0 ? ` (reminded ${reminders} time${reminders === 1 ? '' : 's'})` : ''}`;
            break;
          }
          reminders++;
          pending.push(userMessage(structuredOutputReminder(output.name)));
        }
        if (pending.length === 0) {
          stopReason = 'completed';
          break;
        }
        for (const message of pending) append(message);
      }
    } catch (caught) {
      // The loop's own bug must still end the run cleanly.
      stopReason = 'error';
      error = `Internal agent error: ${errorMessage(caught)}`;
    }
    try {
      await steps.end(stopReason, error);
    } catch {
      // The run's messages are whole; without its end a resume would only replay it to the end.
    }
    const end: AgentEvent = { type: 'agent-end', runId, stopReason, messages: added };
    if (error !== undefined) end.error = error;
    if (stopReason === 'budget-exhausted' && budgetReason !== undefined)
      end.budgetReason = budgetReason;
    if (stopReason === 'error' && providerError !== undefined) end.providerError = providerError;
    emit(end);
    const result: AgentRunResult = {
      runId,
      stopReason,
      messages: added,
      finalMessage,
      turns,
      usage,
      treeUsage: budget.used,
    };
    if (error !== undefined) result.error = error;
    if (end.budgetReason !== undefined) result.budgetReason = end.budgetReason;
    if (stopReason === 'error' && providerError !== undefined) result.providerError = providerError;
    const submission = this.#submitted();
    if (submission !== undefined) result.output = submission.value;
    return result;
  }

  /** This run's submission (read through a method: the tool's callback sets it between awaits). */
  #submitted(): { value: unknown } | undefined {
    return this.#submission;
  }

  #unansweredToolCallResults(): Message[] {
    const messages = this.#messages;
    let lastAssistant = -1;
    for (let index = messages.length - 1; index >= 0; index--) {
      if (messages[index]?.role === 'assistant') {
        lastAssistant = index;
        break;
      }
    }
    const assistant = messages[lastAssistant];
    if (assistant?.role !== 'assistant') return [];
    const answered = new Set<string>();
    for (let index = lastAssistant + 1; index < messages.length; index++) {
      const message = messages[index];
      if (message?.role === 'toolResult') answered.add(message.toolCallId);
    }
    const missing = toolCallsOf(assistant).filter((call) => !answered.has(call.id));
    return unexecutedResults(missing, this.tools, 'interrupted');
  }

  #request(): ProviderRequest {
    const options = this.#options;
    const request: ProviderRequest = {
      model: options.model,
      messages: this.#messagesForProvider(),
      tools: this.#toolDefinitions(),
    };
    const native = this.#nativeDeferral();
    if (native !== undefined) {
      request.tools = native.tools;
      request.deferredTools = native.deferredTools;
    }
    if (options.systemPrompt !== undefined) request.systemPrompt = options.systemPrompt;
    if (options.toolChoice !== undefined) request.toolChoice = options.toolChoice;
    if (options.thinkingLevel !== undefined) request.thinkingLevel = options.thinkingLevel;
    if (options.maxOutputTokens !== undefined) request.maxOutputTokens = options.maxOutputTokens;
    if (options.temperature !== undefined) request.temperature = options.temperature;
    if (options.hostedTools !== undefined && options.hostedTools.length > 0)
      request.hostedTools = options.hostedTools;
    return request;
  }

  /**
   * With a provider that loads deferred tools natively: the tools sent at once and every
   * deferred definition, rebuilt only when the registry changes — the same arrays every turn,
   * whatever was loaded (the provider learns that from the search results in the history).
   */
  #nativeDeferral():
    | { tools: ToolDefinition[]; deferredTools: NonNullable<ProviderRequest['deferredTools']> }
    | undefined {
    const options = this.#options;
    if (options.toolSearch?.native === false) return undefined;
    if (options.provider.defersTools?.(options.model) !== true) return undefined;
    const cache = this.#nativeDefinitions;
    if (cache.version !== this.tools.version) {
      const view = this.#catalogue.nativeView();
      const budget = options.maxToolDefinitionChars ?? defaultMaxToolDefinitionChars;
      const fit = (tool: AnyAgentTool) => fitToolDefinition(toToolDefinition(tool), budget);
      cache.value =
        view === undefined
          ? undefined
          : {
              tools: view.eager.map(fit),
              deferred: {
                searchTool: this.#catalogue.searchToolName,
                tools: view.deferred.map(fit),
              },
            };
      cache.version = this.tools.version;
    }
    const value = cache.value;
    return value === undefined
      ? undefined
      : { tools: value.tools.slice(), deferredTools: value.deferred };
  }

  /** The tools' definitions, rebuilt only when the registry changes (a fresh array per request). */
  #toolDefinitions(): ToolDefinition[] {
    const cache = this.#definitions;
    const loaded = this.#catalogue.loaded.length;
    if (cache.version !== this.tools.version || cache.loaded !== loaded) {
      const budget = this.#options.maxToolDefinitionChars ?? defaultMaxToolDefinitionChars;
      cache.list = this.#catalogue
        .visibleTools()
        .map((tool) => fitToolDefinition(toToolDefinition(tool), budget));
      cache.version = this.tools.version;
      cache.loaded = loaded;
    }
    return cache.list.slice();
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

  /**
   * The copy of the conversation sent to the provider: the latest compaction's summary in place
   * of the messages it covers; tool results older than the newest batch through the history
   * transform (`olderToolResultForModel`); failed empty assistant messages dropped. Stored
   * history stays whole. Everything before the last assistant message is final, so that prefix
   * is built once and extended each turn (linear, not quadratic, in the history).
   */
  #messagesForProvider(): Message[] {
    const messages = this.#messages;
    const start = this.#compactor.firstKeptIndex;
    let lastAssistant = start;
    for (let index = messages.length - 1; index > start; index--) {
      if (messages[index]?.role === 'assistant') {
        lastAssistant = index;
        break;
      }
    }
    const cache = this.#providerPrefix;
    if (
      cache.registryVersion !== this.tools.version ||
      cache.start !== start ||
      cache.end > lastAssistant
    ) {
      cache.messages = [];
      cache.start = start;
      cache.end = start;
      cache.registryVersion = this.tools.version;
    }
    for (let index = cache.end; index < lastAssistant; index++) {
      const message = this.#olderView(index);
      if (message !== undefined) cache.messages.push(message);
    }
    cache.end = lastAssistant;
    // A fresh array per request (a provider may keep it), copied once: `concat` allocates it at
    // its final size, where `slice` and then `push` would copy the prefix twice.
    const tail: Message[] = [];
    for (let index = lastAssistant; index < messages.length; index++) {
      const message = messages[index] as Message;
      if (!isDroppedFromRequest(message)) tail.push(message);
    }
    const summary = this.#compactor.summaryMessage();
    return summary === undefined
      ? cache.messages.concat(tail)
      : ([summary] as Message[]).concat(cache.messages, tail);
  }

  /** Stored message `index` as requests show it once a newer assistant message follows, or undefined when left out. */
  #olderView(index: number): Message | undefined {
    const messages = this.#messages;
    const message = messages[index];
    if (message === undefined || isDroppedFromRequest(message)) return undefined;
    if (message.role !== 'toolResult') return message;
    const tool = this.tools.get(message.toolName);
    // Only a refetchable result's stub names its call: look that up only then.
    const call =
      tool?.policy?.history?.refetchable === true
        ? callBefore(messages, index, message.toolCallId)
        : undefined;
    const defaultLimit = this.#options.maxResultChars ?? defaultMaxResultChars;
    return olderToolResultForModel(message, tool, defaultLimit, call);
  }

  /**
   * One model call at the provider boundary: compacted first when the next request passes the
   * threshold of the model's window; on a context-overflow error, compacted and sent once more.
   */
  async #callModel(call: ModelCall): Promise<AssistantMessage> {
    const compactor = this.#compactor;
    let request = this.#request();
    const threshold = compactor.enabled ? compactor.thresholdTokens : undefined;
    if (threshold !== undefined) {
      const tokens = this.#estimateContext(request);
      if (tokens > threshold) {
        const outcome = await this.#compact({ ...call, reason: 'threshold', tokensBefore: tokens });
        if (outcome.type === 'compacted') request = this.#request();
      }
    }
    let failure: ProviderError | undefined;
    const send = (sent: ProviderRequest) =>
      streamAssistantMessage(this.#options.provider, sent, {
        signal: call.signal,
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
      const outcome = await this.#compact({
        ...call,
        reason: 'overflow',
        tokensBefore: estimateRequestTokens(request),
      });
      if (outcome.type === 'compacted') {
        call.onUsage(assistant.usage);
        failure = undefined;
        assistant = await send(this.#request());
      }
    }
    if (failure !== undefined && assistant.stopReason === 'error') call.onError(failure);
    return assistant;
  }

  /** Runs one compaction with its events; never rejects. */
  async #compact(options: {
    reason: CompactionReason;
    focus?: string | undefined;
    tokensBefore?: number;
    runId?: string;
    signal: AbortSignal;
    emit: (event: AgentEvent) => void;
    onUsage: (usage: Usage) => void;
  }): Promise<CompactionOutcome> {
    const { reason, emit } = options;
    const tokensBefore = options.tokensBefore ?? this.#estimateContext(this.#request());
    const run = options.runId === undefined ? {} : { runId: options.runId };
    let started = false;
    const outcome = await this.#compactor.compact({
      messages: this.#messages,
      view: (index) => this.#olderView(index),
      lookup: (name) => this.tools.get(name),
      reason,
      focus: options.focus,
      signal: options.signal,
      tokensBefore,
      tokensAfter: () => this.#estimateContext(this.#request()),
      maxResultChars: this.#options.maxResultChars ?? defaultMaxResultChars,
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
  #estimateContext(request: ProviderRequest): number {
    const measured = this.#measured;
    const messages = this.#messages;
    if (
      measured !== undefined &&
      measured.compactions === this.#compactor.compactions.length &&
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
  #measure(assistant: AssistantMessage): void {
    const { input, cacheRead, cacheWrite, output } = assistant.usage;
    const tokens = input + cacheRead + cacheWrite + output;
    if (tokens === 0 || assistant.stopReason === 'error' || assistant.stopReason === 'aborted')
      return;
    this.#measured = {
      index: this.#messages.length,
      tokens,
      compactions: this.#compactor.compactions.length,
    };
  }
}

/** Per-tool definition budget in JSON characters (~6k tokens); past it the schema is shortened. */
const defaultMaxToolDefinitionChars = 24_000;

/** The tool call `id` of the nearest assistant message before `index` that made it. */
function callBefore(
  messages: readonly Message[],
  index: number,
  id: string,
): ToolCallContent | undefined {
  for (let at = index - 1; at >= 0; at--) {
    const message = messages[at] as Message;
    if (message.role !== 'assistant') continue;
    const call = toolCallsOf(message).find((candidate) => candidate.id === id);
    if (call !== undefined) return call;
  }
  return undefined;
}

function isDroppedFromRequest(message: Message): boolean {
  return (
    message.role === 'assistant' &&
    (message.stopReason === 'error' || message.stopReason === 'aborted') &&
    message.content.length === 0
  );
}

/** Options of one {@link Agent.run}. */
export interface RunOptions {
  /** Aborts the run. */
  signal?: AbortSignal;
  /** Resumes this run from the agent's journal (a new id is made when absent). */
  runId?: string;
}

/**
 * The value the batch's last successful structured-output call submitted (`details.value` of its
 * result), or undefined: a replayed call is not run again, so its callback does not fire.
 */
function submissionOf(
  results: readonly ToolResultMessage[],
  name: string | undefined,
): { value: unknown } | undefined {
  if (name === undefined) return undefined;
  let submitted: { value: unknown } | undefined;
  for (const message of results) {
    const details = message.details as { value?: unknown } | undefined;
    if (
      message.toolName === name &&
      !message.isError &&
      details !== undefined &&
      'value' in details
    )
      submitted = { value: details.value };
  }
  return submitted;
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
