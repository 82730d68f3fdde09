import { realpathSync } from 'node:fs';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, isAbsolute, parse, relative, resolve, sep } from 'node:path';
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
      const items: Record<string, PinnedItem> = {};
      for (const [key, pinned] of Object.entries(entry.items ?? {})) {
        if (typeof pinned?.digest === 'string')
          items[key] = {
            kind: String(pinned.kind ?? ''),
            digest: pinned.digest,
            description: String(pinned.description ?? ''),
          };
      }
      this.#folders.set(folder, {
        folder,
        trustedAt: String(entry.trustedAt ?? ''),
        recursive: entry.recursive === true,
        items,
      });
    }
  }

  /** Every trusted folder, sorted by path. */
  list(): TrustedFolder[] {
    return [...this.#folders.values()].sort((a, b) => (a.folder < b.folder ? -1 : 1));
  }

  /**
   * The entry that covers `folder` (a real path): its own, else the nearest trusted ancestor that
   * trusts the folders below it.
   */
  entryFor(folder: string): TrustedFolder | undefined {
    const real = realFolder(folder);
    const own = this.#folders.get(real);
    if (own !== undefined) return own;
    let best: TrustedFolder | undefined;
    for (const entry of this.#folders.values()) {
      if (!entry.recursive || !isInside(entry.folder, real)) continue;
      if (best === undefined || entry.folder.length > best.folder.length) best = entry;
    }
    return best;
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
    // Another process may have changed the file since it was read: start from what is there.
    await this.#load();
    const entry: TrustedFolder = {
      folder: real,
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
  }

  /** Forgets `folder` (its own entry; an ancestor's stays). Whether there was one. */
  async revoke(folder: string): Promise<boolean> {
    const real = realFolder(folder);
    await this.#load();
    const had = this.#folders.delete(real) || this.#folders.delete(resolve(folder));
    if (had) await this.#save();
    return had;
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
