import * as fs from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { SearchFileResult } from './search-engines.js';
import {
  SearchControl,
  type SearchWalkRequest,
  type SearchWorkerData,
  type SearchWorkerReply,
  type SearchWorkerRequest,
  searchWorkerMarker,
} from './search-worker.js';

/**
 * The worker module next to this one: `search-worker.js` in dist, `search-worker.ts` when running
 * from source (Node strips its types); undefined when neither is there (e.g. this code bundled
 * into another package's single file), and the engine then searches in its own thread.
 */
export function defaultSearchWorkerUrl(): URL | undefined {
  for (const name of ['./search-worker.js', './search-worker.ts']) {
    const url = new URL(name, import.meta.url);
    if (url.protocol === 'file:' && fs.existsSync(url)) return url;
  }
  return undefined;
}

/** Files per batch the walker sends. */
const batchFiles = 128;
/** Batches the walker may be ahead of the engine's consumer. */
const batchesAhead = 32;

interface Slot {
  worker: Worker;
  /** Batches sent and not answered. */
  pending: number;
  ready: boolean;
  failed: boolean;
  /** Busy walking: searches sent to it wait until the walk is done. */
  walking: boolean;
}

interface Deferred {
  files: string[];
  resolve: (found: SearchFileResult[]) => void;
  reject: (error: Error) => void;
}

interface Waiter {
  slot: Slot;
  resolve: (found: SearchFileResult[]) => void;
  reject: (error: Error) => void;
}

/**
 * Worker threads for one search: one walks the tree synchronously (as the engine's walk would),
 * the others (and the walker, once done) search batches of files with synchronous reads; results
 * come back in walk order. Per-file open/read/close through libuv's thread pool, and a walk awaiting
 * each directory, cost more than the search itself. A failed worker's batches are searched by the
 * engine itself; if the walker fails, {@link walkFailed} says so and {@link lastWalked} where it got.
 */
export class SearchPool {
  readonly size: number;
  /** True once a worker is ready, false if all failed first. */
  readonly ready: Promise<boolean>;
  /** Whether the walker failed before the end of its walk. */
  walkFailed = false;
  /** The last file the walker sent. */
  lastWalked: string | undefined;
  readonly #slots: Slot[] = [];
  readonly #waiters = new Map<number, Waiter>();
  readonly #deferred: Deferred[] = [];
  readonly #control: Int32Array;
  #nextId = 0;
  #closed = false;
  #closing: Promise<void> | undefined;
  /** Called on walker messages and failures. */
  #onWalk: ((reply: SearchWorkerReply | Error) => void) | undefined;

  constructor(url: URL, size: number, data: Omit<SearchWorkerData, 'marker' | 'control'>) {
    const control = new SharedArrayBuffer(8);
    this.#control = new Int32Array(control);
    this.size = size;
    let markReady: (ready: boolean) => void = () => {};
    this.ready = new Promise((resolve) => {
      markReady = resolve;
    });
    const workerData: SearchWorkerData = { ...data, marker: searchWorkerMarker, control };
    for (let index = 0; index < size; index++) {
      const worker = new Worker(url, { workerData, stdout: false, stderr: false });
      const slot: Slot = { worker, pending: 0, ready: false, failed: false, walking: false };
      this.#slots.push(slot);
      const fail = (error: Error) => {
        if (slot.failed) return;
        slot.failed = true;
        for (const [id, waiter] of this.#waiters) {
          if (waiter.slot !== slot) continue;
          this.#waiters.delete(id);
          waiter.reject(error);
        }
        if (slot.walking) {
          slot.walking = false;
          this.#onWalk?.(error);
        }
        if (this.#slots.every((other) => other.failed)) markReady(false);
        this.#dispatch();
      };
      worker.on('message', (reply: SearchWorkerReply) => {
        if (reply.type === 'ready') {
          slot.ready = true;
          markReady(true);
          this.#dispatch();
        } else if (reply.type === 'found') {
          const waiter = this.#waiters.get(reply.id);
          if (waiter === undefined) return;
          this.#waiters.delete(reply.id);
          slot.pending--;
          waiter.resolve(reply.found);
        } else {
          if (reply.type === 'walked') slot.walking = false;
          this.#onWalk?.(reply);
          this.#dispatch();
        }
      });
      worker.on('error', fail);
      worker.on('exit', (code) => fail(new Error(`Search worker exited (code ${code})`)));
    }
  }

  /** Searches `files` on the least busy worker; the files with matches, in order. */
  run(files: string[]): Promise<SearchFileResult[]> {
    if (this.#closed) return Promise.reject(new Error('Search workers closed'));
    return new Promise((resolve, reject) => {
      this.#deferred.push({ files, resolve, reject });
      this.#dispatch();
    });
  }

  /**
   * Sends waiting batches to ready workers that are not walking (a walker waits for its batches
   * to be taken, so a search queued behind its walk could wait for ever).
   */
  #dispatch(): void {
    while (this.#deferred.length > 0) {
      let slot: Slot | undefined;
      for (const candidate of this.#slots) {
        if (candidate.failed || !candidate.ready || candidate.walking) continue;
        if (slot === undefined || candidate.pending < slot.pending) slot = candidate;
      }
      if (slot === undefined) {
        if (this.#slots.some((candidate) => !candidate.failed && !candidate.walking)) return;
        // No worker left to take them: the engine searches them itself.
        for (const batch of this.#deferred.splice(0))
          batch.reject(new Error('No search worker available'));
        return;
      }
      const batch = this.#deferred.shift() as Deferred;
      const id = this.#nextId++;
      slot.pending++;
      this.#waiters.set(id, { slot, resolve: batch.resolve, reject: batch.reject });
      slot.worker.postMessage({
        type: 'search',
        id,
        files: batch.files,
      } satisfies SearchWorkerRequest);
    }
  }

  /**
   * Walks on a ready worker and searches the files in batches as they come: yields each batch's
   * files with matches, in walk order. `fallback` searches a batch no worker could.
   */
  async *search(
    walk: SearchWalkRequest,
    fallback: (files: string[]) => Promise<SearchFileResult[]>,
  ): AsyncGenerator<SearchFileResult[]> {
    const walker = this.#slots.find((slot) => slot.ready && !slot.failed);
    if (walker === undefined || this.#closed) {
      this.walkFailed = true;
      return;
    }
    const units: Promise<SearchFileResult[]>[] = [];
    let done = false;
    let wake: (() => void) | undefined;
    this.#onWalk = (reply) => {
      if (reply instanceof Error) {
        this.walkFailed = true;
        done = true;
      } else if (reply.type === 'files') {
        this.lastWalked = reply.files.at(-1) ?? this.lastWalked;
        units.push(
          reply.found === undefined
            ? this.run(reply.files).catch(() => fallback(reply.files))
            : Promise.resolve(reply.found),
        );
      } else if (reply.type === 'walked') {
        done = true;
      }
      wake?.();
    };
    walker.walking = true;
    walker.worker.postMessage({
      type: 'walk',
      batchFiles,
      ahead: batchesAhead,
      // Alone, the walker searches each batch itself before sending it.
      search: this.#slots.every((slot) => slot === walker || slot.failed),
      ...walk,
    } satisfies SearchWorkerRequest);
    try {
      for (;;) {
        const unit = units.shift();
        if (unit === undefined) {
          if (done || this.#closed) return;
          await new Promise<void>((resolve) => {
            wake = resolve;
          });
          wake = undefined;
          continue;
        }
        const found = await unit;
        Atomics.add(this.#control, SearchControl.consumed, 1);
        Atomics.notify(this.#control, SearchControl.consumed);
        yield found;
      }
    } finally {
      this.#onWalk = undefined;
    }
  }

  /** Tells the workers to stop at the next file (their batches answer with what they found). */
  stop(): void {
    Atomics.store(this.#control, SearchControl.stop, 1);
    Atomics.notify(this.#control, SearchControl.consumed);
  }

  /**
   * Stops and terminates the workers (a worker busy in a file is not waited for); unanswered
   * batches resolve empty. Every call returns the same promise.
   */
  close(): Promise<void> {
    if (this.#closing !== undefined) return this.#closing;
    this.#closed = true;
    this.stop();
    for (const waiter of this.#waiters.values()) waiter.resolve([]);
    this.#waiters.clear();
    for (const batch of this.#deferred.splice(0)) batch.resolve([]);
    this.#onWalk?.({ type: 'walked' });
    this.#closing = Promise.all(this.#slots.map((slot) => slot.worker.terminate())).then(() => {});
    return this.#closing;
  }
}
