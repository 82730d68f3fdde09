/**
 * Checkpoints of the files the session's file tools change, for `/rewind`. Before a tool whose
 * policy says it writes paths (`pathAccess` `write` or `read-write`: write_file, edit_file,
 * notebook_edit, an LSP rename…) changes a file, the file's content as it was is kept — once per
 * prompt — in `$AGENT_HOME/checkpoints/<session id>/` (an index and content-addressed copies),
 * tagged with the prompt it belongs to: the last user message of the conversation when the change
 * was made. Rewinding the files to a prompt puts back, for every file changed since, the content
 * it had before the first of those changes (or removes a file that did not exist). Changes made
 * by bash (or any other process) are not tracked — but they are noticed: after each call the store
 * notes what the file holds, and a rewind over a file that no longer holds that (the user's editor,
 * bash, git changed it since) puts nothing back and names it, unless forced.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  lstat,
  mkdir,
  open,
  readFile,
  readlink,
  realpath,
  rename,
  rm,
  writeFile,
} from 'node:fs/promises';
import { basename, dirname, join, relative, sep } from 'node:path';
import {
  type AnyAgentTool,
  errorMessage,
  type Message,
  normalisePermissionSubjects,
} from '@agent/core';
import { readRegularFile } from '@agent/core/regular-file';
import { agentHome } from '../config/agent-home.js';
import { openWorkspaceDirectory } from './workspace-directory.js';

/** Files larger than this are not copied: rewinding reports them instead (bytes). */
const maxCheckpointBytes = 16 * 1024 * 1024;

/** One file as it was before a change. */
interface CheckpointEntry {
  /** The file's real path. */
  path: string;
  /** Index of the conversation's user message the change belongs to. */
  prompt: number;
  /** Whether the file existed (else rewinding removes it). */
  existed: boolean;
  /** sha256 of the content kept (absent when it did not exist or was too large). */
  blob?: string;
  /** Permission bits. */
  mode?: number;
  /** Set when the file was too large to keep. */
  tooLarge?: boolean;
  /**
   * The file did not hold what the file tools last wrote when this was kept: something else had
   * changed it in between (that change is in this copy; a rewind past it would lose it).
   */
  changedBefore?: boolean;
  /** What the file tools had last written to it when this was kept (see {@link fingerprint}). */
  writtenBefore?: string;
  /** Something else changed the file later within this prompt, between two of the tools' changes. */
  changedDuring?: boolean;
  /** Milliseconds since the epoch. */
  timestamp: number;
}

interface CheckpointIndex {
  version: 1;
  entries: CheckpointEntry[];
  /** What each file held after the file tools last changed it (see {@link fingerprint}), by real path. */
  written?: Record<string, string>;
}

/** What rewinding the files did. */
export interface RestoreOutcome {
  /** Files written back to their earlier content. */
  restored: string[];
  /** Files removed (they did not exist at that point). */
  removed: string[];
  /** Files that could not be put back, each with the reason. */
  failed: { path: string; reason: string }[];
  /**
   * Files changed by something other than the file tools since they last wrote them. When there
   * are any (and the rewind was not forced), nothing at all was put back.
   */
  changedOutside: string[];
}

/**
 * What a file holds, to tell whether it changed: the sha256 of its bytes, `absent`, a link's
 * target, or for anything else its kind (and a file too large to read, its size and time).
 */
async function fingerprint(path: string): Promise<string> {
  const outcome = await readRegularFile(path, {
    maxBytes: maxCheckpointBytes,
    followSymlinks: false,
  });
  switch (outcome.kind) {
    case 'read':
      return `sha256:${createHash('sha256').update(outcome.bytes).digest('hex')}`;
    case 'missing':
      return 'absent';
    case 'not-regular':
      return outcome.type === 'symlink'
        ? `link:${await readlink(path).catch(() => '?')}`
        : outcome.type;
    case 'too-large':
      return `large:${outcome.stats.size}:${outcome.stats.mtimeMs}`;
    case 'unreadable':
    case 'refused':
      return 'unreadable';
    default: {
      const _exhaustive: never = outcome;
      return _exhaustive;
    }
  }
}

/** The folder of a session's checkpoints. */
export function checkpointsDir(sessionId: string, home = agentHome()): string {
  // An id given on the command line could hold anything: such a name is hashed.
  const name = /^[A-Za-z0-9_-]{1,100}$/.test(sessionId)
    ? sessionId
    : createHash('sha256').update(sessionId).digest('hex').slice(0, 32);
  return join(home, 'checkpoints', name);
}

/** A session's checkpoints; every method keeps working (in memory only) when the folder cannot be written. */
export class CheckpointStore {
  readonly #dir: string;
  readonly #workspace: string;
  #entries: CheckpointEntry[];
  /** What each file held after the file tools last changed it (real path → {@link fingerprint}). */
  readonly #written: Map<string, string>;
  /** Writes happen one after another (parallel edits of two files both keep theirs). */
  #queue: Promise<void> = Promise.resolve();
  #warned = false;
  readonly #log: (line: string) => void;

  private constructor(options: {
    dir: string;
    workspace: string;
    entries: CheckpointEntry[];
    written: Map<string, string>;
    log: (line: string) => void;
  }) {
    this.#dir = options.dir;
    this.#workspace = options.workspace;
    this.#entries = options.entries;
    this.#written = options.written;
    this.#log = options.log;
  }

  /** Opens (or starts) the checkpoints in `dir` for a workspace (its real path is the boundary of every restore). */
  static async open(options: {
    dir: string;
    workspace: string;
    log: (line: string) => void;
  }): Promise<CheckpointStore> {
    const workspace = await realpath(options.workspace).catch(() => options.workspace);
    let entries: CheckpointEntry[] = [];
    let written = new Map<string, string>();
    try {
      const index = JSON.parse(await readFile(join(options.dir, 'index.json'), 'utf8')) as unknown;
      entries = parseIndex(index);
      written = parseWritten(index);
    } catch (error) {
      if ((error as { code?: string }).code !== 'ENOENT')
        options.log(
          `warning: the checkpoints in ${options.dir} are unreadable (${errorMessage(error)}); /rewind starts afresh`,
        );
    }
    return new CheckpointStore({ dir: options.dir, workspace, entries, written, log: options.log });
  }

  /** Every checkpoint, oldest first (a copy). */
  get entries(): readonly CheckpointEntry[] {
    return [...this.#entries];
  }

  /** The files changed at or after the user message `prompt` (real paths, in order of first change). */
  filesChangedSince(prompt: number): string[] {
    return [...new Set(this.#entries.filter((entry) => entry.prompt >= prompt).map((e) => e.path))];
  }

  /**
   * Keeps the content of `paths` before a change made for the user message `prompt`: a file already
   * kept for that prompt (or a later one) is not kept again — its first state is what counts.
   */
  keep(paths: readonly string[], prompt: number): Promise<void> {
    const next = this.#queue.then(async () => {
      for (const path of paths) await this.#keepOne(path, prompt);
      await this.#writeIndex();
    });
    this.#queue = next.catch(() => undefined);
    return next;
  }

  /**
   * Notes what `paths` hold now, after a file tool's call changed them (or tried to): a rewind
   * then tells the tools' own changes from later ones made by anything else.
   */
  recordWritten(paths: readonly string[]): Promise<void> {
    const next = this.#queue.then(async () => {
      for (const path of paths)
        if (this.#entries.some((entry) => entry.path === path))
          this.#written.set(path, await fingerprint(path));
      await this.#writeIndex();
    });
    this.#queue = next.catch(() => undefined);
    return next;
  }

  async #keepOne(path: string, prompt: number): Promise<void> {
    // Only the workspace's files: a rewind never writes elsewhere, and a copy of a file outside
    // (a path through a link a command made) is not the CLI's to take.
    if (!isInside(this.#workspace, path)) return;
    const written = this.#written.get(path);
    const changed = written !== undefined && written !== (await fingerprint(path));
    const kept = this.#entries.find((entry) => entry.path === path && entry.prompt >= prompt);
    if (kept !== undefined) {
      if (changed) kept.changedDuring = true;
      return;
    }
    const entry: CheckpointEntry = {
      path,
      prompt,
      existed: false,
      timestamp: Date.now(),
      ...(written === undefined ? {} : { writtenBefore: written }),
      ...(changed ? { changedBefore: true } : {}),
    };
    const outcome = await readRegularFile(path, {
      maxBytes: maxCheckpointBytes,
      // The last component not followed (a link is not a file a rewind puts back), a FIFO not
      // waited on; nor a file that a link in its path now places outside the workspace.
      followSymlinks: false,
      realPath: true,
      check: ({ realPath }) =>
        realPath === undefined || isInside(this.#workspace, realPath) ? undefined : 'outside',
    });
    switch (outcome.kind) {
      case 'missing':
        if (outcome.code !== 'ENOENT') throw outcome.error;
        break;
      case 'unreadable':
        throw outcome.error;
      case 'not-regular':
      case 'refused':
        return;
      case 'too-large':
        entry.existed = true;
        entry.mode = outcome.stats.mode & 0o7777;
        entry.tooLarge = true;
        break;
      case 'read': {
        entry.existed = true;
        entry.mode = outcome.stats.mode & 0o7777;
        const blob = createHash('sha256').update(outcome.bytes).digest('hex');
        await this.#writeBlob(blob, outcome.bytes);
        entry.blob = blob;
        break;
      }
      default: {
        const _exhaustive: never = outcome;
        return _exhaustive;
      }
    }
    this.#entries.push(entry);
  }

  async #writeBlob(blob: string, content: Buffer): Promise<void> {
    const path = join(this.#dir, 'blobs', blob);
    try {
      await lstat(path);
      return;
    } catch {
      // Not there yet.
    }
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    // Whole or not at all: a blob cut short by a crash would be taken as kept next time (it is
    // there), and /rewind would put the cut copy back.
    await writeWhole(path, content);
  }

  async #writeIndex(): Promise<void> {
    const index: CheckpointIndex = {
      version: 1,
      entries: this.#entries,
      written: Object.fromEntries(this.#written),
    };
    const path = join(this.#dir, 'index.json');
    try {
      await mkdir(this.#dir, { recursive: true, mode: 0o700 });
      await writeWhole(path, JSON.stringify(index));
    } catch (error) {
      if (!this.#warned) {
        this.#warned = true;
        this.#log(`warning: checkpoints cannot be saved (${errorMessage(error)})`);
      }
    }
  }

  /**
   * Puts every file changed at or after the user message `prompt` back as it was before its first
   * such change, and forgets those checkpoints (the files are now as they were then). Only paths
   * inside the workspace are written; a file the store could not keep is reported, not touched.
   * When a file was changed outside the file tools since they last wrote it, nothing is put back
   * (it is listed in `changedOutside`) unless `force`.
   */
  restoreTo(prompt: number, options: { force?: boolean } = {}): Promise<RestoreOutcome> {
    const next = this.#queue.then(() => this.#restore(prompt, options.force === true));
    this.#queue = next.then(
      () => undefined,
      () => undefined,
    );
    return next;
  }

  async #restore(prompt: number, force: boolean): Promise<RestoreOutcome> {
    const outcome: RestoreOutcome = { restored: [], removed: [], failed: [], changedOutside: [] };
    const first = new Map<string, CheckpointEntry>();
    for (const entry of this.#entries)
      if (entry.prompt >= prompt && !first.has(entry.path)) first.set(entry.path, entry);
    if (!force) {
      // Checked for every file before any is written: a rewind is all or nothing.
      for (const [path, restoredTo] of first) {
        const written = this.#written.get(path);
        // A change from outside after the state put back: now, or between two of the tools' changes.
        const between = this.#entries.some(
          (entry) =>
            entry.path === path &&
            entry.prompt >= prompt &&
            (entry.changedDuring === true ||
              (entry !== restoredTo && entry.changedBefore === true)),
        );
        if (between || (written !== undefined && written !== (await fingerprint(path))))
          outcome.changedOutside.push(path);
      }
      if (outcome.changedOutside.length > 0) return outcome;
    }
    for (const entry of first.values()) {
      try {
        const reason = await this.#restoreOne(entry);
        if (reason !== undefined) outcome.failed.push({ path: entry.path, reason });
        else {
          (entry.existed ? outcome.restored : outcome.removed).push(entry.path);
          // The tools' state of the file is again what it was when this copy was taken: a change
          // from outside that the copy holds still shows as one to a rewind further back.
          this.#written.set(entry.path, entry.writtenBefore ?? (await fingerprint(entry.path)));
          // Saved file by file: a rewind cut short (killed, the machine down) left the files it
          // had put back looking changed from outside, so running it again refused them all.
          // Now the files done are no longer in it, and running it again finishes the rest.
          this.#entries = this.#entries.filter(
            (kept) => kept.path !== entry.path || kept.prompt < prompt,
          );
          await this.#writeIndex();
        }
      } catch (error) {
        outcome.failed.push({ path: entry.path, reason: errorMessage(error) });
      }
    }
    this.#entries = this.#entries.filter((entry) => entry.prompt < prompt);
    for (const path of this.#written.keys())
      if (!this.#entries.some((entry) => entry.path === path)) this.#written.delete(path);
    await this.#writeIndex();
    await this.#dropUnusedBlobs();
    return outcome;
  }

  /**
   * Puts one file back; returns why it could not, or undefined. The CLI writes here outside the
   * sandbox while sandboxed commands may still be changing the workspace, so the folder is
   * opened one component at a time without following links (workspace-directory.ts) and every
   * write goes through that open folder: a link a command put where a folder was is refused,
   * whether it was there before the rewind or swapped in during it.
   */
  async #restoreOne(entry: CheckpointEntry): Promise<string | undefined> {
    // The index is a file on disk: never let it direct a write outside the workspace.
    if (!isInside(this.#workspace, entry.path)) return `outside the workspace ${this.#workspace}`;
    if (entry.tooLarge === true) return 'it was too large to keep a copy';
    let content: Buffer | undefined;
    if (entry.existed) {
      if (entry.blob === undefined || !/^[0-9a-f]{64}$/.test(entry.blob)) return 'no copy was kept';
      content = await readFile(join(this.#dir, 'blobs', entry.blob));
    }
    const parts = relative(this.#workspace, dirname(entry.path)).split(sep).filter(Boolean);
    const folder = await openWorkspaceDirectory(this.#workspace, parts, {
      create: content !== undefined,
    });
    // A folder that is gone holds no file to remove.
    if (typeof folder === 'string')
      return content === undefined && / no longer exists$/.test(folder)
        ? undefined
        : `outside the workspace ${this.#workspace}: ${folder}`;
    try {
      const name = basename(entry.path);
      if (content === undefined) {
        await rm(folder.at(name), { force: true });
        return undefined;
      }
      const current = await lstat(folder.at(name)).catch(() => undefined);
      // Replaced, not written through: a symbolic link put where the file was is not followed.
      if (current !== undefined && !current.isFile() && !current.isSymbolicLink())
        return 'a directory is there now';
      const temporary = folder.at(`${name}.rewind-${process.pid}`);
      // Mode set on the open file (a path could be a link by then), before it takes the name.
      const written = await open(temporary, 'wx', entry.mode ?? 0o644);
      try {
        await written.writeFile(content);
        if (entry.mode !== undefined) await written.chmod(entry.mode);
      } finally {
        await written.close();
      }
      await rename(temporary, folder.at(name));
      return undefined;
    } finally {
      await folder.close();
    }
  }

  async #dropUnusedBlobs(): Promise<void> {
    const used = new Set(this.#entries.map((entry) => entry.blob));
    const { readdir } = await import('node:fs/promises');
    const names = await readdir(join(this.#dir, 'blobs')).catch(() => [] as string[]);
    for (const name of names)
      if (!used.has(name)) await rm(join(this.#dir, 'blobs', name), { force: true });
  }

  /**
   * The conversation was cut before the user message `prompt`: changes made for later prompts
   * stay on disk, so they now belong to that point (a later rewind to it puts them back too).
   */
  conversationCut(prompt: number): Promise<void> {
    for (const entry of this.#entries) if (entry.prompt > prompt) entry.prompt = prompt;
    const next = this.#queue.then(() => this.#writeIndex());
    this.#queue = next;
    return next;
  }

  /** Forgets every checkpoint (`/clear`: no earlier prompt to go back to). */
  clear(): Promise<void> {
    const next = this.#queue.then(async () => {
      this.#entries = [];
      this.#written.clear();
      await rm(this.#dir, { recursive: true, force: true }).catch(() => undefined);
    });
    this.#queue = next.catch(() => undefined);
    return next;
  }
}

/**
 * Removes the checkpoints of sessions not written for `keepDays` days (their index's age), as
 * session files are: a rewind can only go back within a session that is still kept. Best effort.
 */
export async function pruneCheckpoints(
  keepDays: number,
  options: { home?: string; now?: Date } = {},
): Promise<number> {
  const root = join(options.home ?? agentHome(), 'checkpoints');
  const oldest = (options.now ?? new Date()).getTime() - keepDays * 24 * 60 * 60 * 1000;
  const { readdir, stat } = await import('node:fs/promises');
  let removed = 0;
  for (const name of await readdir(root).catch(() => [] as string[])) {
    const folder = join(root, name);
    const written = await stat(join(folder, 'index.json')).catch(() =>
      stat(folder).catch(() => undefined),
    );
    if (written === undefined || written.mtime.getTime() >= oldest) continue;
    await rm(folder, { recursive: true, force: true }).then(
      () => {
        removed += 1;
      },
      () => undefined,
    );
  }
  return removed;
}

function isInside(root: string, path: string): boolean {
  const rest = relative(root, path);
  return rest !== '' && !rest.startsWith(`..${sep}`) && rest !== '..' && !rest.startsWith(sep);
}

function parseIndex(data: unknown): CheckpointEntry[] {
  if (data === null || typeof data !== 'object' || (data as { version?: unknown }).version !== 1)
    throw new Error('not a version 1 checkpoint index');
  const entries = (data as { entries?: unknown }).entries;
  if (!Array.isArray(entries)) throw new Error('"entries" is not a list');
  return entries.map((entry, index) => {
    const { path, prompt, existed } = (entry ?? {}) as Record<string, unknown>;
    if (typeof path !== 'string' || typeof prompt !== 'number' || typeof existed !== 'boolean')
      throw new Error(`entry ${index} is not { path, prompt, existed }`);
    return entry as CheckpointEntry;
  });
}

function parseWritten(data: unknown): Map<string, string> {
  const written = (data as { written?: unknown }).written;
  const map = new Map<string, string>();
  // An index of an older version has none: its files are put back unchecked, as before.
  if (written === null || typeof written !== 'object') return map;
  for (const [path, state] of Object.entries(written))
    if (typeof state === 'string') map.set(path, state);
  return map;
}

/** Index of the last user message of a conversation (the prompt a change belongs to), or 0. */
export function currentPrompt(messages: readonly Message[]): number {
  for (let index = messages.length - 1; index >= 0; index--)
    if (messages[index]?.role === 'user') return index;
  return 0;
}

/**
 * The session's file tools, each keeping a checkpoint of the files its call will change before it
 * runs (after validation and the permission gate: only calls that run). Other tools are returned
 * as they are. `store` and `messages` are read at call time (`/clear` and `/rewind` replace them).
 */
export function withCheckpoints(
  tools: readonly AnyAgentTool[],
  current: () => { store: CheckpointStore; messages: readonly Message[] },
): AnyAgentTool[] {
  return tools.map((tool) => {
    const access = tool.policy?.pathAccess;
    const subjectsOf = tool.permissionSubjects;
    if ((access !== 'write' && access !== 'read-write') || subjectsOf === undefined) return tool;
    const execute: AnyAgentTool['execute'] = async (args, ctx) => {
      let paths: readonly string[] = [];
      try {
        paths = normalisePermissionSubjects(await subjectsOf(args)).subjects;
      } catch {
        // The call will fail the same way in execute; nothing to keep.
      }
      const { store, messages } = current();
      if (paths.length === 0) return tool.execute(args, ctx);
      try {
        await store.keep(paths, currentPrompt(messages));
      } catch (error) {
        // A checkpoint that cannot be taken must not stop the edit; /rewind then cannot undo it.
        ctx.onProgress(`checkpoint not kept: ${errorMessage(error)}`);
      }
      try {
        return await tool.execute(args, ctx);
      } finally {
        // Whatever the call did (or failed to), the file as it is now is the tools' doing.
        await store.recordWritten(paths).catch(() => undefined);
      }
    };
    return { ...tool, execute };
  });
}

/**
 * Writes a file through a temporary of its own (this process, a random suffix) renamed over it:
 * readers see the old content or the new, never part of it, and two writers never share a
 * temporary.
 */
async function writeWhole(path: string, content: string | Buffer): Promise<void> {
  const temporary = `${path}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(temporary, content, { mode: 0o600 });
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}
