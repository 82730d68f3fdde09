import * as fs from 'node:fs';

/** Bytes gathered before a write is handed to the thread pool. */
const batchBytes = 1024 * 1024;
/** A partly filled batch is written after this long, so the file follows slow output closely. */
const lingerMs = 20;
/** Batches in flight at once; past it `append` asks the caller to wait (4 MiB in memory at most). */
const maxBatchesInFlight = 4;

/**
 * A file that output is appended to, fast: bytes are copied into 1 MiB batches (so the caller may
 * reuse its buffer at once), each batch is written at its own offset in one thread-pool call, and
 * the batches are recycled. A partly filled batch is written within 20 ms, so the file follows
 * slow output closely. At most four batches are in flight; `append` returns
 * false then, and `drain()` resolves when there is room again.
 */
export class SpillFile {
  readonly path: string;
  readonly #fd: number;
  #batch: Buffer | undefined;
  #batchLength = 0;
  readonly #free: Buffer[] = [];
  #inFlight = 0;
  /** Offset of the next batch handed to the thread pool. */
  #offset = 0;
  #flushTimer: NodeJS.Timeout | undefined;
  #waiters: (() => void)[] = [];
  #error: Error | undefined;
  #closing: Promise<void> | undefined;

  /** Creates the file (`wx`, mode 0600); throws when it cannot. */
  constructor(file: string) {
    this.path = file;
    this.#fd = fs.openSync(file, 'wx', 0o600);
  }

  /** The first write error, if any: bytes after it were not saved. */
  get error(): Error | undefined {
    return this.#error;
  }

  /** Bytes handed to the file so far (saved once `close()` resolves without an error). */
  get bytes(): number {
    return this.#offset + this.#batchLength;
  }

  /** True while more batches are in flight than the limit: wait for `drain()`. */
  get needsDrain(): boolean {
    return this.#inFlight >= maxBatchesInFlight && this.#error === undefined;
  }

  /** Copies `bytes` in; returns false when the caller should wait for `drain()` before more. */
  append(bytes: Uint8Array): boolean {
    if (this.#error !== undefined || this.#closing !== undefined) return true;
    let at = 0;
    while (at < bytes.length) {
      this.#batch ??= this.#free.pop() ?? Buffer.allocUnsafe(batchBytes);
      const take = Math.min(bytes.length - at, this.#batch.length - this.#batchLength);
      this.#batch.set(bytes.subarray(at, at + take), this.#batchLength);
      this.#batchLength += take;
      at += take;
      if (this.#batchLength === this.#batch.length) this.#flush();
    }
    if (this.#batchLength > 0 && this.#flushTimer === undefined) {
      this.#flushTimer = setTimeout(() => {
        this.#flushTimer = undefined;
        this.#flush();
      }, lingerMs);
    }
    return !this.needsDrain;
  }

  /** Hands the current batch to the thread pool. */
  #flush(): void {
    const batch = this.#batch;
    const length = this.#batchLength;
    if (batch === undefined || length === 0 || this.#error !== undefined) return;
    this.#batch = undefined;
    this.#batchLength = 0;
    const position = this.#offset;
    this.#offset += length;
    this.#inFlight += 1;
    this.#writeAt(batch, 0, length, position);
  }

  /** Writes `batch[from, to)` at `position`, continuing after a short write. */
  #writeAt(batch: Buffer, from: number, to: number, position: number): void {
    fs.write(this.#fd, batch, from, to - from, position, (error, written) => {
      if (error === null && written > 0 && from + written < to) {
        this.#writeAt(batch, from + written, to, position + written);
        return;
      }
      if (error !== null) this.#error ??= error;
      else if (written === 0) this.#error ??= new Error('the spill file took no bytes');
      this.#inFlight -= 1;
      if (this.#free.length < maxBatchesInFlight) this.#free.push(batch);
      if (!this.needsDrain || this.#inFlight === 0) {
        const waiters = this.#waiters;
        this.#waiters = [];
        for (const resolve of waiters) resolve();
      }
    });
  }

  /** Resolves when `append` may be called again (at once when there is room). */
  drain(): Promise<void> {
    if (!this.needsDrain) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** Writes what is left, waits for every batch and closes the file; never rejects. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      if (this.#flushTimer !== undefined) clearTimeout(this.#flushTimer);
      this.#flushTimer = undefined;
      this.#flush();
      while (this.#inFlight > 0) {
        await new Promise<void>((resolve) => this.#waiters.push(resolve));
      }
      this.#free.length = 0;
      await new Promise<void>((resolve) => {
        fs.close(this.#fd, (error) => {
          if (error !== null) this.#error ??= error;
          resolve();
        });
      });
    })();
    return this.#closing;
  }
}
