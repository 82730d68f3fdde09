import {
  type RunJournal,
  RunLimitError,
  type RunStep,
  type RunStepValues,
  runStepKey,
  type StepAttempt,
} from '@agent/core';
import { type Context, RestatePromise, TerminalError } from '@restatedev/restate-sdk';
import {
  isCancellation,
  type JournalValues,
  journalValues,
  limitErrorCode,
} from './journal-values.js';

// The core's run journal on Restate: each step of a run is a `ctx.run` in the invocation's
// journal, so a worker that dies mid-run is replaced by another that replays the journal — the
// model responses and tool results come back from Restate, not from the model and the tools.

interface Waiting {
  key: string;
  run: (attempt: StepAttempt) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** Options of {@link RestateRunJournal}. */
export interface RestateRunJournalOptions {
  /**
   * Applied to the JSON text of a step's value before Restate stores it [the values of the
   * worker's credential variables (`process.env`) become `[redacted:NAME]`, in their JSON-escaped
   * form too]; `false`: stored as they are. It must keep the text JSON. What a step stores is also
   * what the run goes on with, so a replay sees the same.
   */
  redact?: ((text: string) => string) | false;
  /**
   * Largest step Restate is asked to store, in bytes of JSON [4 MiB; Restate refuses messages
   * over 32 MiB and retries them forever]. A larger tool result is clipped to fit (head ¾,
   * tail ¼, one marker); any other step that large fails the run with an error saying so.
   */
  maxStepBytes?: number;
  /**
   * Bytes of JSON this run's steps may store in all [unlimited]: what the session's state may
   * still take (`agentSession` gives `maxStateBytes` less what the conversation holds). A tool
   * result past it is clipped to what is left; a prompt or model response past it ends the run
   * with an error saying so — Restate loads an object's whole state into every invocation, and
   * one prompt that added more than fits left the session unreadable (every invocation stuck).
   */
  maxRunBytes?: number;
  /**
   * Called (once) when Restate cancels the invocation: abort the run here, so the tools it is
   * running stop. The steps under way are then awaited again, and record what the abort left.
   */
  onCancel?: () => void;
}

/**
 * A {@link RunJournal} over a Restate handler's context. Model responses, tool results and the
 * run's input and end are `ctx.run` steps. Permission verdicts run directly: the approval gate
 * uses awakeables, which Restate journals itself (and which may not run inside `ctx.run`).
 * Steering does not exist in a Restate session (the object runs one prompt at a time), so those
 * steps run directly too.
 *
 * Restate replays by position, and re-runs a `ctx.run` whose result was not yet durable. To tell
 * "this call was running when the worker died" from "this call never started", the calls of
 * one batch are preceded by one marker step: its action runs only in the attempt that first
 * reaches the batch, so a later attempt that re-runs a call's action knows the call may have run
 * (and reports it as interrupted unless its tool is repeatable). The calls' steps are issued
 * together, in call order, once the marker is durable.
 */
export class RestateRunJournal implements RunJournal {
  readonly #context: Context;
  readonly #values: JournalValues;
  readonly #onCancel: (() => void) | undefined;
  readonly #maxRunBytes: number;
  /** Bytes of the steps counted so far, by step key: each once, live or replayed. */
  readonly #counted = new Map<string, number>();
  #used = 0;
  #cancelled = false;
  #batch: Waiting[] | undefined;

  constructor(context: Context, options: RestateRunJournalOptions = {}) {
    this.#context = context;
    this.#values = journalValues(options);
    this.#onCancel = options.onCancel;
    this.#maxRunBytes = options.maxRunBytes ?? Number.POSITIVE_INFINITY;
  }

  /** Bytes this run's steps stored so far (live and replayed). */
  get usedBytes(): number {
    return this.#used;
  }

  /** Counts a step's bytes once: when its action makes it, or when a replay hands it back. */
  #count(key: string, bytes: number): void {
    if (this.#counted.has(key)) return;
    this.#counted.set(key, bytes);
    this.#used += bytes;
  }

  /** What the run may still store. */
  #room(): number {
    return this.#maxRunBytes - this.#used;
  }

  step<T>(
    step: RunStep,
    run: (attempt: StepAttempt) => Promise<T | undefined>,
  ): Promise<T | undefined> {
    switch (step.type) {
      case 'tool-decision':
      case 'queued-messages':
      case 'steering-skip':
      // Asked inside the model response's own `ctx.run`, where no other `ctx.run` may start: a
      // paused turn is not kept apart here (Restate repeats that `ctx.run` whole after a crash).
      case 'model-checkpoint':
        return run({ interrupted: false });
      case 'tool-result': {
        const key = runStepKey(step);
        return this.#inBatch(key, async (attempt) => {
          const value = this.#values.toolResult(
            (await run(attempt)) as RunStepValues['tool-result'] | undefined,
            this.#room(),
          );
          // Counted as it is decided: the batch's other results see the room it took.
          this.#count(key, this.#values.bytes(value));
          return value;
        }) as Promise<T | undefined>;
      }
      case 'run-input':
      case 'model-response':
      case 'run-end': {
        const key = runStepKey(step);
        return this.#run(key, async () => {
          const value = this.#values.other(step.type, await run({ interrupted: false }), {
            bytes: this.#room(),
            why: "the session would then hold more than its maxStateBytes (28 MiB by default), what Restate loads into one invocation. Send less at once, go on in a new session, or raise agentSession's maxStateBytes together with the server's worker.invoker.per-invocation-memory-limit (32 MiB by default)",
          });
          this.#count(key, this.#values.bytes(value));
          return value;
        });
      }
      default: {
        const unknown: never = step;
        return Promise.reject(new Error(`Unknown run step ${JSON.stringify(unknown)}`));
      }
    }
  }

  /**
   * One `ctx.run` step, awaited through `#settle`; a replayed value is counted too. A step refused
   * for its size (journaled as such, so a replay refuses it again) ends the run as a
   * `RunLimitError`: its message names the limit and how to raise it.
   */
  async #run<T>(key: string, action: () => Promise<T>): Promise<T> {
    let live: Promise<T> | undefined;
    const journaled = this.#context.run(key, () => {
      live = action();
      return live;
    });
    let value: T;
    try {
      value = await this.#settle(journaled, () => live);
    } catch (error) {
      if (error instanceof TerminalError && error.code === limitErrorCode)
        throw new RunLimitError(error.message, { cause: error });
      throw error;
    }
    this.#count(key, this.#values.bytes(value));
    return value;
  }

  /**
   * Awaits a step. When Restate cancels the invocation meanwhile (the await rejects, the step's
   * action goes on), aborts the run (`onCancel`) and waits for the action — the aborted work's
   * own result — instead: the run then ends as aborted, every call with its result, and no tool
   * is left running. Restate records nothing more of a cancelled invocation but its outcome.
   */
  async #settle<T>(journaled: Promise<T>, live: () => Promise<T> | undefined): Promise<T> {
    try {
      return await journaled;
    } catch (error) {
      if (!isCancellation(error) || this.#onCancel === undefined) throw error;
      if (!this.#cancelled) {
        this.#cancelled = true;
        this.#onCancel();
      }
      const running = live();
      if (running === undefined) throw error;
      return await running;
    }
  }

  /** Queues a call's step; the calls asked for in one tick form one batch. */
  #inBatch(key: string, run: (attempt: StepAttempt) => Promise<unknown>): Promise<unknown> {
    return new Promise((resolve, reject) => {
      if (this.#batch === undefined) {
        this.#batch = [];
        queueMicrotask(() => {
          const batch = this.#batch ?? [];
          this.#batch = undefined;
          this.#runBatch(batch).catch((error: unknown) => {
            for (const waiting of batch) waiting.reject(error);
          });
        });
      }
      this.#batch.push({ key, run, resolve, reject });
    });
  }

  async #runBatch(batch: readonly Waiting[]): Promise<void> {
    const first = batch[0];
    if (first === undefined) return;
    let reachedNow = false;
    await this.#run(`calls ${first.key}`, async () => {
      reachedNow = true;
      return true;
    });
    // Created together, in call order: the same positions on every replay. Awaited together
    // too (the SDK awaits one combinator at a time); the loop waits for the whole batch anyway,
    // and a failing call aborts its siblings from inside its step, not from here.
    const live: (Promise<unknown> | undefined)[] = batch.map(() => undefined);
    const steps = batch.map((waiting, index) =>
      this.#context.run(waiting.key, () => {
        const running = waiting.run({ interrupted: !reachedNow });
        live[index] = running;
        return running;
      }),
    );
    const values = await this.#settle(RestatePromise.all(steps), () =>
      live.every((running) => running !== undefined) ? Promise.all(live) : undefined,
    );
    for (const [index, waiting] of batch.entries()) {
      this.#count(waiting.key, this.#values.bytes(values[index]));
      waiting.resolve(values[index]);
    }
  }
}
