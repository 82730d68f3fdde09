/**
 * The REPL's terminal input, owned for the whole session so that nothing typed is lost: one
 * readline editor reads every byte that arrives while no run is going (at the prompt, and while
 * the session starts or between runs), each line it completes is queued and taken in order; while
 * a run goes, the bytes go to the key reader instead (steering, approvals, Ctrl-C). A bracketed
 * paste is one piece of text: several lines pasted become one prompt, shown in the line being
 * edited as `[pasted text #1: 3 lines]` and sent whole with Enter.
 */
import { createInterface, type Interface } from 'node:readline';
import { PassThrough, Writable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { type KeyInput, pasteEnd, pasteStart } from '../ui/terminal-keys.js';

/** What the prompt gave: a line (typed ahead: entered while no prompt was shown), Ctrl-C, or the end. */
export type PromptOutcome =
  | { type: 'line'; text: string; typedAhead: boolean }
  | { type: 'interrupt' }
  | { type: 'eof' };

/** The terminal's input stream (a TTY). */
export interface PromptTerminal {
  setRawMode(mode: boolean): unknown;
  resume(): unknown;
  pause(): unknown;
  on(event: 'data', listener: (chunk: Buffer | string) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
  off(event: 'data', listener: (chunk: Buffer | string) => void): unknown;
  off(event: 'end', listener: () => void): unknown;
}

const bracketedPasteOn = '\u001b[?2004h';
const bracketedPasteOff = '\u001b[?2004l';
const placeholderPattern = /\[pasted text #(\d+): \d+ lines?\]/g;

/** How many characters at the end of `text` could begin `marker` (to wait for the rest). */
function partialMarker(text: string, marker: string): number {
  for (let length = Math.min(marker.length - 1, text.length); length > 0; length--)
    if (marker.startsWith(text.slice(text.length - length))) return length;
  return 0;
}

/** The session's prompt and the key reader's input, over one terminal. */
export class PromptInput {
  readonly #terminal: PromptTerminal;
  readonly #output: NodeJS.WriteStream;
  /** What the editor reads: the terminal's bytes while no run goes, pastes made placeholders. */
  readonly #editorInput = new PassThrough();
  /** What the editor writes: the screen while the prompt is shown, nothing otherwise. */
  readonly #editorOutput: Writable;
  #editor: Interface | undefined;
  readonly #outcomes: PromptOutcome[] = [];
  #waiter: ((outcome: PromptOutcome) => void) | undefined;
  /** Whether the prompt is on the screen (what is typed is echoed, and a line is not typed ahead). */
  #prompting = false;
  #keyListener: ((chunk: Buffer | string) => void) | undefined;
  #started = false;
  #closed = false;
  /** A paste in progress (its text so far), and the start of a marker cut by a chunk's end. */
  #paste: string | undefined;
  #pending = '';
  readonly #pastes = new Map<number, string>();

  /** The key reader's view of the terminal: while it listens, the bytes are its own. */
  readonly keys: KeyInput = {
    setRawMode: () => undefined,
    resume: () => undefined,
    pause: () => undefined,
    on: (_event, listener) => {
      this.#keyListener = listener;
    },
    off: (_event, listener) => {
      if (this.#keyListener === listener) this.#keyListener = undefined;
    },
  };

  /** A character cut between two reads (a long paste comes in pieces) is kept for the next. */
  readonly #decoder = new StringDecoder('utf8');
  readonly #onData = (chunk: Buffer | string) => {
    const text = typeof chunk === 'string' ? chunk : this.#decoder.write(chunk);
    if (text === '') return;
    if (this.#keyListener !== undefined && this.#paste === undefined && this.#pending === '')
      this.#keyListener(text);
    else this.#toEditor(text);
  };
  readonly #onEnd = () => this.#editorInput.end();
  readonly #onResize = () => {
    if (this.#prompting) this.#editorOutput.emit('resize');
  };
  readonly #restoreTerminal = () => {
    if (process.env.TERM !== 'dumb') this.#output.write(bracketedPasteOff);
  };

  constructor(terminal: PromptTerminal, output: NodeJS.WriteStream) {
    this.#terminal = terminal;
    this.#output = output;
    this.#editorOutput = new Writable({
      write: (chunk: Buffer | string, _encoding, done) => {
        if (this.#prompting) output.write(chunk);
        done();
      },
    });
    Object.defineProperties(this.#editorOutput, {
      columns: { get: () => output.columns },
      rows: { get: () => output.rows },
      isTTY: { value: true },
    });
  }

  /** Takes the terminal over (raw mode, bracketed paste on): from now on every byte is kept. */
  start(): void {
    if (this.#started) return;
    this.#started = true;
    const editor = createInterface({
      input: this.#editorInput,
      output: this.#editorOutput,
      terminal: true,
      historySize: 500,
    });
    this.#editor = editor;
    editor.on('line', (line) => {
      const typedAhead = !this.#prompting;
      this.#prompting = false;
      this.#push({ type: 'line', text: this.#expandPastes(line), typedAhead });
    });
    editor.on('SIGINT', () => {
      if (this.#prompting) this.#output.write('^C\n');
      this.#prompting = false;
      // The line typed so far goes, as it did when Ctrl-C closed the prompt (nothing is shown).
      editor.write(null as unknown as string, { ctrl: true, name: 'e' });
      editor.write(null as unknown as string, { ctrl: true, name: 'u' });
      this.#push({ type: 'interrupt' });
    });
    // Ctrl-Z at the prompt: readline would turn raw mode off and on around the stop on its own
    // input — here a PassThrough, not the terminal — so after `fg` the terminal stayed in cooked
    // mode and the REPL never saw another key. The terminal is handed back and taken again here.
    editor.on('SIGTSTP', () => {
      this.#restoreTerminal();
      this.#terminal.setRawMode(false);
      process.once('SIGCONT', () => {
        if (this.#closed) return;
        this.#terminal.setRawMode(true);
        if (process.env.TERM !== 'dumb') this.#output.write(bracketedPasteOn);
        if (this.#prompting) editor.prompt(true);
      });
      process.kill(process.pid, 'SIGTSTP');
    });
    editor.on('close', () => {
      if (this.#prompting) this.#output.write('\n');
      this.#prompting = false;
      this.#push({ type: 'eof' });
    });
    this.#terminal.setRawMode(true);
    // A dumb terminal shows the sequence instead of obeying it (and sends no paste brackets).
    if (process.env.TERM !== 'dumb') this.#output.write(bracketedPasteOn);
    process.once('exit', this.#restoreTerminal);
    this.#output.on('resize', this.#onResize);
    this.#terminal.on('data', this.#onData);
    this.#terminal.on('end', this.#onEnd);
    this.#terminal.resume();
  }

  /** The next line (or Ctrl-C, or the end): one entered already, else the prompt is shown for it. */
  next(prompt = '> '): Promise<PromptOutcome> {
    const queued = this.#outcomes.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    const editor = this.#editor;
    if (editor === undefined || this.#closed) return Promise.resolve({ type: 'eof' });
    return new Promise((resolve) => {
      this.#waiter = resolve;
      this.#prompting = true;
      editor.setPrompt(prompt);
      // What was typed while no prompt showed is shown now, after the prompt, ready to edit.
      (editor as unknown as { prevRows: number }).prevRows = 0;
      editor.prompt(true);
    });
  }

  /** Puts text into the line being edited, as if typed (what was typed during a run, unsent). */
  insert(text: string): void {
    if (text !== '') this.#toEditor(text.includes('\n') ? this.#pasteBlock(text) : text);
  }

  /** Gives the terminal back: bracketed paste and raw mode off, input paused. */
  close(): void {
    if (!this.#started || this.#closed) return;
    this.#closed = true;
    this.#prompting = false;
    this.#terminal.off('data', this.#onData);
    this.#terminal.off('end', this.#onEnd);
    this.#output.off('resize', this.#onResize);
    this.#editor?.close();
    this.#restoreTerminal();
    process.off('exit', this.#restoreTerminal);
    this.#terminal.setRawMode(false);
    this.#terminal.pause();
  }

  #push(outcome: PromptOutcome): void {
    const waiter = this.#waiter;
    this.#waiter = undefined;
    if (waiter === undefined) this.#outcomes.push(outcome);
    else waiter(outcome);
  }

  /** Hands bytes to the editor; a bracketed paste becomes a placeholder for its text. */
  #toEditor(chunk: string): void {
    let text = this.#pending + chunk;
    this.#pending = '';
    while (text !== '') {
      if (this.#paste !== undefined) {
        const end = text.indexOf(pasteEnd);
        if (end < 0) {
          const cut = partialMarker(text, pasteEnd);
          this.#paste += text.slice(0, text.length - cut);
          this.#pending = text.slice(text.length - cut);
          return;
        }
        const pasted = this.#paste + text.slice(0, end);
        this.#paste = undefined;
        text = text.slice(end + pasteEnd.length);
        this.#editorInput.write(this.#pasteBlock(pasted));
        continue;
      }
      const start = text.indexOf(pasteStart);
      if (start < 0) {
        const cut = partialMarker(text, pasteStart);
        this.#editorInput.write(text.slice(0, text.length - cut));
        this.#pending = text.slice(text.length - cut);
        return;
      }
      this.#editorInput.write(text.slice(0, start));
      this.#paste = '';
      text = text.slice(start + pasteStart.length);
    }
  }

  /** What the editor gets for a paste: its text when it is one plain line, else a placeholder. */
  #pasteBlock(pasted: string): string {
    const text = pasted.replace(/\r\n?/g, '\n').replace(/\n$/, '');
    if (!hasControlCharacter(text)) return text;
    const number = this.#pastes.size + 1;
    this.#pastes.set(number, text);
    const lines = text.split('\n').length;
    return `[pasted text #${number}: ${lines} line${lines === 1 ? '' : 's'}]`;
  }

  #expandPastes(line: string): string {
    return line.replace(placeholderPattern, (placeholder, number: string) => {
      return this.#pastes.get(Number(number)) ?? placeholder;
    });
  }
}

/** Whether `text` holds a newline, a tab or another control character (C0 or DEL). */
function hasControlCharacter(text: string): boolean {
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}
