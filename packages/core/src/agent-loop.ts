// One run of the agent loop: call the model, run the tools it asks for, feed the results back,
// until it answers without tool calls or something stops the run. Each step that can end the
// run returns a `Stop` (or nothing), instead of breaking out of nested loops.
import type { AgentRunResult } from './agent.js';
import type { AgentEvent, AgentStopReason } from './agent-events.js';
import type { AgentOptions } from './agent-options.js';
import type { ContextCompactor } from './context-compactor.js';
import { errorMessage, type ProviderError, RunLimitError } from './errors.js';
import {
  defaultAbortGraceMs,
  defaultToolTimeoutMs,
  type ExecuteToolCallsOutcome,
  type ExecuteToolCallsParams,
  executeToolCalls,
} from './execute-tool-calls.js';
import { LoopDetector } from './loop-detector.js';
import {
  type AssistantMessage,
  addUsage,
  emptyUsage,
  type Message,
  type ToolCallContent,
  type ToolResultMessage,
  toolCallsOf,
  type UserMessage,
  userMessage,
} from './messages.js';
import type { ModelCaller } from './model-call.js';
import { sharedResourceLocks } from './resource-locks.js';
import {
  eitherDenies,
  type InheritedRunLimits,
  inheritRunLimits,
  RunBudget,
  type RunContext,
} from './run-context.js';
import type { RunSteps } from './run-steps.js';
import type { ToolExecutionStrategy } from './strategy.js';
import { structuredOutputReminder } from './structured-output.js';
import type { ToolCatalogue } from './tool-catalogue.js';
import type { ToolRegistry } from './tool-registry.js';
import { unexecutedResults } from './tool-results.js';

const defaultMaxTurns = 100;
/** The longest delay setTimeout takes (2^31 - 1 ms). */
const maxTimerMs = 2_147_483_647;

/** The structured-output settings of an agent created with `output`. */
export interface StructuredOutputSettings {
  readonly name: string;
  readonly maxReminders: number;
}

/** What the loop needs from its agent (the conversation and queues are changed in place). */
export interface AgentLoopHost {
  readonly options: AgentOptions;
  readonly tools: ToolRegistry;
  readonly messages: Message[];
  readonly steering: UserMessage[];
  readonly followUps: UserMessage[];
  readonly catalogue: ToolCatalogue;
  readonly strategy: ToolExecutionStrategy;
  readonly compactor: ContextCompactor;
  readonly model: ModelCaller;
  readonly output: StructuredOutputSettings | undefined;
  /** This run's structured-output submission (a method: the tool's callback sets it between awaits). */
  submitted(): { value: unknown } | undefined;
  /** Sets (or, with undefined, clears) this run's submission. */
  setSubmission(submission: { value: unknown } | undefined): void;
}

/** One run as the loop sees it. */
export interface AgentLoopRun {
  readonly steps: RunSteps;
  readonly inputs: readonly Message[];
  readonly signal: AbortSignal;
  readonly listening: () => boolean;
  readonly emit: (event: AgentEvent) => void;
}

/** Why a run stops, with the message of an error and the budget that was spent. */
interface Stop {
  readonly reason: AgentStopReason;
  readonly error?: string;
  readonly budgetReason?: string;
}

/** What one turn came to: the run stops, the model answered without tool calls, or it goes on. */
type TurnOutcome = { kind: 'stop'; stop: Stop } | { kind: 'answered' } | { kind: 'continue' };

/** The per-run settings of tool execution, built once per run (the turn adds its calls). */
type ToolExecutionConfig = Omit<ExecuteToolCallsParams, 'calls' | 'assistant' | 'turn'>;

/** Runs the loop to its end; resolves with the run's result, never rejects. */
export function runAgentLoop(host: AgentLoopHost, run: AgentLoopRun): Promise<AgentRunResult> {
  return new AgentLoop(host, run).run();
}

class AgentLoop {
  readonly #host: AgentLoopHost;
  readonly #run: AgentLoopRun;
  readonly #added: Message[] = [];
  readonly #usage = emptyUsage();
  readonly #budget: RunBudget;
  readonly #loops: LoopDetector | undefined;
  readonly #tools: ToolExecutionConfig;
  /** maxTurns, maxToolCallsPerTurn and toolTimeoutMs, bounded by the parent run's. */
  readonly #limits: InheritedRunLimits;
  /** Aborted when a time budget on the run's chain runs out: what is running stops then. */
  readonly #deadline = new AbortController();
  /** The run's signal and the deadline's: what model calls and tools run under. */
  readonly #signal: AbortSignal;
  #turns = 0;
  #reminders = 0;
  #finalMessage: AssistantMessage | undefined;
  #providerError: ProviderError | undefined;

  constructor(host: AgentLoopHost, run: AgentLoopRun) {
    this.#host = host;
    this.#run = run;
    const options = host.options;
    const parent = options.parentRun;
    this.#budget = new RunBudget(options.budget ?? {}, parent?.context.budget);
    this.#signal = AbortSignal.any([run.signal, this.#deadline.signal]);
    this.#loops =
      options.loopDetection === false ? undefined : new LoopDetector(options.loopDetection ?? {});
    const depthLimit = parent?.depthLimit ?? parent?.context.depthLimit;
    const isPathDenied = eitherDenies(options.isPathDenied, parent?.context.isPathDenied);
    // A child may set tighter limits than its parent, never looser ones (its app's options or
    // an agent file could ask for an hour per command under a parent that allows a minute).
    this.#limits = inheritRunLimits(
      {
        maxTurns: options.maxTurns ?? defaultMaxTurns,
        maxToolCallsPerTurn: options.maxToolCallsPerTurn ?? Number.POSITIVE_INFINITY,
        toolTimeoutMs: options.toolTimeoutMs ?? defaultToolTimeoutMs,
      },
      parent?.context.limits,
    );
    const runContext: RunContext = {
      runId: run.steps.runId,
      agentPath: parent === undefined ? [] : [...parent.context.agentPath, parent.name],
      depth: parent === undefined ? 0 : parent.context.depth + 1,
      budget: this.#budget,
      limits: this.#limits,
      ...(depthLimit === undefined ? {} : { depthLimit }),
      ...(options.permissionGate === undefined ? {} : { permissionGate: options.permissionGate }),
      ...(isPathDenied === undefined ? {} : { isPathDenied }),
      ...(options.hooks === undefined ? {} : { hooks: options.hooks }),
    };
    this.#tools = {
      registry: host.catalogue.lookup,
      strategy: host.strategy,
      runSignal: this.#signal,
      run: runContext,
      hooks: options.hooks ?? {},
      permissionGate: options.permissionGate,
      locks: options.resourceLocks ?? sharedResourceLocks,
      defaultTimeoutMs: this.#limits.toolTimeoutMs,
      abortGraceMs: options.abortGraceMs ?? defaultAbortGraceMs,
      maxToolCallsPerTurn: this.#limits.maxToolCallsPerTurn,
      emit: run.emit,
      listening: run.listening,
      steeringPending: () => host.steering.length > 0,
      steps: run.steps,
    };
  }

  async run(): Promise<AgentRunResult> {
    const { steps, emit } = this.#run;
    const { runId } = steps;
    this.#host.setSubmission(undefined);
    // Let the caller attach iterators before the first event.
    await Promise.resolve();
    emit({ type: 'agent-start', runId });
    let stop: Stop;
    // A time budget cancels what is running when it runs out, not only the next model call: a
    // child's hour-long command must not outlive its parent's deadline.
    // (Past ~24.8 days setTimeout fires at once: such a budget is left to the checks before each
    // model call.)
    const left = this.#budget.msUntilDeadline();
    const timer =
      left === undefined || left > maxTimerMs
        ? undefined
        : setTimeout(() => this.#deadline.abort(new Error('The time budget is spent')), left);
    try {
      const started = await steps.input(() => [
        // A conversation saved (or crashed) between a tool call and its result would be rejected
        // by every provider: answer such calls before anything else is added.
        ...unansweredToolCallResults(this.#host.messages, this.#host.tools),
        ...this.#run.inputs,
        // A message steered while the agent was idle is simply the next user message.
        ...this.#host.steering.splice(0),
      ]);
      for (const message of started) this.#append(message);
      stop = await this.#turnsUntilStop();
    } catch (caught) {
      // A configured limit says what it is and how to raise it; anything else is the loop's own
      // bug, which must still end the run cleanly.
      stop = {
        reason: 'error',
        error: RunLimitError.isInstance(caught)
          ? caught.message
          : `Internal agent error: ${errorMessage(caught)}`,
      };
    } finally {
      clearTimeout(timer);
    }
    return this.#finish(stop);
  }

  async #turnsUntilStop(): Promise<Stop> {
    for (;;) {
      const before = this.#stopBeforeTurn();
      if (before !== undefined) return before;
      const turn = await this.#turn();
      if (turn.kind === 'stop') return turn.stop;
      if (turn.kind === 'answered') {
        const stop = await this.#stopOrGoOn();
        if (stop !== undefined) return stop;
      }
    }
  }

  /** Aborted, out of turns, or out of budget: the run stops before the next model call. */
  #stopBeforeTurn(): Stop | undefined {
    if (this.#run.signal.aborted) return { reason: 'aborted' };
    if (this.#turns >= this.#limits.maxTurns) return { reason: 'max-turns' };
    // Reserved synchronously: concurrent sub-agents cannot both take the last model call.
    const budgetReason = this.#budget.startModelCall();
    if (budgetReason !== undefined) return { reason: 'budget-exhausted', budgetReason };
    return undefined;
  }

  /** One model call and the tool calls it asks for. */
  async #turn(): Promise<TurnOutcome> {
    const { emit, signal, steps } = this.#run;
    const { runId } = steps;
    const turn = ++this.#turns;
    emit({ type: 'turn-start', runId, turn });
    const assistant = await this.#modelResponse(turn);
    const calls = toolCallsOf(assistant);
    if (assistant.stopReason === 'error' || assistant.stopReason === 'aborted') {
      const results = unexecutedResults(calls, this.#host.tools, assistant.stopReason);
      for (const message of results) this.#append(message);
      emit({ type: 'turn-end', runId, turn, message: assistant, toolResults: results });
      const timedOut = this.#timedOut();
      if (timedOut !== undefined) return { kind: 'stop', stop: timedOut };
      const reason = assistant.stopReason === 'aborted' || signal.aborted ? 'aborted' : 'error';
      return {
        kind: 'stop',
        stop:
          reason === 'error'
            ? { reason, error: assistant.errorMessage ?? 'The model call failed' }
            : { reason },
      };
    }
    if (calls.length === 0) {
      emit({ type: 'turn-end', runId, turn, message: assistant, toolResults: [] });
      return { kind: 'answered' };
    }
    const outcome = await executeToolCalls({ ...this.#tools, calls, assistant, turn });
    const loop = this.#observe(calls, outcome);
    for (const message of outcome.results) this.#append(message);
    emit({ type: 'turn-end', runId, turn, message: assistant, toolResults: outcome.results });
    const stop =
      loop?.stop === true
        ? {
            reason: 'loop-detected' as const,
            error: `The model repeated the same ${loop.repeated ?? 'tool'} call too many times in a row`,
          }
        : this.#stopAfterTools(outcome);
    if (stop !== undefined) return { kind: 'stop', stop };
    const steered = await steps.queuedMessages(turn, 'after-tools', () =>
      this.#host.steering.splice(0),
    );
    for (const message of steered) this.#append(message);
    return { kind: 'continue' };
  }

  /** The model's answer for this turn (or its recorded one on a replay), added to the conversation. */
  async #modelResponse(turn: number): Promise<AssistantMessage> {
    const host = this.#host;
    const { emit, listening, steps } = this.#run;
    const signal = this.#signal;
    const response = await steps.modelResponse(turn, async () => {
      const compacted = host.compactor.compactions.length;
      // A turn the API paused, recorded before the process died mid-continuation: resumed.
      const paused = await steps.pausedTurn(turn);
      let part = paused?.part ?? 0;
      const message = await host.model.call({
        runId: steps.runId,
        signal,
        emit,
        listening,
        ...(paused === undefined ? {} : { continues: paused.message }),
        ...(steps.journal === undefined
          ? {}
          : {
              onCheckpoint: (message: AssistantMessage) =>
                steps.recordPausedTurn(turn, ++part, message),
            }),
        onUsage: (spent) => {
          addUsage(this.#usage, spent);
          this.#budget.consume(spent);
        },
        onError: (failure) => {
          this.#providerError = failure;
        },
      });
      // Compactions made for this call are part of its step: a replay restores them.
      const made = host.compactor.compactions.slice(compacted);
      return made.length === 0 ? { message } : { message, compactions: structuredClone(made) };
    });
    const assistant = response.message;
    if (response.replayed) {
      for (const compaction of response.compactions ?? []) host.compactor.adopt(compaction);
      emit({ type: 'message-start', message: assistant });
    }
    addUsage(this.#usage, assistant.usage);
    this.#budget.consume(assistant.usage);
    host.model.measure(assistant);
    host.messages.push(assistant);
    this.#added.push(assistant);
    this.#finalMessage = assistant;
    emit({ type: 'message-end', message: assistant });
    return assistant;
  }

  /** Takes in a batch's results: the output submission, loaded tools, and the loop detector's say. */
  #observe(
    calls: readonly ToolCallContent[],
    outcome: ExecuteToolCallsOutcome,
  ): ReturnType<LoopDetector['observe']> | undefined {
    const host = this.#host;
    // Replayed calls of the output tool do not run its callback: their results carry the value.
    const submitted = submissionOf(outcome.results, host.output?.name);
    if (submitted !== undefined) host.setSubmission(submitted);
    host.catalogue.observe(calls, outcome.results);
    return this.#loops?.observe(
      calls,
      outcome.results,
      host.catalogue.lookup,
      outcome.parsedArguments,
    );
  }

  /** A fatal tool error, an abort, or a terminate vote stops the run after a batch. */
  #stopAfterTools(outcome: ExecuteToolCallsOutcome): Stop | undefined {
    if (outcome.fatal !== undefined) return { reason: 'error', error: outcome.fatal.message };
    if (this.#run.signal.aborted) return { reason: 'aborted' };
    const timedOut = this.#timedOut();
    if (timedOut !== undefined) return timedOut;
    if (outcome.terminate) {
      // A submitted structured result is how a run with `output` completes.
      return {
        reason:
          this.#host.output !== undefined && this.#host.submitted() !== undefined
            ? 'completed'
            : 'terminated',
      };
    }
    return undefined;
  }

  /**
   * The model answered without tool calls: queued messages (or a reminder to submit the
   * structured output) go on with the run; otherwise it stops.
   */
  async #stopOrGoOn(): Promise<Stop | undefined> {
    const host = this.#host;
    const pending = await this.#run.steps.queuedMessages(this.#turns, 'before-stop', () => [
      ...host.steering.splice(0),
      ...host.followUps.splice(0),
    ]);
    const output = host.output;
    if (pending.length === 0 && output !== undefined && host.submitted() === undefined) {
      const reminders = this.#reminders;
      if (reminders >= output.maxReminders) {
        return {
          reason: 'error',
          error: `The model ended without calling ${output.name}${reminders > 0 ? ` (reminded ${reminders} time${reminders === 1 ? '' : 's'})` : ''}`,
        };
      }
      this.#reminders++;
      pending.push(userMessage(structuredOutputReminder(output.name)));
    }
    if (pending.length === 0) return { reason: 'completed' };
    for (const message of pending) this.#append(message);
    return undefined;
  }

  #append(message: Message): void {
    this.#host.messages.push(message);
    this.#added.push(message);
    // Two events per tool result: not built when nobody receives them.
    if (!this.#run.listening()) return;
    this.#run.emit({ type: 'message-start', message });
    this.#run.emit({ type: 'message-end', message });
  }

  /** The stop of a run whose time budget ran out (and that was not aborted), or undefined. */
  #timedOut(): Stop | undefined {
    if (this.#run.signal.aborted || !this.#deadline.signal.aborted) return undefined;
    return {
      reason: 'budget-exhausted',
      budgetReason: this.#budget.exhausted() ?? 'the time budget is spent',
    };
  }

  /** Records the run's end, emits `agent-end`, and builds the result. */
  async #finish(stop: Stop): Promise<AgentRunResult> {
    const { steps, emit } = this.#run;
    const { runId } = steps;
    const { reason: stopReason, error } = stop;
    const providerError = this.#providerError;
    try {
      await steps.end(stopReason, error);
    } catch {
      // The run's messages are whole; without its end a resume would only replay it to the end.
    }
    const treeUsage = this.#budget.used;
    const end: AgentEvent = {
      type: 'agent-end',
      runId,
      stopReason,
      messages: this.#added,
      treeUsage: structuredClone(treeUsage),
    };
    if (error !== undefined) end.error = error;
    if (stopReason === 'budget-exhausted' && stop.budgetReason !== undefined)
      end.budgetReason = stop.budgetReason;
    if (stopReason === 'error' && providerError !== undefined) end.providerError = providerError;
    emit(end);
    const result: AgentRunResult = {
      runId,
      stopReason,
      messages: this.#added,
      finalMessage: this.#finalMessage,
      turns: this.#turns,
      usage: this.#usage,
      treeUsage,
    };
    if (error !== undefined) result.error = error;
    if (end.budgetReason !== undefined) result.budgetReason = end.budgetReason;
    if (stopReason === 'error' && providerError !== undefined) result.providerError = providerError;
    const submission = this.#host.submitted();
    if (submission !== undefined) result.output = submission.value;
    return result;
  }
}

/** Results for the calls of the conversation's last assistant message that have none yet. */
function unansweredToolCallResults(
  messages: readonly Message[],
  tools: ToolRegistry,
): ToolResultMessage[] {
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
  return unexecutedResults(missing, tools, 'interrupted');
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
