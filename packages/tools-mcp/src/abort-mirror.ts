// The signal the SDK gets for MCP calls: one per caller signal (see AbortMirror).

export type AbortListener = ((event: Event) => void) | { handleEvent(event: Event): void };

/**
 * The signal the SDK gets for the calls of one caller signal, aborted with the caller's reason
 * (the server is told why in notifications/cancelled). The SDK adds an 'abort' listener to a
 * request's signal and never removes it, so it cannot have the caller's own, possibly long-lived,
 * signal; an AbortController of its own per call (an EventTarget with its listener map, and the
 * SDK's listener on it) was the largest part of our CPU time per call beyond the SDK's own. The
 * mirror is one real AbortSignal per caller signal whose 'abort' listeners are kept in a set
 * rather than by the EventTarget: the listener a request adds is collected while the request is
 * sent, and dropped when the call ends.
 */
export class AbortMirror {
  readonly signal: AbortSignal;
  readonly #listeners = new Set<AbortListener>();
  /** Where the 'abort' listeners added right now go as well (while a request is being sent). */
  collecting: AbortListener[] | undefined;

  constructor(source: AbortSignal) {
    const controller = new AbortController();
    const signal = controller.signal;
    this.signal = signal;
    const listeners = this.#listeners;
    const { addEventListener, removeEventListener } = EventTarget.prototype;
    // Own properties in front of EventTarget's methods: 'abort' listeners live in the set (an
    // `onabort` handler too: EventTarget adds it through addEventListener).
    Object.defineProperties(signal, {
      addEventListener: {
        value: (type: string, listener: AbortListener | null, options?: unknown) => {
          if (type !== 'abort') {
            addEventListener.call(signal, type, listener as never, options as never);
          } else if (listener !== null && !signal.aborted) {
            listeners.add(listener);
            this.collecting?.push(listener);
          }
        },
      },
      removeEventListener: {
        value: (type: string, listener: AbortListener | null, options?: unknown) => {
          if (type !== 'abort') {
            removeEventListener.call(signal, type, listener as never, options as never);
          } else if (listener !== null) listeners.delete(listener);
        },
      },
    });
    source.addEventListener(
      'abort',
      () => {
        controller.abort(cancelReason(source.reason));
        const event = new Event('abort');
        for (const listener of [...listeners]) {
          try {
            if (typeof listener === 'function') listener.call(signal, event);
            else listener.handleEvent(event);
          } catch (error) {
            // As EventTarget does: the error is reported, the other listeners still run.
            queueMicrotask(() => {
              throw error;
            });
          }
        }
        listeners.clear();
      },
      { once: true },
    );
  }

  /** Drops listeners of a finished call. */
  release(added: readonly AbortListener[]): void {
    for (const listener of added) this.#listeners.delete(listener);
  }
}

/** One mirror per caller signal, whichever adapter it calls: one listener on the caller's signal. */
const mirrors = new WeakMap<AbortSignal, AbortMirror>();
export function mirrorOf(signal: AbortSignal): AbortMirror {
  let mirror = mirrors.get(signal);
  if (mirror === undefined) {
    mirror = new AbortMirror(signal);
    mirrors.set(signal, mirror);
  }
  return mirror;
}

function cancelReason(reason: unknown): string {
  if (reason instanceof Error) return reason.message;
  if (typeof reason === 'string') return reason;
  return 'Cancelled by the client';
}
