import { realpathSync, statSync } from 'node:fs';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, isAbsolute, parse, relative, resolve, sep } from 'node:path';
import { withFileLock } from './file-lock.js';
import { type TrustItem, trustItemDigest } from './trust-items.js';

/** One pinned item of a trusted folder, as stored. */
export interface PinnedItem {
  kind: string;
  digest: string;
  description: string;
}

/** A trusted folder, as stored. */
export interface TrustedFolder {
  /** The folder's real path. */
  folder: string;
  /** ISO time of the last trust decision. */
  trustedAt: string;
  /** Whether folders below it are trusted too (never for the home directory or `/`). */
  recursive: boolean;
  /** What was trusted, by item key. */
  items: Record<string, PinnedItem>;
  /**
   * The folder's identity when it was trusted ({@link folderIdentity}): a folder deleted and made
   * again at the same path (a new clone there) is another folder. Absent in entries written
   * before it was kept (those are believed by path).
   */
  identity?: string;
}

/** Options of {@link TrustStore.entryFor}. */
export interface EntryForOptions {
  /**
   * The folder is a repository of its own (its own `.git`: a clone, a submodule, a worktree):
   * only its own entry covers it, never a trusted folder above it — trusting `~/src`, or a
   * repository, is not trusting every repository cloned below it later.
   */
  ownRepository?: boolean;
}

/**
 * What identifies a folder beyond its path: its inode number and birth time. A folder removed
 * and created again at the same path — `rm -rf repo && git clone <another> repo` — has another.
 * The device is left out: it can change across mounts while the folder stays the same.
 * Undefined when the folder cannot be read.
 */
export function folderIdentity(folder: string): string | undefined {
  try {
    const info = statSync(folder, { bigint: true });
    return `${info.ino}:${info.birthtimeNs}`;
  } catch {
    return undefined;
  }
}

interface StoreFile {
  version: 1;
  folders: Record<string, Omit<TrustedFolder, 'folder'>>;
}

/** A folder's real path (symlinks resolved); the resolved path when it does not exist. */
export function realFolder(folder: string): string {
  try {
    return realpathSync(folder);
  } catch {
    return resolve(folder);
  }
}

/**
 * Whether trusting `folder` would trust too much at once: the home directory and the file-system
 * root are only ever trusted by themselves, never with every folder below them.
 */
export function isWholesaleFolder(folder: string, home = homedir()): boolean {
  const real = realFolder(folder);
  return real === parse(real).root || real === realFolder(home);
}

function isInside(parent: string, child: string): boolean {
  const path = relative(parent, child);
  return path === '' || (path !== '..' && !path.startsWith(`..${sep}`) && !isAbsolute(path));
}

/**
 * The user's trusted folders, kept in one JSON file (`$AGENT_HOME/trusted-folders.json` in the
 * CLI), written atomically with mode 0600. A file another user owns, or that others may write,
 * is not believed (a planted store would trust anything): it reads as empty, with a warning.
 */
export class TrustStore {
  readonly path: string;
  /** Why the file was not believed, when it was not. */
  readonly warnings: string[] = [];
  #folders = new Map<string, TrustedFolder>();

  private constructor(path: string) {
    this.path = path;
  }

  /** Reads the store at `path` (a missing file is an empty store). */
  static async open(path: string): Promise<TrustStore> {
    const store = new TrustStore(resolve(path));
    await store.#load();
    return store;
  }

  async #load(): Promise<void> {
    this.#folders.clear();
    let text: string;
    try {
      const info = await stat(this.path);
      const uid = process.getuid?.();
      if (uid !== undefined && info.uid !== uid) {
        this.warnings.push(`${this.path} belongs to another user (uid ${info.uid}): ignored`);
        return;
      }
      if ((info.mode & 0o022) !== 0) {
        this.warnings.push(`${this.path} may be written by other users: ignored (chmod 600 it)`);
        return;
      }
      text = await readFile(this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      this.warnings.push(`${this.path} cannot be read: ${(error as Error).message}`);
      return;
    }
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (error) {
      this.warnings.push(`${this.path} is not valid JSON (${(error as Error).message}): ignored`);
      return;
    }
    const folders = (data as Partial<StoreFile> | null)?.folders;
    if (folders === null || typeof folders !== 'object') {
      this.warnings.push(`${this.path} has no "folders" object: ignored`);
      return;
    }
    for (const [folder, entry] of Object.entries(folders)) {
      if (!isAbsolute(folder) || entry === null || typeof entry !== 'object') continue;
      // Entries, not assignment: an item keyed `__proto__` stays an item.
      const items: Record<string, PinnedItem> = Object.fromEntries(
        Object.entries(entry.items ?? {}).flatMap(([key, pinned]) =>
          typeof pinned?.digest === 'string'
            ? [
                [
                  key,
                  {
                    kind: String(pinned.kind ?? ''),
                    digest: pinned.digest,
                    description: String(pinned.description ?? ''),
                  },
                ],
              ]
            : [],
        ),
      );
      this.#folders.set(folder, {
        folder,
        trustedAt: String(entry.trustedAt ?? ''),
        recursive: entry.recursive === true,
        items,
        ...(typeof entry.identity === 'string' ? { identity: entry.identity } : {}),
      });
    }
  }

  /** Every trusted folder, sorted by path. */
  list(): TrustedFolder[] {
    return [...this.#folders.values()].sort((a, b) => (a.folder < b.folder ? -1 : 1));
  }

  /**
   * The entry that covers `folder` (a real path): its own, else the nearest trusted ancestor that
   * trusts the folders below it — unless `options.ownRepository` says the folder is a repository
   * of its own. An entry whose folder is not the one trusted any more (removed and made again at
   * its path) covers nothing.
   */
  entryFor(folder: string, options: EntryForOptions = {}): TrustedFolder | undefined {
    return this.#cover(folder, options).entry;
  }

  /**
   * Why no entry covers `folder` although one names it or a folder above it (for a notice), or
   * undefined: the folder trusted is not the one there now, or the folder is a repository of its
   * own below a trusted one.
   */
  uncoveredBecause(folder: string, options: EntryForOptions = {}): string | undefined {
    const { entry, replaced, above } = this.#cover(folder, options);
    if (entry !== undefined) return undefined;
    if (replaced !== undefined)
      return `${replaced.folder} was trusted on ${replaced.trustedAt.slice(0, 10)}, but the folder there now is another one (removed and made again at that path — a new clone?): trust it again if it is yours`;
    if (above !== undefined)
      return `${realFolder(folder)} is a repository of its own below the trusted ${above.folder}: trusting a folder does not trust the repositories cloned into it`;
    return undefined;
  }

  #cover(
    folder: string,
    options: EntryForOptions,
  ): { entry?: TrustedFolder; replaced?: TrustedFolder; above?: TrustedFolder } {
    const real = realFolder(folder);
    const same = (entry: TrustedFolder) =>
      entry.identity === undefined || entry.identity === folderIdentity(entry.folder);
    const own = this.#folders.get(real);
    if (own !== undefined) return same(own) ? { entry: own } : { replaced: own };
    let best: TrustedFolder | undefined;
    for (const entry of this.#folders.values()) {
      if (!entry.recursive || !isInside(entry.folder, real)) continue;
      if (best === undefined || entry.folder.length > best.folder.length) best = entry;
    }
    if (best === undefined) return {};
    if (options.ownRepository === true) return { above: best };
    return same(best) ? { entry: best } : { replaced: best };
  }

  /**
   * Trusts `folder` with exactly `items` pinned (replacing what was pinned for it before). The
   * home directory and `/` are trusted by themselves only, whatever `recursive` says.
   */
  async trust(
    folder: string,
    items: readonly TrustItem[],
    options: { recursive?: boolean; home?: string } = {},
  ): Promise<TrustedFolder> {
    const real = realFolder(folder);
    return await this.#locked(async () => {
      // Another process may have changed the file since it was read: start from what is there.
      await this.#load();
      const identity = folderIdentity(real);
      const entry: TrustedFolder = {
        folder: real,
        ...(identity === undefined ? {} : { identity }),
        trustedAt: new Date().toISOString(),
        recursive: (options.recursive ?? true) && !isWholesaleFolder(real, options.home),
        items: Object.fromEntries(
          items.map((item) => [
            item.key,
            { kind: item.kind, digest: trustItemDigest(item), description: item.description },
          ]),
        ),
      };
      this.#folders.set(real, entry);
      await this.#save();
      return entry;
    });
  }

  /**
   * Runs a change of the file holding its lock: two CLIs trusting two folders at once each read
   * it, added theirs and wrote it back, and one entry was lost.
   */
  async #locked<T>(change: () => Promise<T>): Promise<T> {
    await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
    return await withFileLock(this.path, change);
  }

  /** Forgets `folder` (its own entry; an ancestor's stays). Whether there was one. */
  async revoke(folder: string): Promise<boolean> {
    const real = realFolder(folder);
    return await this.#locked(async () => {
      await this.#load();
      const had = this.#folders.delete(real) || this.#folders.delete(resolve(folder));
      if (had) await this.#save();
      return had;
    });
  }

  async #save(): Promise<void> {
    const data: StoreFile = { version: 1, folders: {} };
    for (const { folder, ...entry } of this.list()) data.folders[folder] = entry;
    await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
    const staging = `${this.path}.${process.pid}.tmp`;
    try {
      await writeFile(staging, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
      await rename(staging, this.path);
    } catch (error) {
      await rm(staging, { force: true });
      throw error;
    }
    this.warnings.length = 0;
  }
}
