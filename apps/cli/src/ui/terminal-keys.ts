import { StringDecoder } from 'node:string_decoder';
import {
  type ApprovalAnswer,
  type PermissionApprover,
  type PermissionRequest,
  terminalSafe,
} from '@agent/core';
import { approvalText, maximumApprovalChars } from './approval-text.js';
import { approvalDiff, maxApprovalDiffLines, paintDiff } from './file-diff.js';
import { lookAlikeWarning } from './look-alikes.js';

/** The part of `process.stdin` the key reader needs (a TTY stream). */
export interface KeyInput {
  setRawMode(mode: boolean): unknown;
  resume(): unknown;
  pause(): unknown;
  on(event: 'data', listener: (chunk: Buffer | string) => void): unknown;
  off(event: 'data', listener: (chunk: Buffer | string) => void): unknown;
}

const ctrlC = '\u0003';
/** Bracketed paste: what a terminal sends around pasted text once the program asked for it. */
export const pasteStart = '\u001b[200~';
export const pasteEnd = '\u001b[201~';

/**
 * Keys closer together than this are one burst of typing: a burst that began before a question
 * appeared goes on being text, not the answer (a person reads a question before answering it).
 */
export const typingBurstMs = 300;

/**
 * How long a question is on screen before a key answers it. A key that lands as the question is
 * drawn was meant for something else (the user was about to type, or pressing `y` at another
 * prompt): it answered — `a` granted "always" to a command nobody had read. Keys in this time are
 * dropped; the answer keys are drawn when it ends, so what the user sees is what is live (a
 * browser's security dialog delays its buttons the same way; Claude Code and Codex take the key
 * at once).
 */
export const questionSettleMs = 250;

/**
 * The settle time applies when the user typed within this long before the question appeared:
 * someone at the keyboard may press a key as it is drawn. A question that appears while nobody
 * types takes its key at once (a quick reader, a terminal driven by a script), its keys drawn
 * with it.
 */
export const recentTypingMs = 1000;

/** What a question waiting for a key does when its settle time ends. */
export type OnQuestionReady = (droppedKeys: number) => void;

/** Said with the answer keys when keys pressed as the question appeared were dropped. */
export function droppedKeysNote(dropped: number): string {
  return dropped === 0
    ? ''
    : `(${dropped === 1 ? 'a key' : `${dropped} keys`} pressed as the question appeared did not answer it) `;
}

/** A line typed while a run is going: Enter steers, Alt+Enter queues a follow-up. */
export type OnRunLine = (text: string, kind: 'steer' | 'follow-up') => void;

/**
 * Reads keypresses from a terminal while a run is going: Ctrl-C calls `onInterrupt` (raw mode
 * turns it into a byte instead of SIGINT, so the process survives it); while a {@link nextKey}
 * waits (an approval), the next key answers it; otherwise typed text is collected into a line
 * that Enter hands to `onLine` as a steering message and Alt+Enter as a follow-up (backspace
 * edits; other escape sequences are ignored).
 */
export class RunKeys {
  readonly #input: KeyInput;
  #onInterrupt: () => void = () => {};
  #onLine: OnRunLine | undefined;
  #waiter: ((key: string | undefined) => void) | undefined;
  /** The waiting question reads typed text (a form field): it takes every key, a line being typed or not. */
  #waiterReadsText = false;
  #active = false;
  #line = '';
  /** Inside a bracketed paste: line ends are part of the text, not Enter. */
  #pasting = false;
  readonly #now: () => number;
  /** When the last key typed into the line (not an answer) arrived, and when the question began waiting. */
  #lastTypedAt: number | undefined;
  #waiterSince = 0;
  /** The question's settle time is running: keys that would answer it are dropped, counted. */
  #settleTimer: ReturnType<typeof setTimeout> | undefined;
  #dropped = 0;
  /** The waiting question's answer keys are on screen (its `onReady` ran). */
  #keysDrawn = false;
  /** A character cut between two reads (a long paste comes in pieces) is kept for the next. */
  readonly #decoder = new StringDecoder('utf8');
  readonly #onData = (chunk: Buffer | string) => {
    const text = typeof chunk === 'string' ? chunk : this.#decoder.write(chunk);
    if (text === '') return;
    if (text.includes(ctrlC)) {
      this.#settle(undefined);
      this.#onInterrupt();
      return;
    }
    if (this.#onLine === undefined) {
      if (this.#waiter !== undefined && this.#settleTimer !== undefined) this.#dropped += 1;
      else this.#settle(text);
      return;
    }
    const now = this.#now();
    const typed = this.#lastTypedAt;
    // Typing that began before the question appeared, its line still empty (Enter just sent
    // the last one): the next letters are the start of a message, not a reply to a question
    // the user has not had the time to read ("a" of "also" was "always"). Answers in a row are
    // not typing: only keys that went into the line count.
    // Once a question's answer keys are drawn, a key is its answer (they wait out the burst).
    const burst =
      !this.#keysDrawn &&
      typed !== undefined &&
      typed < this.#waiterSince &&
      now - typed < typingBurstMs;
    // A key answers a question only when no line is being typed: a user halfway through a
    // message when the question appears goes on typing it, and those letters must not answer
    // ("a" of "can you also" was "always"). The line goes on until Enter sends it; a paste is
    // text, never an answer.
    if (
      this.#waiter !== undefined &&
      (this.#waiterReadsText || (!this.typing && !burst && !text.startsWith(pasteStart)))
    ) {
      // Pressed as the question appeared: not its answer, and not the start of a line either.
      if (this.#settleTimer !== undefined) this.#dropped += 1;
      else this.#settle(text);
      return;
    }
    this.#lastTypedAt = now;
    this.#type(text);
  };

  readonly #settleMs: number;

  /**
   * `now` is the clock typing bursts are measured with (milliseconds; tests pass their own);
   * `settleMs` how long a new question drops keys ({@link questionSettleMs}).
   */
  constructor(input: KeyInput, options: { now?: () => number; settleMs?: number } = {}) {
    this.#input = input;
    this.#now = options.now ?? (() => performance.now());
    this.#settleMs = options.settleMs ?? questionSettleMs;
  }

  /** Starts listening (raw mode on); `onInterrupt` runs on each Ctrl-C, `onLine` on each line typed. */
  start(onInterrupt: () => void, onLine?: OnRunLine): void {
    this.#onInterrupt = onInterrupt;
    this.#onLine = onLine;
    this.#line = '';
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

  /** The text typed since the last Enter (not sent), which it forgets: the next prompt starts with it. */
  takeLine(): string {
    const line = this.#line;
    this.#line = '';
    this.#pasting = false;
    return line;
  }

  /** Whether a line is being typed (not sent yet): keys go on into it, a question waits for Enter. */
  get typing(): boolean {
    return this.#line !== '' || this.#pasting;
  }

  /** Whether a question waits for a key (the spinner holds still meanwhile). */
  get waiting(): boolean {
    return this.#waiter !== undefined;
  }

  /**
   * The next key (or pasted chunk); `undefined` on Ctrl-C, on `stop`, or when `signal` aborts. A
   * key typed while a line is being typed goes on into that line instead; with `readsText` (a form
   * field) every key is the answer's.
   */
  nextKey(
    signal?: AbortSignal,
    options: {
      readsText?: boolean;
      /**
       * A new question (not a second key of one already answerable): after typing in the last
       * {@link recentTypingMs}, keys are dropped for {@link questionSettleMs}, then `onReady`
       * draws the answer keys; otherwise `onReady` runs at once.
       */
      onReady?: OnQuestionReady;
    } = {},
  ): Promise<string | undefined> {
    this.#settle(undefined);
    if (signal?.aborted || !this.#active) return Promise.resolve(undefined);
    // Text typed into a form field (a password too) is the field's: never diverted into the line
    // being typed to the agent, which Enter would send to the model.
    this.#waiterReadsText = options.readsText === true;
    this.#waiterSince = this.#now();
    this.#keysDrawn = false;
    const onReady = options.onReady;
    if (onReady !== undefined && !this.#waiterReadsText) {
      this.#dropped = 0;
      const typed = this.#lastTypedAt;
      if (typed !== undefined && this.#waiterSince - typed < recentTypingMs)
        this.#settleTimer = setTimeout(
          () => {
            this.#settleTimer = undefined;
            this.#keysDrawn = true;
            onReady(this.#dropped);
          },
          // Not before the typing burst is over either: a key pressed once the answer keys are
          // drawn must answer, not go on into the line as more of the message.
          Math.max(this.#settleMs, typed + typingBurstMs - this.#waiterSince),
        );
      // Nobody was typing: the keys are live at once (drawn before any key can arrive).
      else {
        this.#keysDrawn = true;
        onReady(0);
      }
    }
    return new Promise((resolve) => {
      const onAbort = () => this.#settle(undefined);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiter = (key) => {
        signal?.removeEventListener('abort', onAbort);
        resolve(key);
      };
    });
  }

  #type(text: string): void {
    for (let i = 0; i < text.length; i++) {
      const char = text[i] as string;
      if (text.startsWith(pasteStart, i) || text.startsWith(pasteEnd, i)) {
        // A pasted block is one message: its line ends stay in it until Enter.
        this.#pasting = text.startsWith(pasteStart, i);
        i += pasteStart.length - 1;
      } else if (this.#pasting && (char === '\r' || char === '\n')) {
        if (!(char === '\n' && text[i - 1] === '\r')) this.#line += '\n';
      } else if (this.#pasting && char === '\t') this.#line += char;
      else if (char === '\u001b') {
        const next = text[i + 1];
        if (next === '\r' || next === '\n') {
          i += 1;
          this.#send('follow-up');
        } else if (next === '[' || next === 'O') {
          // An escape sequence (arrows, function keys): skip to its final byte.
          i += 2;
          while (i < text.length && !/[@-~]/.test(text[i] as string)) i += 1;
        }
      } else if (char === '\r' || char === '\n') this.#send('steer');
      else if (char === '\u007f' || char === '\b') this.#line = this.#line.slice(0, -1);
      else if (char >= ' ') this.#line += char;
    }
  }

  #send(kind: 'steer' | 'follow-up'): void {
    const line = this.#line.trim();
    this.#pasting = false;
    this.#line = '';
    if (line !== '') this.#onLine?.(line, kind);
  }

  #settle(key: string | undefined): void {
    if (this.#settleTimer !== undefined) {
      clearTimeout(this.#settleTimer);
      this.#settleTimer = undefined;
    }
    const waiter = this.#waiter;
    this.#waiter = undefined;
    this.#waiterReadsText = false;
    waiter?.(key);
  }
}

/** Said on the keys line of a question taller than the terminal. */
export const tallNote =
  '(the question is taller than your terminal: it starts above — scroll up and read it whole before answering) ';

/**
 * Whether `text` takes more lines than the terminal shows (long lines wrap): the start of such a
 * question — `rm -rf ~; echo aaaa…` — has scrolled away when its answer keys are drawn.
 */
export function tallerThan(
  terminal: { rows?: number; columns?: number } | undefined,
  text: string,
): boolean {
  const rows = terminal?.rows;
  const columns = terminal?.columns;
  if (rows === undefined || columns === undefined || rows <= 0 || columns <= 0) return false;
  let lines = 0;
  for (const line of text.split('\n')) lines += Math.max(1, Math.ceil([...line].length / columns));
  // The keys line and the line the user typed stay on screen with it.
  return lines > rows - 2;
}

/** Said with a question that appears while a line is being typed: its keys are not the answer. */
export function typingNote(keys: RunKeys): string {
  return keys.typing
    ? '(finish the line you are typing with Enter first: its keys are not an answer) '
    : '';
}

const answersByKey: Record<string, ApprovalAnswer> = {
  y: 'once',
  a: 'always',
  n: 'deny',
  v: 'never',
};

/**
 * Who asks, when it is not the agent the user talks to: a sub-agent's call is its own, and a
 * call a script made (code mode's run_script) was not one the model wrote out — the user should
 * know both before answering (an "always" is a grant of the whole session).
 */
function askedBy(request: Pick<PermissionRequest, 'agentPath' | 'parentToolName'>): string {
  const { agentPath, parentToolName } = request;
  const chain =
    agentPath === undefined || agentPath.length === 0
      ? undefined
      : terminalSafe(agentPath.join(' › '), { singleLine: true });
  const script =
    parentToolName === undefined
      ? undefined
      : `a script (${terminalSafe(parentToolName, { singleLine: true })})`;
  if (chain !== undefined && script !== undefined)
    return `Sub-agent ${chain} asks through ${script}, not directly (an "always" counts for the whole session): `;
  if (chain !== undefined)
    return `Sub-agent ${chain} asks (an "always" counts for the whole session): `;
  if (script !== undefined) return `${capitalised(script)} asks, not the model directly: `;
  return '';
}

function capitalised(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/**
 * An approver that asks on the terminal — `Allow bash: rm x? [y] once  [a] always  [n] deny
 * [v] never` — and takes one keypress (or the first letter of a line). Ctrl-C or an aborted run
 * denies.
 */
export function terminalApprover(
  keys: RunKeys,
  write: (text: string) => void,
  options: {
    cwd?: string;
    colour?: boolean;
    /** The terminal the question is written to (its `rows` and `columns`), when known. */
    terminal?: { rows?: number; columns?: number };
  } = {},
): PermissionApprover {
  return async (request, context) => {
    const why = context.askRule === undefined ? '' : ` (rule ${context.askRule})`;
    // Why no rule or mode could allow it — "runs outside the OS sandbox" above all: asked as
    // `Allow bash: rm -rf build?`, an unsandboxed call read like every sandboxed one.
    const opaque =
      request.opaque === undefined
        ? ''
        : ` (${terminalSafe(request.opaque, { singleLine: true })})`;
    // A file change is shown as the diff it would make, whole, before the question.
    const diff =
      options.cwd === undefined
        ? ({ kind: 'none' } as const)
        : approvalDiff(options.cwd, request.toolName, request.args);
    if (diff.kind === 'too-long') {
      write(
        `\n${askedBy(request)}${request.toolName}: denied without asking — the change is ${diff.lines} diff lines, more than a question shows (${maxApprovalDiffLines}); it can be made in parts\n`,
      );
      return 'deny';
    }
    if (diff.kind === 'shown') write(`\n${paintDiff(diff.text, options.colour ?? false)}`);
    const question = approvalText(request, askedBy(request), `${opaque}${why} `);
    if ('tooLong' in question) {
      write(
        `\n${askedBy(request)}${request.toolName}: denied without asking — the call is ${question.tooLong} characters, more than a question shows (${maximumApprovalChars})\n`,
      );
      return 'deny';
    }
    // A Cyrillic `а` in `rаm`, a Greek `ο` in a host: named above the question's own line.
    const warning = lookAlikeWarning(question.text);
    const questionLine = question.text.lastIndexOf('\n') + 1;
    write(`${question.text.slice(0, questionLine)}${warning}${question.text.slice(questionLine)}`);
    // The answer keys are drawn once the question has been on screen a moment (questionSettleMs).
    const tall = tallerThan(options.terminal, `${warning}${question.text}`) ? tallNote : '';
    const onReady: OnQuestionReady = (dropped) =>
      write(
        `[y] once  [a] always  [n] deny  [v] never ${tall}${droppedKeysNote(dropped)}${typingNote(keys)}`,
      );
    for (let first = true; ; first = false) {
      const key = await keys.nextKey(context.signal, first ? { onReady } : {});
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
