import { constants } from 'node:fs';
import { mkdir, open, rename } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { AgentStopReason } from '../agent-events.js';
import { AgentError, errorMessage } from '../errors.js';
import {
  type RunJournal,
  type RunStep,
  type RunStepValues,
  runStepKey,
  type StepAttempt,
} from '../run-journal.js';
import { stepJson } from './journal-json.js';

// The embedded journal: one append-only JSON Lines file, each line one record — a step that
// started (`s`) or a step's value (`v`) — made durable (fdatasync) before the step's caller moves
// on. Records written in the same tick share one write and one sync (group commit), so the
// calls of a parallel batch pay for one sync to start and one per finishing moment. Chosen over
// node:sqlite (measured in `pnpm bench`): no experimental warning, works on every Node 22, one
// sync per record either way, and the file is readable with `jq` when a run needs explaining.

/** Options of {@link FileRunJournal.open}. */
export interface FileRunJournalOptions {
  /**
   * Sync each write to the disk before the step moves on [true]. `false` survives the process
   * dying (the data is in the OS's cache), not the machine losing power.
   */
  sync?: boolean;
  /**
   * Applied to each value before it is written (e.g. redacting credentials, as session files
   * are): what a later process replays. The live value is what the running process uses.
   */
  transform?: (value: unknown) => unknown;
}

/** What the journal holds of one run. */
export interface JournaledRunSummary {
  runId: string;
  /** Steps with a recorded value. */
  steps: number;
  /** Whether the run's end was recorded. */
  finished: boolean;
  /** How it ended, when it did. */
  stopReason?: AgentStopReason;
}

interface Entry {
  value?: unknown;
  started?: true;
}

interface Pending {
  line: string;
  resolve: () => void;
  reject: (error: unknown) => void;
}

type Handle = Awaited<ReturnType<typeof open>>;

/**
 * The journal's format, in its first line (`{"format":1}`). A journal from a newer version of the
 * format is refused, not read as this one (its records could mean something else); a journal
 * without the line (written before it existed) is format 1.
 */
const journalFormat = 1;
const formatLine = `${JSON.stringify({ format: journalFormat })}\n`;

/**
 * A {@link RunJournal} in one append-only JSON Lines file. Open with `FileRunJournal.open(path)`
 * (the file and its folder are created, mode 0600/0700); one process at a time per file.
 */
export class FileRunJournal implements RunJournal {
  readonly path: string;
  readonly #handle: Handle;
  readonly #runs: Map<string, Map<string, Entry>>;
  readonly #sync: boolean;
  readonly #transform: ((value: unknown) => unknown) | undefined;
  #pending: Pending[] = [];
  #flushing: Promise<void> | undefined;
  #closed = false;
  /** Whether the file holds anything yet (the format line goes before its first record). */
  #started: boolean;

  private constructor(
    path: string,
    handle: Handle,
    runs: Map<string, Map<string, Entry>>,
    options: FileRunJournalOptions & { started: boolean },
  ) {
    this.path = path;
    this.#started = options.started;
    this.#handle = handle;
    this.#runs = runs;
    this.#sync = options.sync ?? true;
    this.#transform = options.transform;
  }

  /**
   * Opens (or creates) the journal at `path` and reads what it holds. A last line cut off by a
   * crash mid-write is dropped; a damaged line elsewhere (or bytes that are not UTF-8) throws an
   * `AgentError` naming the file and line, and so does a journal that is not the user's own: a
   * symbolic link, not a regular file, another user's, or one others may write (see
   * {@link FileRunJournal.openOrSetAside}).
   */
  static async open(path: string, options: FileRunJournalOptions = {}): Promise<FileRunJournal> {
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    const handle = await openOwnFile(path);
    try {
      const bytes = await handle.readFile();
      const complete = bytes.lastIndexOf(0x0a) + 1;
      // Read before anything is cut: a journal refused (damaged, newer) is left as it was.
      const runs = parseRecords(bytes.subarray(0, complete), path);
      // A record is written whole or not at all as far as its step knows: a torn tail was never
      // acknowledged, so it is cut off (at its byte offset) before anything is appended after it.
      if (complete < bytes.length) await handle.truncate(complete);
      return new FileRunJournal(path, handle, runs, { ...options, started: complete > 0 });
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  /**
   * Like {@link FileRunJournal.open}, but a damaged journal is renamed to `<path>.damaged-<time>`
   * and a fresh one opened; `onDamaged` says so. For callers that must go on either way.
   */
  static async openOrSetAside(
    path: string,
    options: FileRunJournalOptions & { onDamaged?: (message: string) => void } = {},
  ): Promise<FileRunJournal> {
    try {
      return await FileRunJournal.open(path, options);
    } catch (error) {
      if (!AgentError.isInstance(error)) throw error;
      const aside = `${path}.damaged-${Date.now()}`;
      await rename(path, aside);
      options.onDamaged?.(`${error.message}; set aside as ${aside}`);
      return FileRunJournal.open(path, options);
    }
  }

  async step<T>(
    step: RunStep,
    run: (attempt: StepAttempt) => Promise<T | undefined>,
  ): Promise<T | undefined> {
    if (this.#closed) throw new AgentError(`The run journal ${this.path} is closed`);
    const steps = this.#stepsOf(step.runId);
    const key = runStepKey(step);
    const entry = steps.get(key);
    if (entry !== undefined && 'value' in entry) return structuredClone(entry.value) as T;
    const interrupted = entry?.started === true;
    // A call's start is durable before the call runs: a crash after it reads as "interrupted".
    if (step.type === 'tool-result' && !interrupted) {
      await this.#append({ r: step.runId, k: key, s: 1 });
      steps.set(key, { started: true });
    }
    const value = await run({ interrupted });
    if (value === undefined) return value;
    let json: string;
    try {
      json = stepJson(step, value, this.#transform);
    } catch (error) {
      throw new AgentError(`The run journal ${this.path} cannot record ${errorMessage(error)}`, {
        cause: error,
      });
    }
    await this.#append({ r: step.runId, k: key }, json);
    // What a later process would read back: the written form, not the live object.
    steps.set(key, { value: JSON.parse(json) });
    return value;
  }

  /** The runs the journal holds, in the order they started. */
  runs(): JournaledRunSummary[] {
    return [...this.#runs].map(([runId, steps]) => {
      let count = 0;
      for (const entry of steps.values()) if ('value' in entry) count++;
      const end = steps.get('run-end')?.value as RunStepValues['run-end'] | undefined;
      const summary: JournaledRunSummary = { runId, steps: count, finished: end !== undefined };
      if (end !== undefined) summary.stopReason = end.stopReason;
      return summary;
    });
  }

  /** Empties the journal (e.g. once its runs are saved elsewhere). Waits for pending writes. */
  async clear(): Promise<void> {
    await this.#flushing;
    await this.#handle.truncate(0);
    if (this.#sync) await this.#handle.datasync();
    this.#runs.clear();
    this.#started = false;
  }

  /** Waits for pending writes and closes the file. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#flushing;
    await this.#handle.close();
  }

  #stepsOf(runId: string): Map<string, Entry> {
    let steps = this.#runs.get(runId);
    if (steps === undefined) {
      steps = new Map();
      this.#runs.set(runId, steps);
    }
    return steps;
  }

  /**
   * Resolves once `record` is on disk (synced, unless `sync: false`); `valueJson` is its `v`,
   * already JSON text (see `stepJson`).
   */
  #append(record: { r: string; k: string; s?: 1 }, valueJson?: string): Promise<void> {
    const head = JSON.stringify(record);
    let line = `${valueJson === undefined ? head : `${head.slice(0, -1)},"v":${valueJson}}`}\n`;
    if (!this.#started) {
      line = formatLine + line;
      this.#started = true;
    }
    return new Promise((resolve, reject) => {
      this.#pending.push({ line, resolve, reject });
      this.#flushing ??= this.#flush();
    });
  }

  async #flush(): Promise<void> {
    // One microtask turn first: records asked for in the same tick (a parallel batch's starts)
    // join this write and share its sync.
    await Promise.resolve();
    while (this.#pending.length > 0) {
      const batch = this.#pending;
      this.#pending = [];
      try {
        await this.#handle.write(batch.map((pending) => pending.line).join(''));
        if (this.#sync) await this.#handle.datasync();
        for (const pending of batch) pending.resolve();
      } catch (error) {
        const failure = new AgentError(
          `The run journal ${this.path} could not be written: ${errorMessage(error)}`,
          { cause: error },
        );
        for (const pending of batch) pending.reject(failure);
      }
    }
    this.#flushing = undefined;
  }
}

/**
 * Opens the journal file for appending, refusing one that is not the user's own: it is read back
 * and believed (finished calls are not run again, answers stand), and it is truncated and emptied
 * where it is. A symbolic link (it could aim the truncation at any file of the user's), something
 * other than a regular file (a FIFO hangs the read), a file another user owns or others may write
 * (its records could be theirs) is an `AgentError`, so `openOrSetAside` moves it out of the way.
 */
async function openOwnFile(path: string): Promise<Handle> {
  const flags =
    constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | (constants.O_NOFOLLOW ?? 0);
  let handle: Handle;
  try {
    handle = await open(path, flags, 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOOP')
      throw new AgentError(
        `The run journal ${path} is a symbolic link, not a journal of yours: not followed`,
      );
    throw error;
  }
  try {
    const stat = await handle.stat();
    const uid = process.getuid?.();
    const refusal = !stat.isFile()
      ? 'is not a regular file'
      : uid !== undefined && stat.uid !== uid
        ? `belongs to uid ${stat.uid}, not to you (uid ${uid})`
        : uid !== undefined && (stat.mode & 0o022) !== 0
          ? `may be written by other users (mode ${(stat.mode & 0o777).toString(8).padStart(4, '0')})`
          : undefined;
    if (refusal !== undefined)
      throw new AgentError(`The run journal ${path} ${refusal}: its records are not believed`);
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The runs of a journal's bytes (whole lines); a damaged line throws an `AgentError` naming it. */
function parseRecords(bytes: Uint8Array, path: string): Map<string, Map<string, Entry>> {
  const runs = new Map<string, Map<string, Entry>>();
  let number = 0;
  for (let start = 0; start < bytes.length; ) {
    const end = bytes.indexOf(0x0a, start);
    const stop = end === -1 ? bytes.length : end;
    number++;
    const raw = bytes.subarray(start, stop);
    start = stop + 1;
    if (raw.length === 0) continue;
    let record: unknown;
    try {
      // A journal is written as JSON, which is UTF-8: other bytes were put there by something
      // else, and decoding them as U+FFFD would replay values nobody recorded.
      record = JSON.parse(utf8.decode(raw));
    } catch (error) {
      throw new AgentError(
        `The run journal ${path} is damaged at line ${number}: ${errorMessage(error)}`,
      );
    }
    if (number === 1 && record !== null && typeof record === 'object' && 'format' in record) {
      const format = (record as { format: unknown }).format;
      if (!Number.isInteger(format) || (format as number) < 1)
        throw new AgentError(`The run journal ${path} is damaged at line 1: no format it could be`);
      if ((format as number) > journalFormat)
        throw new AgentError(
          `The run journal ${path} is in format ${format}, written by a newer version of @agent/core; this version reads format ${journalFormat} only`,
        );
      continue;
    }
    const { r, k, s, v } = (record ?? {}) as { r?: unknown; k?: unknown; s?: unknown; v?: unknown };
    if (typeof r !== 'string' || typeof k !== 'string' || (s === undefined && v === undefined))
      throw new AgentError(
        `The run journal ${path} is damaged at line ${number}: expected {"r": run, "k": step, "s" or "v"}`,
      );
    let steps = runs.get(r);
    if (steps === undefined) {
      steps = new Map();
      runs.set(r, steps);
    }
    // A value wins over a start, whatever the order they were read in.
    if (v !== undefined) steps.set(k, { value: v });
    else if (steps.get(k)?.value === undefined) steps.set(k, { started: true });
  }
  return runs;
}
