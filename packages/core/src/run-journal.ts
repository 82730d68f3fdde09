import type { AgentStopReason } from './agent-events.js';
import type { Compaction } from './compaction.js';
import type { ToolErrorKind } from './errors.js';
import type { AssistantMessage, Message, ToolResultMessage, UserMessage } from './messages.js';
import type { AnyAgentTool } from './tool.js';

// The run journal (DESIGN §5½): the loop records each step of a run — the model's responses, the
// permission decisions, the tools' results — before it moves on, so a run whose process died can
// be replayed to where it stopped without calling the model or the tools again. The interface is
// engine-neutral: an embedded file journal implements it, and so can a durable-execution engine
// (a Restate `ctx.run` per step).

/**
 * One step of a run, as the journal keys it. Every step names its run; a tool step also names its
 * turn, its call's index in the assistant message and its call id (ids are the model's: the index
 * keeps two calls with one id apart).
 */
export type RunStep =
  /** What the run started with: its input, and results for calls a saved conversation left unanswered. */
  | { type: 'run-input'; runId: string }
  /** One model call's final assistant message (turn counts from 1). */
  | { type: 'model-response'; runId: string; turn: number }
  /**
   * A turn the API paused, as it stood before the provider continued it (Anthropic's
   * `pause_turn`; `part` counts the pauses of the turn from 1): a resumed run continues from the
   * last one instead of paying for the whole turn again.
   */
  | { type: 'model-checkpoint'; runId: string; turn: number; part: number }
  /** The permission gate's and `beforeToolExecution` hook's verdict on one call. */
  | { type: 'tool-decision'; runId: string; turn: number; index: number; toolCallId: string }
  /** One call's result, as the model will read it. */
  | { type: 'tool-result'; runId: string; turn: number; index: number; toolCallId: string }
  /** Messages queued with `steer()` or `followUp()` that the run took in at this point. */
  | {
      type: 'queued-messages';
      runId: string;
      turn: number;
      point: 'after-tools' | 'before-stop';
    }
  /** A batch of calls skipped because a steering message was queued. */
  | { type: 'steering-skip'; runId: string; turn: number; batch: number }
  /** How the run ended. */
  | { type: 'run-end'; runId: string };

/** The recorded value of each kind of step (plain JSON). */
export interface RunStepValues {
  'run-input': { messages: Message[] };
  /** With the compactions made before the call (so a replay sends what the run sent). */
  'model-response': { message: AssistantMessage; compactions?: Compaction[] };
  'model-checkpoint': { message: AssistantMessage };
  'tool-decision': /**
   * `answered`: the allow was an answer (the approver's, a grant's), not a rule's or the mode's;
   * `answeredCall`: the {@link toolCallFingerprint} of the call it answered (an answer stands in
   * for the question on resume only for that very call — same name, same arguments).
   */
    | { allowed: true; answered?: true; answeredCall?: string; replacedArgs?: unknown }
    | { allowed: false; result: ToolResultMessage };
  'tool-result': {
    message: ToolResultMessage;
    terminate: boolean;
    /** A fatal `ToolError` the tool threw: the run ends. */
    fatal?: { message: string; kind: ToolErrorKind };
  };
  'queued-messages': { messages: UserMessage[] };
  'steering-skip': { skipped: true };
  'run-end': { stopReason: AgentStopReason; error?: string };
}

/** What a journal tells the step it is about to run. */
export interface StepAttempt {
  /**
   * True when an earlier attempt of this step began and its outcome was never recorded: the
   * process running it died (or lost its engine) meanwhile. Journals must report it for
   * `tool-result` steps; for other steps they may leave it false.
   */
  interrupted: boolean;
}

/**
 * Where a run records its steps. `step` returns the step's recorded value when the journal has
 * one (a replay: `run` is not called); otherwise it calls `run`, durably records what it returns,
 * and only then resolves — the loop moves on after that. `undefined` means nothing happened: a
 * journal need not record it, and such a step runs again on replay. Steps of one run are asked
 * for in a deterministic order (the calls of a parallel batch in call order, synchronously), so
 * an engine that replays by position can map each to its own journal entry.
 *
 * Steps of type `queued-messages` and `steering-skip` only ever have a value when `steer()` or
 * `followUp()` was used during the run; a journal for an engine whose runs are never steered may
 * run them directly. `tool-decision` steps wrap the permission gate: a journal whose gate is
 * itself durable (an engine's awakeable) may run them directly too.
 */
export interface RunJournal {
  step<T>(
    step: RunStep,
    run: (attempt: StepAttempt) => Promise<T | undefined>,
  ): Promise<T | undefined>;
}

/** A stable text key for a step, unique within its run (`tool-result/2/0/call_1`). */
export function runStepKey(step: RunStep): string {
  switch (step.type) {
    case 'run-input':
    case 'run-end':
      return step.type;
    case 'model-response':
      return `${step.type}/${step.turn}`;
    case 'model-checkpoint':
      return `${step.type}/${step.turn}/${step.part}`;
    case 'tool-decision':
    case 'tool-result':
      return `${step.type}/${step.turn}/${step.index}/${step.toolCallId}`;
    case 'queued-messages':
      return `${step.type}/${step.turn}/${step.point}`;
    case 'steering-skip':
      return `${step.type}/${step.turn}/${step.batch}`;
    default: {
      const unknown: never = step;
      return unknown;
    }
  }
}

/**
 * Whether a call of `tool` that was running when its process died may simply run again on
 * resume: `policy.repeatable` when set, else true for read-only tools. Any other such call is
 * reported to the model as interrupted, with unknown effects.
 */
export function isRepeatable(tool: AnyAgentTool | undefined): boolean {
  const policy = tool?.policy;
  return policy?.repeatable ?? policy?.permission === 'read-only';
}

/** The text the model gets for a call whose process died while it ran. */
export const interruptedCallMessage =
  'Interrupted: the process running this call stopped before the call finished, so whether it ' +
  'took effect is unknown. Check its effects before calling it again.';

/**
 * A journal kept in memory: steps recorded in a `Map` per run. For tests and for runs that only
 * need to be replayed within one process; `entries` shows what was recorded.
 */
export class MemoryRunJournal implements RunJournal {
  readonly #runs = new Map<string, Map<string, { value?: unknown; started?: true }>>();

  async step<T>(
    step: RunStep,
    run: (attempt: StepAttempt) => Promise<T | undefined>,
  ): Promise<T | undefined> {
    let steps = this.#runs.get(step.runId);
    if (steps === undefined) {
      steps = new Map();
      this.#runs.set(step.runId, steps);
    }
    const key = runStepKey(step);
    const entry = steps.get(key);
    if (entry !== undefined && 'value' in entry) return structuredClone(entry.value) as T;
    const interrupted = entry?.started === true;
    if (step.type === 'tool-result') steps.set(key, { started: true });
    const value = await run({ interrupted });
    if (value !== undefined) steps.set(key, { value: structuredClone(value) });
    return value;
  }

  /** The recorded steps of `runId` by key: a value, or `started` for a step that never finished. */
  entries(runId: string): Map<string, { value?: unknown; started?: true }> {
    return new Map(this.#runs.get(runId));
  }

  /**
   * Forgets the outcome of a step while keeping that it started: the state a crash leaves behind
   * when it strikes while the step runs (for tests of resumption).
   */
  forgetOutcome(runId: string, key: string): void {
    const steps = this.#runs.get(runId);
    if (steps?.has(key) === true) steps.set(key, { started: true });
  }

  /** Forgets a step entirely, as if it never began. */
  forget(runId: string, key: string): void {
    this.#runs.get(runId)?.delete(key);
  }
}

/**
 * What an answer was given for: a SHA-256 (hex) of the call's name and its arguments as the
 * model sent them. A journal edited after the answer (other arguments under the same call id, or
 * another tool) no longer matches, so the question is asked again.
 */
export async function toolCallFingerprint(call: {
  name: string;
  arguments: string;
}): Promise<string> {
  const bytes = new TextEncoder().encode(JSON.stringify([call.name, call.arguments]));
  const digest = await globalThis.crypto.subtle.digest('SHA-256', bytes);
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, '0')).join('');
}
