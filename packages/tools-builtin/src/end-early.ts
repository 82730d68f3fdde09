// Ending a run early: at its time limit, or when its caller aborts it.
/** A run's time limit and abort signal, each ending it early; which of them did (see {@link endEarly}). */
export interface EarlyEnd {
  /** Whether the time limit ran out. */
  readonly timedOut: boolean;
  /** Whether the signal aborted the run. */
  readonly aborted: boolean;
  /** The run exited: its time limit no longer applies. */
  clearTimer(): void;
  /** The run is over: an abort has nothing left to end. */
  stopListening(): void;
}

/**
 * Calls `kill` when `timeoutMs` (ms) passes or `signal` aborts (at once when it already has),
 * and remembers which happened.
 */
export function endEarly(
  options: { timeoutMs?: number | undefined; signal?: AbortSignal | undefined },
  kill: () => void,
): EarlyEnd {
  let timedOut = false;
  let aborted = false;
  const timer =
    options.timeoutMs === undefined
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          kill();
        }, options.timeoutMs);
  const onAbort = () => {
    aborted = true;
    kill();
  };
  if (options.signal?.aborted) onAbort();
  else options.signal?.addEventListener('abort', onAbort, { once: true });
  return {
    get timedOut() {
      return timedOut;
    },
    get aborted() {
      return aborted;
    },
    clearTimer: () => {
      if (timer !== undefined) clearTimeout(timer);
    },
    stopListening: () => options.signal?.removeEventListener('abort', onAbort),
  };
}
