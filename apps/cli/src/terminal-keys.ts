import type { ApprovalAnswer, PermissionApprover } from '@agent/core';

/** The part of `process.stdin` the key reader needs (a TTY stream). */
export interface KeyInput {
  setRawMode(mode: boolean): unknown;
  resume(): unknown;
  pause(): unknown;
  on(event: 'data', listener: (chunk: Buffer | string) => void): unknown;
  off(event: 'data', listener: (chunk: Buffer | string) => void): unknown;
}

const ctrlC = '\u0003';

/**
 * Reads single keypresses from a terminal while a run is going: Ctrl-C calls `onInterrupt`
 * (raw mode turns it into a byte instead of SIGINT, so the process survives it), any other key
 * answers a pending {@link nextKey}. Keys typed while nothing waits are dropped.
 */
export class RunKeys {
  readonly #input: KeyInput;
  #onInterrupt: () => void = () => {};
  #waiter: ((key: string | undefined) => void) | undefined;
  #active = false;
  readonly #onData = (chunk: Buffer | string) => {
    const text = typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    if (text.includes(ctrlC)) {
      this.#settle(undefined);
      this.#onInterrupt();
      return;
    }
    this.#settle(text);
  };

  constructor(input: KeyInput) {
    this.#input = input;
  }

  /** Starts listening (raw mode on); `onInterrupt` runs on each Ctrl-C. */
  start(onInterrupt: () => void): void {
    this.#onInterrupt = onInterrupt;
    if (this.#active) return;
    this.#active = true;
    this.#input.setRawMode(true);
    this.#input.on('data', this.#onData);
    this.#input.resume();
  }

  /** Stops listening and gives the terminal back (raw mode off, input paused). */
  stop(): void {
    this.#settle(undefined);
    if (!this.#active) return;
    this.#active = false;
    this.#input.off('data', this.#onData);
    this.#input.setRawMode(false);
    this.#input.pause();
  }

  /** The next key (or pasted chunk); `undefined` on Ctrl-C, on `stop`, or when `signal` aborts. */
  nextKey(signal?: AbortSignal): Promise<string | undefined> {
    this.#settle(undefined);
    if (signal?.aborted || !this.#active) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const onAbort = () => this.#settle(undefined);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiter = (key) => {
        signal?.removeEventListener('abort', onAbort);
        resolve(key);
      };
    });
  }

  #settle(key: string | undefined): void {
    const waiter = this.#waiter;
    this.#waiter = undefined;
    waiter?.(key);
  }
}

const answersByKey: Record<string, ApprovalAnswer> = {
  y: 'once',
  a: 'always',
  n: 'deny',
  v: 'never',
};

/** What a call touches, for the question: its permission subjects, else its arguments. */
function describeCall(subjects: readonly string[], args: unknown): string {
  const text = subjects.length > 0 ? subjects.join(', ') : (JSON.stringify(args) ?? '');
  return text.length > 300 ? `${text.slice(0, 299)}…` : text;
}

/**
 * An approver that asks on the terminal — `Allow bash: rm x? [y] once  [a] always  [n] deny
 * [v] never` — and takes one keypress (or the first letter of a line). Ctrl-C or an aborted run
 * denies.
 */
export function terminalApprover(keys: RunKeys, write: (text: string) => void): PermissionApprover {
  return async (request, context) => {
    const why = context.askRule === undefined ? '' : ` (rule ${context.askRule})`;
    write(
      `\nAllow ${request.toolName}: ${describeCall(request.subjects, request.args)}?${why} [y] once  [a] always  [n] deny  [v] never `,
    );
    while (true) {
      const key = await keys.nextKey(context.signal);
      if (key === undefined) {
        write('→ cancelled\n');
        return 'deny';
      }
      const answer = answersByKey[key.trim().charAt(0).toLowerCase()];
      if (answer !== undefined) {
        write(`→ ${answer}\n`);
        return answer;
      }
    }
  };
}
