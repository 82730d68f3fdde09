// The record, outside every workspace, of the empty folders sandboxes made as mount points for
// auto-run files (auto-run-files.ts): which process made or uses each, so a process killed by a
// signal leaves nothing for good — the next sandbox of the same user removes what no running
// process uses — and one process never removes a folder another one still has bound.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** One empty folder a sandbox made, and which it is: device, inode and change time. */
export interface PlaceholderEntry {
  path: string;
  identity: string;
}

/** What one process's record file holds. */
interface ProcessRecord {
  pid: number;
  /** The process's start time (clock ticks since boot, /proc/<pid>/stat): a reused pid differs. */
  start: string;
  /** The boot the process ran in (/proc/sys/kernel/random/boot_id). */
  boot: string;
  placeholders: PlaceholderEntry[];
}

/**
 * Where the records live: `$XDG_STATE_HOME/agent-sandbox/placeholders` (`~/.local/state` by
 * default). Hidden from every sandbox (see {@link placeholderStateDirectory}): a record a command
 * could write would be a list of folders to remove.
 */
export function placeholderRecordDirectory(): string {
  return path.join(placeholderStateDirectory(), 'placeholders');
}

/** The directory hidden from sandboxes that holds the records. */
export function placeholderStateDirectory(): string {
  const state = process.env.XDG_STATE_HOME;
  const base =
    state !== undefined && path.isAbsolute(state)
      ? state
      : path.join(os.homedir(), '.local', 'state');
  return path.join(base, 'agent-sandbox');
}

/** A directory's identity: a folder made again at the same path (or changed since) is another. */
export function directoryIdentity(entry: string): string | undefined {
  const stat = fs.lstatSync(entry, { bigint: true, throwIfNoEntry: false });
  // An empty file is a placeholder too (for a file an empty folder would break: a git include).
  if (stat === undefined || !(stat.isDirectory() || (stat.isFile() && stat.size === 0n)))
    return undefined;
  return identityOf(stat);
}

/** The identity {@link directoryIdentity} gives, of a directory already looked at. */
export function identityOf(stat: fs.BigIntStats): string {
  return `${stat.dev}:${stat.ino}:${stat.ctimeNs}`;
}

/**
 * Removes the empty directory (or empty file) `entry` if it is still the one made; never one with
 * content.
 */
export function removeIfSame(entry: string, identity: string): void {
  if (directoryIdentity(entry) !== identity) return;
  try {
    if (fs.lstatSync(entry).isDirectory()) fs.rmdirSync(entry);
    else fs.unlinkSync(entry);
  } catch {
    // Not empty: the user (or a tool outside the sandbox) put something there; it stays.
  }
}

/**
 * This process's record, rewritten whenever the set of folders it made or uses changes, and the
 * others' records, read to tell whether a folder is someone's placeholder and whether anyone
 * running still uses it. Without a writable state directory (a user with no home) it records
 * nothing and knows only this process's folders, as before.
 */
export class PlaceholderRecords {
  readonly #directory: string;
  readonly #self: { pid: number; start: string; boot: string } | undefined;
  #usable: boolean;

  constructor(directory = placeholderRecordDirectory()) {
    this.#directory = directory;
    const start = processStart(process.pid);
    const boot = bootId();
    this.#self =
      start === undefined || boot === undefined ? undefined : { pid: process.pid, start, boot };
    this.#usable = this.#self !== undefined;
  }

  get #ownFile(): string {
    return path.join(this.#directory, `${this.#self?.pid}-${this.#self?.start}.json`);
  }

  /** Makes the directory, so that sandboxes made from now on hide it (see placeholderStateDirectory). */
  prepare(): void {
    if (!this.#usable) return;
    try {
      fs.mkdirSync(this.#directory, { recursive: true, mode: 0o700 });
    } catch {
      this.#usable = false;
    }
  }

  /** Writes this process's record: the folders it made or uses now (none: the file is removed). */
  write(placeholders: readonly PlaceholderEntry[]): void {
    if (!this.#usable || this.#self === undefined) return;
    try {
      if (placeholders.length === 0) {
        fs.rmSync(this.#ownFile, { force: true });
        return;
      }
      fs.mkdirSync(this.#directory, { recursive: true, mode: 0o700 });
      const record: ProcessRecord = { ...this.#self, placeholders: [...placeholders] };
      const temporary = `${this.#ownFile}.${process.pid}.tmp`;
      fs.writeFileSync(temporary, JSON.stringify(record), { mode: 0o600 });
      fs.renameSync(temporary, this.#ownFile);
    } catch {
      // No state directory to write (no home, read-only): this process's own bookkeeping only.
      this.#usable = false;
    }
  }

  /** Whether a record of another process, running or not, lists `entry` as this very folder. */
  isPlaceholder(entry: PlaceholderEntry): boolean {
    return this.#others().some((record) => lists(record, entry));
  }

  /** Whether another process that still runs uses `entry` (its sandbox may have it bound). */
  usedElsewhere(entry: PlaceholderEntry): boolean {
    return this.#others().some((record) => isRunning(record) && lists(record, entry));
  }

  /**
   * Removes the folders of processes that no longer run (SIGKILLed: their exit handler never
   * ran) that no running process uses, where each is still the same empty folder, then their
   * records. Returns the folders removed.
   */
  sweep(): string[] {
    const others = this.#others();
    const running = others.filter(isRunning);
    const removed: string[] = [];
    for (const record of others) {
      if (running.includes(record)) continue;
      for (const entry of record.placeholders) {
        if (running.some((live) => lists(live, entry))) continue;
        removeIfSame(entry.path, entry.identity);
        if (directoryIdentity(entry.path) === undefined) removed.push(entry.path);
      }
      try {
        fs.rmSync(record.file, { force: true });
      } catch {
        // Another sweep removed it.
      }
    }
    return removed;
  }

  /** The other processes' records that can be read (this user's regular files, well-formed). */
  #others(): (ProcessRecord & { file: string })[] {
    if (this.#self === undefined) return [];
    let names: string[];
    try {
      names = fs.readdirSync(this.#directory);
    } catch {
      return [];
    }
    const records: (ProcessRecord & { file: string })[] = [];
    const uid = process.getuid?.();
    for (const name of names) {
      if (!name.endsWith('.json')) continue;
      const file = path.join(this.#directory, name);
      if (file === this.#ownFile) continue;
      try {
        const stat = fs.lstatSync(file);
        if (!stat.isFile() || (uid !== undefined && stat.uid !== uid)) continue;
        const record = parseRecord(fs.readFileSync(file, 'utf8'));
        if (record !== undefined) records.push({ ...record, file });
      } catch {
        // Removed meanwhile.
      }
    }
    return records;
  }
}

function lists(record: ProcessRecord, entry: PlaceholderEntry): boolean {
  return record.placeholders.some(
    (listed) => listed.path === entry.path && listed.identity === entry.identity,
  );
}

/** Whether the process of `record` still runs: same boot, same pid, same start time. */
function isRunning(record: ProcessRecord): boolean {
  return record.boot === bootId() && processStart(record.pid) === record.start;
}

function parseRecord(text: string): ProcessRecord | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { pid, start, boot, placeholders } = value as Record<string, unknown>;
  if (
    typeof pid !== 'number' ||
    !Number.isSafeInteger(pid) ||
    pid <= 0 ||
    typeof start !== 'string' ||
    typeof boot !== 'string' ||
    !Array.isArray(placeholders)
  )
    return undefined;
  const entries: PlaceholderEntry[] = [];
  for (const entry of placeholders as unknown[]) {
    if (typeof entry !== 'object' || entry === null) continue;
    const { path: where, identity } = entry as Record<string, unknown>;
    if (typeof where === 'string' && path.isAbsolute(where) && typeof identity === 'string')
      entries.push({ path: where, identity });
  }
  return { pid, start, boot, placeholders: entries };
}

/** A process's start time in clock ticks since boot, or undefined when it does not run. */
function processStart(pid: number): string | undefined {
  let stat: string;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // A zombie (killed, not yet reaped) runs nothing: its sandbox is gone.
  return fields[0] === 'Z' ? undefined : fields[19];
}

let boot: string | undefined;
function bootId(): string | undefined {
  if (boot !== undefined) return boot;
  try {
    boot = fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return undefined;
  }
  return boot;
}
