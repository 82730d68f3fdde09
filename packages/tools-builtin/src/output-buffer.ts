import * as fs from 'node:fs';
import * as path from 'node:path';

const spillHighWaterMark = 4 * 1024 * 1024;

/** Options of an {@link OutputBuffer}. */
export interface OutputBufferOptions {
  /** Bytes kept from the start of the output. */
  headBytes: number;
  /** Bytes kept from the end of the output. */
  tailBytes: number;
  /** Directory for the spill file; created when needed. */
  spillDir: string;
  /** File name stem of the spill file, e.g. `bash-<id>-stdout`. */
  name: string;
}

/** What an output buffer holds once the stream is done. */
export interface OutputSnapshot {
  /** Head and tail decoded as UTF-8 (invalid bytes become U+FFFD), with an omission marker between them. */
  text: string;
  /** Total bytes written. */
  totalBytes: number;
  /** True when bytes were left out of `text`. */
  truncated: boolean;
  /** Where the full output was saved, when it did not fit. */
  spillPath?: string;
}

/**
 * Bounded memory for a stream of any size: keeps the first `headBytes` and the last
 * `tailBytes`; once the output outgrows both, writes the whole of it to a spill file
 * (with backpressure: `write` returns false until the file catches up).
 */
export class OutputBuffer {
  readonly #options: OutputBufferOptions;
  readonly #head: Buffer[] = [];
  #headLength = 0;
  readonly #tail: Buffer[] = [];
  #tailLength = 0;
  #total = 0;
  #file: fs.WriteStream | undefined;
  #spillPath: string | undefined;
  #spillError: Error | undefined;

  constructor(options: OutputBufferOptions) {
    this.#options = options;
  }

  /** Total bytes written so far. */
  get totalBytes(): number {
    return this.#total;
  }

  /** The spill file path, once there is one. */
  get spillPath(): string | undefined {
    return this.#spillPath;
  }

  /** Adds a chunk; returns false when the caller should wait for `drain()` before writing more. */
  write(chunk: Buffer): boolean {
    if (chunk.length === 0) return true;
    this.#total += chunk.length;
    const spilling = this.#file !== undefined;
    let ok = true;
    if (spilling) ok = this.#file?.write(chunk) ?? true;
    let rest = chunk;
    if (this.#headLength < this.#options.headBytes) {
      const take = Math.min(this.#options.headBytes - this.#headLength, rest.length);
      this.#head.push(Buffer.from(rest.subarray(0, take)));
      this.#headLength += take;
      rest = rest.subarray(take);
    }
    if (rest.length === 0) return ok;
    // Copy: the caller may reuse its buffer, and a slice would pin a whole pooled chunk.
    this.#tail.push(Buffer.from(rest));
    this.#tailLength += rest.length;
    if (!spilling && this.#spillError === undefined && this.#tailLength > this.#options.tailBytes) {
      // Nothing was dropped yet: head and tail together are the whole output so far.
      ok = this.#startSpill();
    }
    while (
      this.#tail.length > 1 &&
      this.#tailLength - (this.#tail[0]?.length ?? 0) >= this.#options.tailBytes
    ) {
      this.#tailLength -= this.#tail.shift()?.length ?? 0;
    }
    return ok;
  }

  /** Resolves when the spill file has taken what was written (at once when there is none). */
  drain(): Promise<void> {
    const file = this.#file;
    if (file === undefined || !file.writableNeedDrain) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        file.off('drain', done);
        file.off('close', done);
        file.off('error', done);
        resolve();
      };
      file.on('drain', done);
      file.on('close', done);
      file.on('error', done);
    });
  }

  #startSpill(): boolean {
    try {
      fs.mkdirSync(this.#options.spillDir, { recursive: true });
      const file = path.join(
        this.#options.spillDir,
        `${this.#options.name}-${Date.now().toString(36)}.log`,
      );
      // A large buffer: fewer pause/resume round trips of the pipe while the disk catches up.
      const stream = fs.createWriteStream(file, {
        flags: 'wx',
        mode: 0o600,
        highWaterMark: spillHighWaterMark,
      });
      stream.on('error', (error) => {
        this.#spillError = error;
      });
      let ok = true;
      for (const part of this.#head) ok = stream.write(part);
      for (const part of this.#tail) ok = stream.write(part);
      this.#file = stream;
      this.#spillPath = file;
      return ok;
    } catch (error) {
      this.#spillError = error instanceof Error ? error : new Error(String(error));
      return true;
    }
  }

  /** Flushes and closes the spill file. */
  async close(): Promise<void> {
    const file = this.#file;
    if (file === undefined || file.closed) return;
    await new Promise<void>((resolve) => {
      file.end(() => resolve());
      file.on('error', () => resolve());
    });
  }

  /** The last `maxBytes` of output, decoded (for progress updates). */
  preview(maxBytes: number): string {
    const parts = this.#total > this.#headLength ? this.#tail : this.#head;
    const joined = Buffer.concat(parts);
    return decode(joined.subarray(Math.max(0, joined.length - maxBytes)));
  }

  /** Head and tail as text, with a marker for what was left out. */
  snapshot(): OutputSnapshot {
    const head = Buffer.concat(this.#head);
    const tailAll = Buffer.concat(this.#tail);
    const tail = tailAll.subarray(Math.max(0, tailAll.length - this.#options.tailBytes));
    const kept = head.length + tail.length;
    const truncated = kept < this.#total;
    const snapshot: OutputSnapshot = {
      text: '',
      totalBytes: this.#total,
      truncated,
    };
    if (this.#spillPath !== undefined) snapshot.spillPath = this.#spillPath;
    if (!truncated) {
      snapshot.text = decode(Buffer.concat([head, tail]));
      return snapshot;
    }
    const omitted = this.#total - kept;
    const where =
      this.#spillPath !== undefined
        ? `full output saved to ${this.#spillPath}`
        : `full output could not be saved${this.#spillError ? `: ${this.#spillError.message}` : ''}`;
    snapshot.text = `${decode(head)}\n\n[... ${omitted.toLocaleString('en-US')} bytes omitted of ${this.#total.toLocaleString('en-US')}; ${where} ...]\n\n${decode(tail)}`;
    return snapshot;
  }
}

/** UTF-8 decode where invalid bytes become U+FFFD (never throws). */
export function decode(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
}
