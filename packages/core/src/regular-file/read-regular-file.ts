import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readlinkSync,
  readSync,
  realpathSync,
  type Stats,
  statSync,
} from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import * as fsPromises from 'node:fs/promises';

// Reading a file that someone else may have put in place (a repository's AGENTS.md, a `.git/config`,
// a path a model or a language server names), bounded and without hanging. Each way it went wrong
// before is a case here: a FIFO blocked `open` for ever (deaf to Ctrl-C), a link to `/dev/zero`
// read until memory ran out, a 2 GB sparse file failed with an error naming no file, and a file
// that kept growing was followed. So: the path is judged before it is opened (opening a device
// can itself do something: a serial line, a tape, a watchdog), opened without blocking, judged
// again on the opened file (a swap between the two changes nothing), and read to a cap.

/** What stands at a path that is not a regular file. */
export type NonRegularFileType =
  | 'directory'
  | 'fifo'
  | 'character-device'
  | 'block-device'
  | 'socket'
  | 'symlink'
  | 'other';

/** The opened file, as {@link RegularFileReadOptions.check} sees it before anything is read. */
export interface OpenedRegularFile {
  /** `fstat` of the opened file (not of the path). */
  stats: Stats;
  /** The opened file's real path when `realPath: true` was asked, else undefined. */
  realPath: string | undefined;
}

/** Options of {@link readRegularFileSync} (and, with an async `check`, {@link readRegularFile}). */
export interface RegularFileReadOptions {
  /** Most bytes read (bytes). */
  maxBytes: number;
  /**
   * What a file over `maxBytes` gives: `'refuse'` [default] — `too-large`, nothing read;
   * `'head'` — its first `maxBytes`, with `truncated: true`.
   */
  larger?: 'refuse' | 'head';
  /**
   * Whether a symlink as the path's last component is followed [true]. With false it is neither
   * followed nor opened (`O_NOFOLLOW` besides): the outcome is `not-regular` of type `symlink`.
   */
  followSymlinks?: boolean;
  /**
   * Whether to find the opened file's real path [false]: on Linux its own (`/proc/self/fd/N`, so
   * a link swapped into the path after a check is seen); elsewhere `realpath` of the path. A
   * deleted file's ends with ` (deleted)` on Linux.
   */
  realPath?: boolean;
  /**
   * Asked once the opened file is known to be regular, before its size is judged or anything is
   * read: a reason not to read it gives `refused` with that reason. Errors it throws propagate.
   */
  check?: (file: OpenedRegularFile) => string | undefined;
}

/** The file-system calls {@link readRegularFile} makes: `node:fs/promises`'s, or a stand-in's. */
export type RegularFileSystem = Pick<
  typeof fsPromises,
  'stat' | 'lstat' | 'open' | 'readlink' | 'realpath'
>;

/** Options of {@link readRegularFile}: as {@link RegularFileReadOptions}, `check` may be async. */
export interface RegularFileReadAsyncOptions extends Omit<RegularFileReadOptions, 'check'> {
  /** As {@link RegularFileReadOptions.check}; may return a promise. */
  check?: (file: OpenedRegularFile) => string | undefined | Promise<string | undefined>;
  /**
   * The file-system calls to make [`node:fs/promises`]: a caller's own (one that counts calls or
   * simulates failures) is used for every step.
   */
  fileSystem?: RegularFileSystem;
}

/** What reading a file with {@link readRegularFile} or {@link readRegularFileSync} found. */
export type RegularFileRead =
  | {
      kind: 'read';
      /**
       * The bytes, at most `maxBytes`: read from the opened file until its end, so a file that
       * shrank while read gives what was left, one that grew gives the growth up to the cap.
       */
      bytes: Buffer;
      /** True when the file held more than `maxBytes` (only with `larger: 'head'`). */
      truncated: boolean;
      /** `fstat` of the opened file, taken before the read. */
      stats: Stats;
      /** The opened file's real path, when asked for. */
      realPath: string | undefined;
    }
  /** Nothing there (`ENOENT`), or a component of the path is not a directory (`ENOTDIR`). */
  | { kind: 'missing'; code: 'ENOENT' | 'ENOTDIR'; error: Error }
  /** Something other than a regular file; it was not read (and, when seen before opening, not opened). */
  | { kind: 'not-regular'; type: NonRegularFileType }
  /**
   * Over `maxBytes` (with `larger: 'refuse'`). `size` is the size seen, or, for a file that grew
   * past the cap while it was read, the bytes seen (`maxBytes + 1`: at least that).
   */
  | { kind: 'too-large'; size: number; stats: Stats }
  /** `check` gave a reason not to read it. */
  | { kind: 'refused'; reason: string; stats: Stats; realPath: string | undefined }
  /** Opening or reading failed otherwise (`EACCES`, `EIO`, a link loop…); `code` is the error's. */
  | { kind: 'unreadable'; code: string; error: Error };

const symlinkErrors = new Set(['ELOOP', 'EMLINK']);

function nonRegularType(stats: Stats): NonRegularFileType | undefined {
  if (stats.isFile()) return undefined;
  if (stats.isDirectory()) return 'directory';
  if (stats.isFIFO()) return 'fifo';
  if (stats.isCharacterDevice()) return 'character-device';
  if (stats.isBlockDevice()) return 'block-device';
  if (stats.isSocket()) return 'socket';
  if (stats.isSymbolicLink()) return 'symlink';
  return 'other';
}

function openFlags(followSymlinks: boolean): number {
  return (
    constants.O_RDONLY |
    (constants.O_NONBLOCK ?? 0) |
    (followSymlinks ? 0 : (constants.O_NOFOLLOW ?? 0))
  );
}

/** The outcome of an error from `stat`, `open` or a read. */
function failure(error: unknown, followSymlinks: boolean): RegularFileRead {
  const cause = error instanceof Error ? error : new Error(String(error));
  const code = (error as NodeJS.ErrnoException | undefined)?.code ?? 'UNKNOWN';
  if (code === 'ENOENT' || code === 'ENOTDIR') return { kind: 'missing', code, error: cause };
  // O_NOFOLLOW refuses a link (ELOOP on Linux, EMLINK on FreeBSD); one swapped in after lstat.
  if (!followSymlinks && symlinkErrors.has(code)) return { kind: 'not-regular', type: 'symlink' };
  if (code === 'EISDIR') return { kind: 'not-regular', type: 'directory' };
  return { kind: 'unreadable', code, error: cause };
}

/**
 * The buffers a read fills, to at most `limit` bytes: one sized from `fstat` (plus the byte that
 * finds the end), then 64 KiB more at a time for a file that grew, so a 64 MiB cap costs nothing
 * for a 1 kB file.
 */
class BoundedBytes {
  readonly #chunks: Buffer[] = [];
  readonly #limit: number;
  #total = 0;
  #current: Buffer;
  #filled = 0;

  constructor(limit: number, expected: number) {
    this.#limit = limit;
    this.#current = Buffer.alloc(Math.min(limit, expected + 1));
    this.#chunks.push(this.#current);
  }

  /** Where the next read goes, or undefined once the limit is reached. */
  slot(): { buffer: Buffer; offset: number; length: number; position: number } | undefined {
    if (this.#total >= this.#limit) return undefined;
    if (this.#filled === this.#current.length) {
      this.#current = Buffer.alloc(Math.min(64 * 1024, this.#limit - this.#total));
      this.#chunks.push(this.#current);
      this.#filled = 0;
    }
    return {
      buffer: this.#current,
      offset: this.#filled,
      length: this.#current.length - this.#filled,
      position: this.#total,
    };
  }

  /** Counts `count` bytes read into the last slot; false at the end of the file. */
  advance(count: number): boolean {
    this.#filled += count;
    this.#total += count;
    return count > 0;
  }

  /** The outcome of the read, for a file of `stats` read with `options`. */
  outcome(
    stats: Stats,
    realPath: string | undefined,
    options: Pick<RegularFileReadOptions, 'maxBytes' | 'larger'>,
  ): RegularFileRead {
    const over = this.#total > options.maxBytes;
    if (over && options.larger !== 'head')
      return { kind: 'too-large', size: Math.max(stats.size, this.#total), stats };
    const whole =
      this.#chunks.length === 1 ? this.#current : Buffer.concat(this.#chunks, this.#total);
    const bytes = whole.subarray(0, Math.min(this.#total, options.maxBytes));
    return { kind: 'read', bytes, truncated: over, stats, realPath };
  }
}

/** Throws a `RangeError` for a cap that is not a whole number of bytes (a caller's mistake). */
function assertMaxBytes(maxBytes: number): void {
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 0)
    throw new RangeError(`maxBytes must be a whole number of bytes, not ${maxBytes}`);
}

/**
 * Judged before anything is read: what `check` said (`refusal`), then the size. The buffers for
 * the read when it is to be read: `options.maxBytes + 1` bytes at most, the one past the cap
 * tells a file that grew past it.
 */
function readPlan(
  file: OpenedRegularFile,
  refusal: string | undefined,
  options: RegularFileReadOptions | RegularFileReadAsyncOptions,
): BoundedBytes | RegularFileRead {
  const { stats, realPath } = file;
  if (refusal !== undefined) return { kind: 'refused', reason: refusal, stats, realPath };
  if (stats.size > options.maxBytes && options.larger !== 'head')
    return { kind: 'too-large', size: stats.size, stats };
  return new BoundedBytes(options.maxBytes + 1, Math.min(stats.size, options.maxBytes));
}

/**
 * Reads `path` when it is a regular file, at most `options.maxBytes`, and never blocks on what
 * stands there: a FIFO, a device, a socket or a directory is `not-regular`, a larger file
 * `too-large` (or its head), without reading it. Judged on the path first (a device is not even
 * opened), then on the opened file, so a swap between the two changes nothing. Never throws for
 * what the file system says (each case is an outcome); `check` may throw, and a `maxBytes` that
 * is not a whole number throws a `RangeError`. Synchronous: for
 * callers that cannot wait (a launch being prepared); {@link readRegularFile} elsewhere.
 */
export function readRegularFileSync(
  path: string,
  options: RegularFileReadOptions,
): RegularFileRead {
  assertMaxBytes(options.maxBytes);
  const follow = options.followSymlinks ?? true;
  let descriptor: number;
  try {
    const type = nonRegularType(follow ? statSync(path) : lstatSync(path));
    if (type !== undefined) return { kind: 'not-regular', type };
    descriptor = openSync(path, openFlags(follow));
  } catch (error) {
    return failure(error, follow);
  }
  try {
    let stats: Stats;
    let realPath: string | undefined;
    try {
      stats = fstatSync(descriptor);
      const type = nonRegularType(stats);
      if (type !== undefined) return { kind: 'not-regular', type };
      if (options.realPath === true) realPath = openedRealPathSync(descriptor, path);
    } catch (error) {
      return failure(error, follow);
    }
    const opened = { stats, realPath };
    const plan = readPlan(opened, options.check?.(opened), options);
    if (!(plan instanceof BoundedBytes)) return plan;
    try {
      for (let slot = plan.slot(); slot !== undefined; slot = plan.slot()) {
        const count = readSync(descriptor, slot.buffer, slot.offset, slot.length, slot.position);
        if (!plan.advance(count)) break;
      }
    } catch (error) {
      return failure(error, follow);
    }
    return plan.outcome(stats, realPath, options);
  } finally {
    closeSync(descriptor);
  }
}

/**
 * Reads `path` when it is a regular file, at most `options.maxBytes`, and never blocks on what
 * stands there: a FIFO, a device, a socket or a directory is `not-regular`, a larger file
 * `too-large` (or its head), without reading it. Judged on the path first (a device is not even
 * opened), then on the opened file, so a swap between the two changes nothing. Resolves with an
 * outcome for whatever the file system says; rejects only when `check` does (or `maxBytes` is not
 * a whole number: a `RangeError`).
 */
export async function readRegularFile(
  path: string,
  options: RegularFileReadAsyncOptions,
): Promise<RegularFileRead> {
  assertMaxBytes(options.maxBytes);
  const follow = options.followSymlinks ?? true;
  const fs = options.fileSystem ?? fsPromises;
  let handle: FileHandle;
  try {
    const type = nonRegularType(await (follow ? fs.stat(path) : fs.lstat(path)));
    if (type !== undefined) return { kind: 'not-regular', type };
    handle = await fs.open(path, openFlags(follow));
  } catch (error) {
    return failure(error, follow);
  }
  try {
    let stats: Stats;
    let realPath: string | undefined;
    try {
      stats = await handle.stat();
      const type = nonRegularType(stats);
      if (type !== undefined) return { kind: 'not-regular', type };
      if (options.realPath === true) realPath = await openedRealPath(fs, handle.fd, path);
    } catch (error) {
      return failure(error, follow);
    }
    const opened = { stats, realPath };
    const plan = readPlan(opened, await options.check?.(opened), options);
    if (!(plan instanceof BoundedBytes)) return plan;
    try {
      for (let slot = plan.slot(); slot !== undefined; slot = plan.slot()) {
        const { bytesRead } = await handle.read(
          slot.buffer,
          slot.offset,
          slot.length,
          slot.position,
        );
        if (!plan.advance(bytesRead)) break;
      }
    } catch (error) {
      return failure(error, follow);
    }
    return plan.outcome(stats, realPath, options);
  } finally {
    await handle.close();
  }
}

function openedRealPathSync(descriptor: number, path: string): string {
  try {
    return readlinkSync(`/proc/self/fd/${descriptor}`);
  } catch {
    return realpathSync(path);
  }
}

async function openedRealPath(
  fs: RegularFileSystem,
  descriptor: number,
  path: string,
): Promise<string> {
  try {
    return await fs.readlink(`/proc/self/fd/${descriptor}`);
  } catch {
    return await fs.realpath(path);
  }
}

/** `bytes` as UTF-8 text, a leading byte-order mark (as Windows editors write one) dropped. */
export function utf8Text(bytes: Uint8Array): string {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  return text.startsWith('\uFEFF') ? text.slice(1) : text;
}
