/** What a guarded wait resolves with when nothing arrived within the idle timeout. */
export const stalled: unique symbol = Symbol('stalled');

/** The value {@link IdleWatch.guard} gives for a stall. */
export type Stalled = typeof stalled;

const now = (): number => globalThis.performance.now();

/**
 * Notices a response that stops arriving: each wait for the network goes through `guard`, which
 * resolves with {@link stalled} once the wait has lasted `timeoutMs`. One timer serves the whole
 * stream (re-armed for what is left rather than set per chunk), and a wait made after the consumer
 * dawdled starts its own count: only time spent waiting on the provider is idle time.
 */
export class IdleWatch {
  readonly #timeoutMs: number;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** When the current wait began (`performance.now()`), while there is one. */
  #waitingSince: number | undefined;
  /** Settles the current wait as stalled. */
  #wake: ((value: Stalled) => void) | undefined;
  #closed = false;

  constructor(timeoutMs: number) {
    this.#timeoutMs = timeoutMs;
  }

  /** The timeout in ms. */
  get timeoutMs(): number {
    return this.#timeoutMs;
  }

  /**
   * `promise`, unless it takes longer than the idle timeout: then {@link stalled}. A rejection of
   * `promise` after that is absorbed (the caller has already moved on and cancels the request).
   */
  guard<T>(promise: Promise<T>): Promise<T | Stalled> {
    this.#waitingSince = now();
    if (this.#timer === undefined && !this.#closed) this.#arm(this.#timeoutMs);
    // A fresh promise per wait, not a race against one long-lived stall promise: that one would
    // collect a reaction per chunk for the whole length of the stream.
    return new Promise<T | Stalled>((resolve, reject) => {
      this.#wake = resolve;
      promise.then(
        (value) => {
          this.#settled(resolve);
          resolve(value);
        },
        (error: unknown) => {
          this.#settled(resolve);
          reject(error);
        },
      );
    });
  }

  /** Stops the timer (the stream ended). */
  close(): void {
    this.#closed = true;
    this.#waitingSince = undefined;
    this.#wake = undefined;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #settled(wake: (value: Stalled) => void): void {
    // Only the current wait's end stops the count; a late one of an abandoned wait does not.
    if (this.#wake !== wake) return;
    this.#waitingSince = undefined;
    this.#wake = undefined;
  }

  #arm(ms: number): void {
    const timer = setTimeout(this.#check, ms);
    // A watch never keeps a process alive by itself (the request it watches does, while open).
    (timer as { unref?: () => void }).unref?.();
    this.#timer = timer;
  }

  readonly #check = (): void => {
    this.#timer = undefined;
    const since = this.#waitingSince;
    // Nobody waiting: the next wait arms the timer again.
    if (this.#closed || since === undefined) return;
    const left = since + this.#timeoutMs - now();
    if (left > 0) {
      this.#arm(left);
      return;
    }
    const wake = this.#wake;
    this.#waitingSince = undefined;
    this.#wake = undefined;
    wake?.(stalled);
  };
}
