import { type RunJournal, type RunStep, runStepKey, type StepAttempt } from '@agent/core';
import { type Context, RestatePromise } from '@restatedev/restate-sdk';

// The core's run journal on Restate: each step of a run is a `ctx.run` in the invocation's
// journal, so a worker that dies mid-run is replaced by another that replays the journal — the
// model responses and tool results come back from Restate, not from the model and the tools.

interface Waiting {
  key: string;
  run: (attempt: StepAttempt) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
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
  #batch: Waiting[] | undefined;

  constructor(context: Context) {
    this.#context = context;
  }

  step<T>(
    step: RunStep,
    run: (attempt: StepAttempt) => Promise<T | undefined>,
  ): Promise<T | undefined> {
    switch (step.type) {
      case 'tool-decision':
      case 'queued-messages':
      case 'steering-skip':
        return run({ interrupted: false });
      case 'tool-result':
        return this.#inBatch(runStepKey(step), run) as Promise<T | undefined>;
      case 'run-input':
      case 'model-response':
      case 'run-end':
        return this.#context.run(runStepKey(step), () => run({ interrupted: false }));
      default: {
        const unknown: never = step;
        return Promise.reject(new Error(`Unknown run step ${JSON.stringify(unknown)}`));
      }
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
    await this.#context.run(`calls ${first.key}`, async () => {
      reachedNow = true;
      return true;
    });
    // Created together, in call order: the same positions on every replay. Awaited together
    // too (the SDK awaits one combinator at a time); the loop waits for the whole batch anyway,
    // and a failing call aborts its siblings from inside its step, not from here.
    const steps = batch.map((waiting) =>
      this.#context.run(waiting.key, () => waiting.run({ interrupted: !reachedNow })),
    );
    const values = await RestatePromise.all(steps);
    for (const [index, waiting] of batch.entries()) waiting.resolve(values[index]);
  }
}
