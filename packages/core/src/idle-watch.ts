/** What a guarded wait resolves with when nothing arrived within the idle timeout. */
export const stalled: unique symbol = Symbol('stalled');

/** The value {@link IdleWatch.guard} gives for a stall. */
export type Stalled = typeof stalled;

/** Ticks of the timer per timeout: a stall is noticed between 1 and 1¼ timeouts after the last byte. */
const ticksPerTimeout = 4;

/**
 * Notices a response that stops arriving. Each wait for the network is marked (`waiting`, then
 * `arrived`) — two field writes on the hot path, no clock read, no promise — and a timer ticking
 * four times a timeout calls `onStall` once a wait has lasted a whole timeout. Only time spent
 * waiting on the provider counts: a consumer that dawdles between reads starts no count.
 *
 * `guard` is the fallback for a stream that cannot be cancelled (its pending read would never
 * settle): it races the read against the stall, at the price of a promise per read.
 */
export class IdleWatch {
  readonly #timeoutMs: number;
  readonly #onStall: () => void;
  #timer: ReturnType<typeof setInterval> | undefined;
  #tick = 0;
  /** The tick at which the current wait began; meaningful while `#waiting`. */
  #waitTick = 0;
  #waiting = false;
  /** Settles the current guarded wait as stalled. */
  #wake: ((value: Stalled) => void) | undefined;
  #closed = false;
  /** A point in time (ms since the epoch) past which a wait is a stall too, while `applies`. */
  #deadline: { at: number; applies: () => boolean } | undefined;

  constructor(timeoutMs: number, onStall: () => void = () => undefined) {
    this.#timeoutMs = timeoutMs;
    this.#onStall = onStall;
  }

  /** The timeout in ms. */
  get timeoutMs(): number {
    return this.#timeoutMs;
  }

  /**
   * A wait for the network begins; with `resume`, it goes on from the last one (what arrived in
   * between was no progress: a keep-alive), its count not restarted.
   */
  waiting(resume = false): void {
    if (!resume) this.#waitTick = this.#tick;
    this.#waiting = true;
    if (this.#timer === undefined && !this.#closed) this.#start();
  }

  /** The wait ended (something arrived, or the read failed). */
  arrived(): void {
    this.#waiting = false;
  }

  /**
   * `promise`, unless it takes longer than the idle timeout: then {@link stalled}. A rejection of
   * `promise` after that is absorbed (the caller has already moved on).
   */
  guard<T>(promise: Promise<T>, resume = false): Promise<T | Stalled> {
    this.waiting(resume);
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

  /**
   * Also ends a wait still going at `at` (ms since the epoch), while `applies()` holds — checked
   * on the timer's ticks (so up to a quarter timeout late), never per chunk.
   */
  setDeadline(at: number, applies: () => boolean): void {
    this.#deadline = { at, applies };
  }

  /** Removes the deadline {@link setDeadline} set. */
  clearDeadline(): void {
    this.#deadline = undefined;
  }

  /** Stops the timer (the stream ended). */
  close(): void {
    this.#closed = true;
    this.#waiting = false;
    this.#wake = undefined;
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #settled(wake: (value: Stalled) => void): void {
    // Only the current wait's end stops the count; a late one of an abandoned wait does not.
    if (this.#wake !== wake) return;
    this.#waiting = false;
    this.#wake = undefined;
  }

  #start(): void {
    const timer = setInterval(this.#check, Math.max(1, this.#timeoutMs / ticksPerTimeout));
    // A watch never keeps a process alive by itself (the request it watches does, while open).
    (timer as { unref?: () => void }).unref?.();
    this.#timer = timer;
  }

  readonly #check = (): void => {
    this.#tick++;
    if (!this.#waiting) return;
    // Begun before the tick a whole timeout ago: it has lasted at least the timeout.
    const lasted = this.#tick >= this.#waitTick + ticksPerTimeout + 1;
    const deadline = this.#deadline;
    if (!lasted && (deadline === undefined || Date.now() < deadline.at || !deadline.applies()))
      return;
    const wake = this.#wake;
    this.#waiting = false;
    this.#wake = undefined;
    wake?.(stalled);
    this.#onStall();
  };
}
