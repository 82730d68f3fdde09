// The spinner line of a terminal: what the CLI waits for — the model's answer, running tools —
// each with the time it has taken, redrawn ten times a second on one line that is cleared before
// anything else is written. Used by the transcript, and alone (`waitIndicator`) where stderr is a
// terminal but the transcript is not shown (`-p --output-format json`).
import { type AgentEvent, terminalSafe } from '@agent/core';

const frames = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/** The spinner's key for the wait before the model's answer starts (no tool call id looks so). */
export const modelWait = ' model';

/** Options of a {@link WaitSpinner}. */
export interface WaitSpinnerOptions {
  /** Where the line is drawn (a terminal's stderr or stdout). */
  write: (text: string) => void;
  /** True while the line must not be drawn (an approval is asked). */
  paused: () => boolean;
  /** True when the cursor is at the start of a line (the line is drawn only there) [always]. */
  atLineStart?: () => boolean;
  /**
   * The terminal's width, when known: the line is cut to fit. A line that wrapped was not cleared
   * by the next frame (`\r` goes back to the start of its last row only), so a narrow terminal
   * filled with one spinner line per frame, ten a second.
   */
  columns?: () => number | undefined;
}

/** The running things and the line that shows them; draws nothing until something runs. */
export class WaitSpinner {
  readonly #options: WaitSpinnerOptions;
  /** What runs: id → name and start time. */
  readonly #running = new Map<string, { name: string; started: number }>();
  #timer: ReturnType<typeof setInterval> | undefined;
  #frame = 0;
  #shown = false;

  constructor(options: WaitSpinnerOptions) {
    this.#options = options;
  }

  /** Shows `name` with its elapsed time until `end(id)`. */
  show(id: string, name: string): void {
    this.#running.set(id, { name: terminalSafe(name, { singleLine: true }), started: Date.now() });
    if (this.#timer === undefined) {
      this.#timer = setInterval(() => this.#draw(), 100);
      this.#timer.unref?.();
    }
  }

  /** Names `id` otherwise, keeping its start time (the wait becomes `thinking`). */
  rename(id: string, name: string): void {
    const running = this.#running.get(id);
    if (running !== undefined) this.#running.set(id, { ...running, name });
  }

  /** Stops showing `id`; the line is cleared once nothing runs. */
  end(id: string): void {
    this.#running.delete(id);
    if (this.#running.size === 0 && this.#timer !== undefined) {
      clearInterval(this.#timer);
      this.#timer = undefined;
      this.clear();
    }
  }

  /** Stops showing everything. */
  endAll(): void {
    for (const id of [...this.#running.keys()]) this.end(id);
  }

  /** Clears the line if it is shown (before anything else is written). */
  clear(): void {
    if (!this.#shown) return;
    this.#options.write('\r\u001b[K');
    this.#shown = false;
  }

  #draw(): void {
    if (this.#running.size === 0 || this.#options.paused()) return;
    if (this.#options.atLineStart?.() === false) return;
    const now = Date.now();
    const parts = [...this.#running.values()].map(
      (item) => `${item.name} ${((now - item.started) / 1000).toFixed(1)}s`,
    );
    this.#frame = (this.#frame + 1) % frames.length;
    let line = `  ${frames[this.#frame]} ${parts.join(', ')}`;
    // One column short of the width: a line that fills the last column wraps on some terminals.
    const columns = this.#options.columns?.();
    if (columns !== undefined && columns > 1 && [...line].length >= columns)
      line = [...line].slice(0, columns - 1).join('');
    this.#options.write(`\r\u001b[K${line}`);
    this.#shown = true;
  }
}

/**
 * The wait alone, driven by a run's events: the model's wait until its answer starts (named
 * `thinking` while it thinks), then each running tool. For a terminal's stderr when the transcript
 * is not shown there; it writes nothing else.
 */
export function waitIndicator(options: WaitSpinnerOptions): {
  onEvent: (event: AgentEvent) => void;
} {
  const spinner = new WaitSpinner(options);
  return {
    onEvent: (event) => {
      switch (event.type) {
        case 'turn-start':
          spinner.show(modelWait, 'waiting for the model');
          return;
        case 'message-update':
          if (event.event.type === 'thinking-start') spinner.rename(modelWait, 'thinking');
          else if (event.event.type === 'text-start' || event.event.type === 'tool-call-start')
            spinner.rename(modelWait, 'answering');
          return;
        case 'message-end':
          spinner.end(modelWait);
          return;
        case 'tool-execution-start':
          spinner.show(event.toolCallId, event.toolName);
          return;
        case 'tool-execution-end':
          spinner.end(event.toolCallId);
          return;
        case 'agent-end':
          spinner.endAll();
          return;
        default:
          return;
      }
    },
  };
}
