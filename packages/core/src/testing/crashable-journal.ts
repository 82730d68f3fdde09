import {
  MemoryRunJournal,
  type RunJournal,
  type RunStep,
  runStepKey,
  type StepAttempt,
} from '../run-journal.js';

/**
 * A run journal whose process can "die", for tests of resumption within one process: after
 * `crash()`, no step that was not recorded yet ever records or returns (the run hangs, as a
 * killed process would have stopped). `inner` then holds what a real crash leaves behind —
 * finished steps, and started ones — for a new agent to resume from.
 */
export class CrashableRunJournal implements RunJournal {
  /** What survives the crash. */
  readonly inner = new MemoryRunJournal();
  /** Keys of the steps asked for, in order. */
  readonly asked: string[] = [];
  #crashed = false;
  readonly #recorded = new Set<string>();
  readonly #waiters: { keys: readonly string[]; resolve: () => void }[] = [];

  /** Whether `crash()` was called. */
  get crashed(): boolean {
    return this.#crashed;
  }

  step<T>(step: RunStep, run: (attempt: StepAttempt) => Promise<T | undefined>) {
    const key = runStepKey(step);
    this.asked.push(key);
    if (this.#crashed) return new Promise<T | undefined>(() => {});
    const recorded = this.inner.step<T>(step, async (attempt) => {
      const value = await run(attempt);
      if (this.#crashed) return new Promise<T | undefined>(() => {});
      return value;
    });
    void recorded.then(() => this.#markRecorded(key));
    return recorded;
  }

  /** Stops recording: the process "dies" now. */
  crash(): void {
    this.#crashed = true;
  }

  /** Resolves once every step of `keys` (see `runStepKey`) has been recorded. */
  recorded(...keys: string[]): Promise<void> {
    return new Promise((resolve) => {
      this.#waiters.push({ keys, resolve });
      this.#markRecorded(undefined);
    });
  }

  #markRecorded(key: string | undefined): void {
    if (key !== undefined) this.#recorded.add(key);
    for (const waiter of this.#waiters) {
      if (waiter.keys.every((wanted) => this.#recorded.has(wanted))) waiter.resolve();
    }
  }
}
