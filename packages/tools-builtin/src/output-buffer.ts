import * as fsPromises from 'node:fs/promises';
import * as path from 'node:path';
import { defaultSpillDir, prepareSpillDir, sharedDirProblem } from './spill-dir.js';
import { SpillFile } from './spill-file.js';

/** Options of an {@link OutputBuffer}. */
export interface OutputBufferOptions {
  /** Bytes kept from the start of the output. */
  headBytes: number;
  /** Bytes kept from the end of the output. */
  tailBytes: number;
  /**
   * Directory for the spill file, created when needed; or a function called at the first spill
   * that makes the directory and returns it (throwing says why output cannot be saved).
   */
  spillDir: string | (() => string);
  /** File name stem of the spill file, e.g. `bash-<id>-stdout`. */
  name: string;
  /**
   * Largest spill file in bytes [unlimited]. Past it the file is closed and holds only the first
   * `maxSpillBytes` bytes; bytes are still counted and the tail is still kept. 0: no spill file.
   */
  maxSpillBytes?: number;
  /**
   * Bytes every spill file sharing it may still write, together (a session's: see
   * `SpillDirectory.budget`) [unlimited]. When it runs out, files are capped as at
   * `maxSpillBytes`, and no new one is made.
   */
  spillBudget?: SpillBudget;
}

/** Bytes spill files may write together; each write takes its share first. */
export interface SpillBudget {
  /** Takes up to `bytes` from what is left; returns how many were granted. */
  take(bytes: number): number;
  /** What is left. */
  readonly remaining: number;
  /** What it started with. */
  readonly limit: number;
}

/** What an output buffer holds once the stream is done. */
export interface OutputSnapshot {
  /** Head and tail decoded as UTF-8 (invalid bytes become U+FFFD), with an omission marker between them. */
  text: string;
  /** Total bytes written. */
  totalBytes: number;
  /** True when bytes were left out of `text`. */
  truncated: boolean;
  /** Where the output was saved, when it did not fit (all of it unless `spillCapped`). */
  spillPath?: string;
  /** Bytes in the spill file, when there is one. */
  spillBytes?: number;
  /** True when the spill file reached `maxSpillBytes` and holds only the first `spillBytes` bytes. */
  spillCapped?: boolean;
  /** Set when writing the spill file failed (disk full, …): it holds only part of the output. */
  spillError?: string;
}

/**
 * Bounded memory for a stream of any size: keeps the first `headBytes` and the last
 * `tailBytes` (a ring buffer, so a chunk costs at most one copy of `tailBytes`); once the output
 * outgrows both, writes the whole of it to a spill file (with backpressure: `write` returns false
 * until the file catches up). Every byte kept is copied, so a reader can hand in views of one
 * reused buffer.
 */
export class OutputBuffer {
  readonly #options: OutputBufferOptions;
  readonly #head: Buffer;
  #headLength = 0;
  /** The last bytes after the head, a ring: `#ringEnd` is where the next byte goes. */
  readonly #ring: Buffer;
  #ringEnd = 0;
  #ringLength = 0;
  #total = 0;
  #file: SpillFile | undefined;
  /** Why the spill file could not be created. */
  #openError: Error | undefined;
  readonly #maxSpill: number;
  #spilled = 0;
  #spillCapped = false;
  /** Set when the shared budget, not `maxSpillBytes`, capped the file. */
  #budgetSpent = false;

  constructor(options: OutputBufferOptions) {
    this.#options = options;
    this.#maxSpill = Math.max(0, options.maxSpillBytes ?? Number.POSITIVE_INFINITY);
    this.#head = Buffer.allocUnsafe(Math.max(0, options.headBytes));
    this.#ring = Buffer.allocUnsafe(Math.max(0, options.tailBytes));
  }

  /** Total bytes written so far. */
  get totalBytes(): number {
    return this.#total;
  }

  /** The spill file path, once there is one. */
  get spillPath(): string | undefined {
    return this.#file?.path;
  }

  /**
   * Adds a chunk; returns false when the caller should wait for `drain()` before writing more.
   * Every byte kept is copied: the caller may reuse `chunk` as soon as this returns.
   */
  write(chunk: Uint8Array): boolean {
    if (chunk.length === 0) return true;
    this.#total += chunk.length;
    let rest = chunk;
    if (this.#headLength < this.#head.length) {
      const take = Math.min(this.#head.length - this.#headLength, rest.length);
      this.#head.set(rest.subarray(0, take), this.#headLength);
      this.#headLength += take;
      rest = rest.subarray(take);
    }
    let ok = true;
    if (this.#file !== undefined) {
      ok = this.#spillWrite(this.#file, chunk);
    } else if (
      this.#openError === undefined &&
      this.#maxSpill > 0 &&
      this.#ringLength + rest.length > this.#ring.length
    ) {
      const budget = this.#options.spillBudget;
      if (budget !== undefined && budget.remaining <= 0) {
        // Background commands writing for ever must not fill the disk between them.
        this.#openError = new Error(
          `this session's spill files reached their limit of ${budget.limit.toLocaleString('en-US')} bytes`,
        );
      }
      // Nothing was dropped yet: head, ring and this chunk are the whole output so far.
      else ok = this.#startSpill(chunk);
    }
    if (rest.length > 0) this.#pushTail(rest);
    return ok;
  }

  /**
   * Writes to the spill file what fits under `maxSpillBytes`; at the cap the file is closed and
   * later bytes are only counted (returns true then: nothing waits on the disk any more).
   */
  #spillWrite(file: SpillFile, bytes: Uint8Array): boolean {
    if (this.#spillCapped || bytes.length === 0) return true;
    const room = Math.max(0, Math.min(bytes.length, this.#maxSpill - this.#spilled));
    const budget = this.#options.spillBudget;
    const granted = budget === undefined ? room : budget.take(room);
    if (granted === bytes.length) {
      this.#spilled += bytes.length;
      return file.append(bytes);
    }
    if (granted > 0) file.append(bytes.subarray(0, granted));
    this.#spilled += granted;
    this.#spillCapped = true;
    this.#budgetSpent = granted < room;
    void file.close();
    return true;
  }

  /** Copies the last bytes of `bytes` into the ring. */
  #pushTail(bytes: Uint8Array): void {
    const ring = this.#ring;
    const size = ring.length;
    if (size === 0) return;
    const kept = bytes.length > size ? bytes.subarray(bytes.length - size) : bytes;
    const first = Math.min(kept.length, size - this.#ringEnd);
    ring.set(kept.subarray(0, first), this.#ringEnd);
    if (first < kept.length) ring.set(kept.subarray(first), 0);
    this.#ringEnd = (this.#ringEnd + kept.length) % size;
    this.#ringLength = Math.min(size, this.#ringLength + kept.length);
  }

  /** The ring's bytes in order (a copy). */
  #tailBytes(): Buffer {
    const size = this.#ring.length;
    const start = (this.#ringEnd - this.#ringLength + size) % (size || 1);
    if (start + this.#ringLength <= size)
      return Buffer.from(this.#ring.subarray(start, start + this.#ringLength));
    return Buffer.concat([this.#ring.subarray(start), this.#ring.subarray(0, this.#ringEnd)]);
  }

  /** Resolves when the spill file has room for more (at once when there is none). */
  drain(): Promise<void> {
    return this.#file?.drain() ?? Promise.resolve();
  }

  /** Opens the spill file with everything so far: the older head, the ring, then `chunk`. */
  #startSpill(chunk: Uint8Array): boolean {
    let file: SpillFile;
    try {
      const where = this.#options.spillDir;
      let dir: string;
      if (typeof where === 'string') {
        prepareSpillDir(where);
        dir = where;
      } else dir = where();
      file = new SpillFile(path.join(dir, `${this.#options.name}-${Date.now().toString(36)}.log`));
    } catch (error) {
      this.#openError = error instanceof Error ? error : new Error(String(error));
      return true;
    }
    this.#file = file;
    // The head as it was before `chunk` (whose first bytes may have just gone into it).
    const headBefore = this.#total - chunk.length - this.#ringLength;
    if (headBefore > 0) this.#spillWrite(file, this.#head.subarray(0, headBefore));
    if (this.#ringLength > 0) this.#spillWrite(file, this.#tailBytes());
    return this.#spillWrite(file, chunk);
  }

  /** Writes out and closes the spill file. */
  async close(): Promise<void> {
    await this.#file?.close();
  }

  /** The last `maxBytes` of output, decoded (for progress updates). */
  preview(maxBytes: number): string {
    const joined =
      this.#ringLength > 0 ? this.#tailBytes() : this.#head.subarray(0, this.#headLength);
    return decode(joined.subarray(Math.max(0, joined.length - maxBytes)));
  }

  /** Head and tail as text, with a marker for what was left out. */
  snapshot(): OutputSnapshot {
    const head = this.#head.subarray(0, this.#headLength);
    const tail = this.#tailBytes();
    const kept = head.length + tail.length;
    const truncated = kept < this.#total;
    const snapshot: OutputSnapshot = {
      text: '',
      totalBytes: this.#total,
      truncated,
    };
    const file = this.#file;
    if (file !== undefined) {
      snapshot.spillPath = file.path;
      snapshot.spillBytes = this.#spilled;
      if (this.#spillCapped) snapshot.spillCapped = true;
      if (file.error !== undefined) snapshot.spillError = file.error.message;
    }
    if (!truncated) {
      snapshot.text = decode(Buffer.concat([head, tail]));
      return snapshot;
    }
    // Cut at character boundaries so a split UTF-8 sequence does not show as U+FFFD.
    const headEnd = utf8BoundaryBefore(head, head.length);
    const tailStart = utf8BoundaryAfter(tail, 0);
    const omitted = this.#total - headEnd - (tail.length - tailStart);
    const where =
      file === undefined
        ? this.#maxSpill === 0
          ? 'full output not saved (no spill file: maxSpillBytes is 0)'
          : `full output could not be saved${this.#openError ? `: ${this.#openError.message}` : ''}`
        : file.error !== undefined
          ? `the output could not all be saved to ${file.path}: ${file.error.message}`
          : this.#spillCapped
            ? `only the first ${this.#spilled.toLocaleString('en-US')} bytes were saved, to ${file.path} (${this.#budgetSpent ? `this session's spill files reached their limit of ${(this.#options.spillBudget?.limit ?? 0).toLocaleString('en-US')} bytes` : 'the spill file limit'}); the rest was not saved`
            : `full output saved to ${file.path}`;
    snapshot.text = `${decode(head.subarray(0, headEnd))}\n\n[... ${omitted.toLocaleString('en-US')} bytes omitted of ${this.#total.toLocaleString('en-US')}; ${where} ...]\n\n${decode(tail.subarray(tailStart))}`;
    return snapshot;
  }
}

const isContinuation = (byte: number | undefined) =>
  byte !== undefined && byte >= 0x80 && byte < 0xc0;

/** The end index at or before `end` that does not split a UTF-8 sequence (within 3 bytes). */
function utf8BoundaryBefore(bytes: Uint8Array, end: number): number {
  let lead = end - 1;
  while (lead > 0 && lead > end - 4 && isContinuation(bytes[lead])) lead--;
  const first = bytes[lead];
  if (first === undefined || first < 0xc0) return end;
  const length = first >= 0xf0 ? 4 : first >= 0xe0 ? 3 : 2;
  return lead + length > end ? lead : end;
}

/** The first index at or after `start` that is not a UTF-8 continuation byte (within 3 bytes). */
function utf8BoundaryAfter(bytes: Uint8Array, start: number): number {
  let at = start;
  while (at < bytes.length && at < start + 3 && isContinuation(bytes[at])) at++;
  return at;
}

/** UTF-8 decode where invalid bytes become U+FFFD (never throws). */
export function decode(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
}

/** Spill files bash writes are named `bash-<id>-<stream>-<time>.log`; nothing else is deleted. */
const spillFileName = /^bash-.+\.log$/;

/**
 * Deletes spill files (`bash-*.log`) older than `maxAgeMs` (by modification time) from `dir`.
 * Best effort: never throws; returns how many were deleted. Other files are left alone.
 */
export async function removeStaleSpillFiles(
  dir: string,
  maxAgeMs: number,
  now: number = Date.now(),
): Promise<number> {
  let removed = 0;
  try {
    // Never through a planted link or in another user's directory in the shared temp directory.
    if (path.resolve(dir) === defaultSpillDir() && sharedDirProblem(dir) !== undefined) return 0;
    const entries = await fsPromises.readdir(dir, { withFileTypes: true });
    for (const entry of entries) {
      if (!entry.isFile() || !spillFileName.test(entry.name)) continue;
      const file = path.join(dir, entry.name);
      try {
        const stats = await fsPromises.lstat(file);
        if (!stats.isFile() || now - stats.mtimeMs <= maxAgeMs) continue;
        await fsPromises.unlink(file);
        removed++;
      } catch {
        // Gone already, or not ours to delete: leave it.
      }
    }
  } catch {
    // No spill directory yet, or unreadable: nothing to clean.
  }
  return removed;
}
