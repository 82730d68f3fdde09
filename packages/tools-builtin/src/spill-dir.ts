import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { abandonedDirectories, defaultSecretPaths, type SandboxOptions } from '@agent/sandbox';
import type { SpillBudget } from './output-buffer.js';

/** The system's temporary directory by real path (the sandbox binds real paths). */
function realTmpdir(): string {
  const tmp = os.tmpdir();
  try {
    return fs.realpathSync(tmp);
  } catch {
    return path.resolve(tmp);
  }
}

/**
 * The per-user directory that holds each session's spill directory: `agent-tools-builtin-<uid>`
 * (without uids, `agent-tools-builtin`) in the system's temporary directory, by real path.
 */
export function defaultSpillDir(): string {
  const uid = process.getuid?.();
  return path.join(
    realTmpdir(),
    uid === undefined ? 'agent-tools-builtin' : `agent-tools-builtin-${uid}`,
  );
}

/**
 * Why `dir`, in a temporary directory other users can write to, is not safe to save output in:
 * a symbolic link or a directory of another user (both can be planted in advance). Undefined
 * when it is ours; its mode is then narrowed to 0700 if it was wider.
 */
export function sharedDirProblem(dir: string): string | undefined {
  const stat = fs.lstatSync(dir);
  if (stat.isSymbolicLink()) return `${dir} is a symbolic link`;
  if (!stat.isDirectory()) return `${dir} is not a directory`;
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid) {
    return `${dir} belongs to another user (uid ${stat.uid})`;
  }
  if ((stat.mode & 0o077) !== 0) fs.chmodSync(dir, 0o700);
  return undefined;
}

/**
 * Creates the spill directory (0700) when missing. The per-user one, in the shared temporary
 * directory, must also pass {@link sharedDirProblem}; a directory the caller chose is trusted.
 */
export function prepareSpillDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (path.resolve(dir) !== defaultSpillDir()) return;
  const problem = sharedDirProblem(dir);
  if (problem !== undefined) {
    throw new Error(`refusing to save output there: ${problem} (set spillDir)`);
  }
}

/** A session's directory is named `<pid>-<random hex>` after the process that made it. */
const sessionDirectoryName = /^(\d+)-[0-9a-f]{8,}$/;

/** Session directories made by this process and not yet removed: removed when it exits. */
const liveDirectories = new Set<SpillDirectory>();
let exitHandlerInstalled = false;
let swept = false;

function removeLiveDirectories(): void {
  for (const directory of liveDirectories) directory.remove();
}

/**
 * Removes the session spill directories in `root` (the per-user directory) left by processes
 * that no longer run — killed by a signal, so their exit handler never ran. Only directories
 * named for a dead pid, owned by this user and not links; their contents are removed without
 * following links. Best effort, never throws; returns the directories removed. A process of
 * another pid namespace sharing the temporary directory looks dead from here.
 */
export async function sweepAbandonedSpillDirectories(
  root: string = defaultSpillDir(),
): Promise<string[]> {
  const removed: string[] = [];
  try {
    if (sharedDirProblem(root) !== undefined) return removed;
    const found = await abandonedDirectories(root, (entry) => {
      const pid = sessionDirectoryName.exec(entry)?.[1];
      return pid === undefined ? undefined : Number(pid);
    });
    for (const dir of found) {
      try {
        // rm never follows a link inside: it removes the link itself.
        await fs.promises.rm(dir, { recursive: true, force: true });
        removed.push(dir);
      } catch {
        // Gone meanwhile, or not ours to remove.
      }
    }
  } catch {
    // No per-user directory yet, or unreadable: nothing to sweep.
  }
  return removed;
}

/** Options of a {@link SpillDirectory}. */
export interface SpillDirectoryOptions {
  /**
   * A directory of the caller's to save output in instead: trusted as it is (created when
   * missing), shared by whoever uses it, and kept when the session ends.
   */
  path?: string;
  /**
   * Bytes the session's spill files may hold together [{@link defaultMaxSessionSpillBytes}]:
   * each stream's file is capped too (`maxSpillBytes`), but many background commands writing
   * for ever would otherwise fill the disk (or, where the temporary directory is a tmpfs, the
   * memory) between them.
   */
  maxBytes?: number;
}

/** Default {@link SpillDirectoryOptions.maxBytes}: 4 GiB. */
export const defaultMaxSessionSpillBytes = 4 * 1024 * 1024 * 1024;

/** A {@link SpillBudget} of `limit` bytes. */
function spillBudget(limit: number): SpillBudget {
  let remaining = Math.max(0, limit);
  return {
    limit,
    get remaining() {
      return remaining;
    },
    take(bytes) {
      const granted = Math.max(0, Math.min(bytes, remaining));
      remaining -= granted;
      return granted;
    },
  };
}

/**
 * Where one session's bash saves output too large to return. By default a private directory
 * per session, `<tmpdir>/agent-tools-builtin-<uid>/<pid>-<random>`: made (0700, inside the
 * per-user 0700 directory; a link or another user's directory is refused) at the first spill,
 * removed by {@link remove} (the session's end) and when the process exits; one left by a
 * process killed by a signal is swept by the next process that spills. Other sessions' files are
 * out of reach: the file tools refuse {@link sharedRoot} except {@link path}, and the sandbox
 * binds only {@link path} ({@link sandboxOptions}).
 */
export class SpillDirectory {
  /** Where spill files go (absolute, real when the temporary directory exists). */
  readonly path: string;
  /** The per-user directory every session's directory lies in; undefined for a caller's own. */
  readonly sharedRoot: string | undefined;
  /** What the session's spill files may still write, together (see {@link SpillDirectoryOptions.maxBytes}). */
  readonly budget: SpillBudget;
  #state: 'new' | 'made' | 'removed' = 'new';

  constructor(options: SpillDirectoryOptions = {}) {
    this.budget = spillBudget(options.maxBytes ?? defaultMaxSessionSpillBytes);
    if (options.path !== undefined) {
      this.path = path.resolve(options.path);
      this.sharedRoot = undefined;
      return;
    }
    this.sharedRoot = defaultSpillDir();
    this.path = path.join(this.sharedRoot, `${process.pid}-${randomBytes(8).toString('hex')}`);
  }

  /** True once {@link remove} was called: no more files are saved. */
  get removed(): boolean {
    return this.#state === 'removed';
  }

  /**
   * Makes the directory if needed and returns its path; throws an Error saying why output cannot
   * be saved there (the session ended, a planted link, another user's directory…).
   */
  ensure(): string {
    if (this.#state === 'removed')
      throw new Error('the session has ended (its spill directory was removed)');
    if (this.#state === 'made') return this.path;
    if (this.sharedRoot === undefined) {
      fs.mkdirSync(this.path, { recursive: true, mode: 0o700 });
      this.#state = 'made';
      return this.path;
    }
    prepareSpillDir(this.sharedRoot);
    try {
      fs.mkdirSync(this.path, { mode: 0o700 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const problem = sharedDirProblem(this.path);
    if (problem !== undefined) throw new Error(`refusing to save output there: ${problem}`);
    this.#state = 'made';
    liveDirectories.add(this);
    if (!exitHandlerInstalled) {
      exitHandlerInstalled = true;
      process.once('exit', removeLiveDirectories);
    }
    // A process killed by a signal runs no exit handler: the first of its successors cleans up.
    if (!swept) {
      swept = true;
      void sweepAbandonedSpillDirectories(this.sharedRoot);
    }
    return this.path;
  }

  /**
   * Ends the session's spilling: removes a session directory and every file in it (synchronous,
   * never follows links, never throws); a caller's own directory is kept. Later spills are refused.
   */
  remove(): void {
    const made = this.#state === 'made';
    this.#state = 'removed';
    liveDirectories.delete(this);
    if (!made || this.sharedRoot === undefined) return;
    try {
      if (fs.lstatSync(this.path).isDirectory())
        fs.rmSync(this.path, { recursive: true, force: true });
    } catch {
      // Gone already.
    }
  }

  /**
   * Sandbox options that let sandboxed commands read this session's spill files at the paths the
   * model is given, and no other session's: `readableRoots` gains {@link path}, and the per-user
   * directory joins `secretPaths` (after the defaults, when none are given) — hidden even where
   * a writable root or the host's temporary directory would show it — so only this session's
   * directory shows through. Merges into `base`.
   */
  sandboxOptions(
    base: Pick<Partial<SandboxOptions>, 'readableRoots' | 'secretPaths'> = {},
  ): Pick<SandboxOptions, 'readableRoots' | 'secretPaths'> {
    const readableRoots = [...(base.readableRoots ?? []), this.path];
    const secretPaths = base.secretPaths ?? defaultSecretPaths();
    if (this.sharedRoot === undefined)
      return base.secretPaths === undefined ? { readableRoots } : { readableRoots, secretPaths };
    return { readableRoots, secretPaths: [...secretPaths, this.sharedRoot] };
  }
}
