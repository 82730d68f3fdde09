/** Mutual exclusion by string key: holders of one key run one after another, in arrival order. */
export class ResourceLocks {
  readonly #tails = new Map<string, Promise<void>>();

  /**
   * Waits until `key` is free, then holds it until the returned release function is called.
   * Rejects with the signal's reason if it aborts first (the place in line is given up).
   */
  async acquire(key: string, signal?: AbortSignal): Promise<() => void> {
    // Before taking a place in line: a slot registered and then abandoned would never be released.
    signal?.throwIfAborted();
    const previous = this.#tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tail = previous.then(() => mine);
    this.#tails.set(key, tail);
    const done = () => {
      release();
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    };
    if (signal === undefined) {
      await previous;
      return done;
    }
    let onAbort: (() => void) | undefined;
    try {
      await Promise.race([
        previous,
        new Promise<never>((_, reject) => {
          onAbort = () => reject(signal.reason);
          signal.addEventListener('abort', onAbort, { once: true });
        }),
      ]);
    } catch (error) {
      done();
      throw error;
    } finally {
      if (onAbort !== undefined) signal.removeEventListener('abort', onAbort);
    }
    return done;
  }

  /** Number of keys held or waited for. */
  get size(): number {
    return this.#tails.size;
  }
}

/** The process-wide lock table agents share by default, so sibling and sub-agents serialise too. */
export const sharedResourceLocks = new ResourceLocks();
