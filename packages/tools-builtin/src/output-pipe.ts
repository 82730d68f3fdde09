import { execFile, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { credentialFreeEnvironment } from '@agent/core';
import { abandonedDirectories } from '@agent/sandbox';

/**
 * Pipes for a child's stdout and stderr that are cheap to read in bulk.
 *
 * Node gives a child's `'pipe'` stdio as a socket pair, read into a new 64 KiB buffer per read.
 * For a command printing a gigabyte that is ~16,000 allocations (dozens of full garbage
 * collections) and the kernel's socket path, which costs far more than a pipe's: measured here,
 * reading 1 GB took ~2 s of Node's CPU through `'pipe'` and ~0.9 s through a real pipe read into
 * one reused buffer. Node cannot make a pipe, but it can open a FIFO: FIFOs are made in batches
 * by `mkfifo` in a private directory (0700), each opened at both ends and unlinked at once (the
 * pipe lives on without a name), the write end given to the child, the read end read through a
 * `net.Socket` with `onread` into one buffer shared by all. Where FIFOs cannot be made (no
 * `mkfifo`, Windows), `openOutputPipe` returns undefined and the caller uses `'pipe'`.
 */
export interface OutputPipe {
  /** The write end, for the child's stdio; close it (`closeWriteEnd`) once the child is spawned. */
  readonly writeFd: number;
  /** Closes our copy of the write end, so the reader sees end-of-file when the child's copies close. */
  closeWriteEnd(): void;
  /**
   * Starts reading: `onChunk` gets views of a buffer shared by every pipe (copy what you keep
   * before returning: the next read, of any pipe, overwrites it); returning
   * false pauses reading until `resume()`. Resolves at end-of-file, on an error, or on `destroy()`.
   */
  read(onChunk: (bytes: Buffer) => boolean): Promise<void>;
  resume(): void;
  /** Stops reading and closes the read end (a descendant still holds the write end). */
  destroy(): void;
}

/** FIFOs made per `mkfifo` call. */
const batchSize = 128;
/** Below this many, more are made in the background. */
const lowWater = 16;
/** Bytes per read: a Linux pipe holds 64 KiB. */
const readBytes = 64 * 1024;
/**
 * One read buffer for every pipe of the process: each read is handed to its `onChunk`, which
 * copies what it keeps, before the event loop does the next read into it (reads and callbacks
 * take turns on the one thread).
 */
let sharedBuffer: Buffer | undefined;

/** Our FIFO directories are named `agent-bash-fifo-<pid>-<random>`. */
const directoryPrefix = 'agent-bash-fifo-';

function makeDirectory(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `${directoryPrefix}${process.pid}-`));
  // Search and create, never list: where a sandbox's writable root holds the temporary directory
  // (the workspace is /tmp), a command there listed the FIFOs made ahead for later commands and
  // wrote into their output. Root inside has no capability to list it anyway.
  fs.chmodSync(dir, 0o300);
  // FIFOs never taken are removed with the directory when the process exits.
  process.once('exit', () => {
    try {
      fs.chmodSync(dir, 0o700);
      fs.rmSync(dir, { recursive: true, force: true });
    } catch {
      // Best effort.
    }
  });
  // A process killed by a signal runs no exit handler: the first of its successors cleans up.
  void sweepAbandonedFifoDirectories(os.tmpdir());
  return dir;
}

/**
 * Removes the FIFO directories in `tmp` left by processes that no longer run (killed by a signal,
 * so their exit handler never ran): only directories named for a dead pid, owned by this user, and
 * only the FIFOs in them — a directory holding anything else is left. Returns the directories
 * removed. Best effort: a process of another pid namespace sharing `tmp` looks dead from here; it
 * then falls back to Node's pipes.
 */
export async function sweepAbandonedFifoDirectories(tmp: string): Promise<string[]> {
  const removed: string[] = [];
  let found: string[];
  try {
    found = await abandonedDirectories(tmp, (entry) =>
      entry.startsWith(directoryPrefix)
        ? Number(/^(\d+)-/.exec(entry.slice(directoryPrefix.length))?.[1])
        : undefined,
    );
  } catch {
    return removed;
  }
  for (const dir of found) {
    try {
      // Unlistable while its process ran (makeDirectory).
      await fs.promises.chmod(dir, 0o700);
      for (const name of await fs.promises.readdir(dir)) {
        const file = path.join(dir, name);
        if ((await fs.promises.lstat(file)).isFIFO()) await fs.promises.unlink(file);
      }
      await fs.promises.rmdir(dir);
      removed.push(dir);
    } catch {
      // Gone meanwhile, or holds something that is not ours to remove.
    }
  }
  return removed;
}

/**
 * The system's `mkfifo`, never looked up on PATH: this process runs it outside any sandbox at
 * every bash call, and PATH may name a folder of the workspace (an activated `.venv/bin`, the
 * `node_modules/.bin` that `npx` puts first) where a sandboxed command can write a `mkfifo` of
 * its own. Undefined where there is none (the caller then uses `'pipe'`).
 */
const systemMkfifo = ['/usr/bin/mkfifo', '/bin/mkfifo'].find((candidate) => {
  try {
    fs.accessSync(candidate, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
});

/** FIFOs made ahead of need in one directory, `batchSize` per `mkfifo` run. */
class FifoPool {
  readonly #directory: () => string;
  readonly #ready: string[] = [];
  #refilling = false;
  unavailable = process.platform === 'win32' || systemMkfifo === undefined;

  constructor(directory: () => string) {
    this.#directory = directory;
  }

  /**
   * Names no one can guess: a sandbox's pipe directory is bound into it, and a FIFO made there
   * ahead of need could be opened by a command that knew its name (`p0`, `p1`…) — a background
   * one wrote into every later command's output. The directory cannot be listed from inside.
   */
  #names(count: number): string[] {
    const dir = this.#directory();
    const random = randomBytes(16 * count).toString('hex');
    return Array.from({ length: count }, (_, index) =>
      path.join(dir, `p${random.slice(index * 32, index * 32 + 32)}`),
    );
  }

  #refillSync(): void {
    if (systemMkfifo === undefined) {
      this.unavailable = true;
      return;
    }
    try {
      const names = this.#names(batchSize);
      const made = spawnSync(systemMkfifo, ['-m', '600', ...names], {
        env: credentialFreeEnvironment(process.env),
        stdio: 'ignore',
      });
      if (made.status !== 0) {
        this.unavailable = true;
        return;
      }
      this.#ready.push(...names);
    } catch {
      this.unavailable = true;
    }
  }

  #refillInBackground(): void {
    if (this.#refilling || this.unavailable || systemMkfifo === undefined) return;
    this.#refilling = true;
    let names: string[];
    try {
      names = this.#names(batchSize);
    } catch {
      this.#refilling = false;
      this.unavailable = true;
      return;
    }
    execFile(
      systemMkfifo,
      ['-m', '600', ...names],
      { env: credentialFreeEnvironment(process.env) },
      (error) => {
        this.#refilling = false;
        if (error === null) this.#ready.push(...names);
      },
    );
  }

  take(): string | undefined {
    if (this.unavailable) return undefined;
    if (this.#ready.length === 0) this.#refillSync();
    const name = this.#ready.shift();
    if (this.#ready.length < lowWater) this.#refillInBackground();
    return name;
  }
}

let defaultDirectory: string | undefined;
const defaultPool = new FifoPool(() => (defaultDirectory ??= makeDirectory()));
const pools = new Map<string, FifoPool>();

/** Opens both ends of a FIFO from `pool` (read end non-blocking); undefined when it cannot. */
function openFifo(pool: FifoPool): { name: string; readFd: number; writeFd: number } | undefined {
  const name = pool.take();
  if (name === undefined) return undefined;
  let readFd: number | undefined;
  let writeFd: number | undefined;
  try {
    // Read end first and non-blocking (it does not wait for a writer); then the write end, which
    // a reader lets open at once. The write end stays blocking: the child shares it.
    readFd = fs.openSync(name, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
    writeFd = fs.openSync(name, fs.constants.O_WRONLY);
  } catch {
    if (readFd !== undefined) fs.closeSync(readFd);
    if (writeFd !== undefined) fs.closeSync(writeFd);
    unlinkQuietly(name);
    return undefined;
  }
  return { name, readFd, writeFd };
}

function unlinkQuietly(name: string): void {
  try {
    fs.unlinkSync(name);
  } catch {
    // Already gone.
  }
}

/** A pipe for one output stream of a child, or undefined where FIFOs cannot be used. */
export function openOutputPipe(): OutputPipe | undefined {
  const fifo = openFifo(defaultPool);
  if (fifo === undefined) return undefined;
  // Nameless at once: the pipe lives on in its descriptors.
  unlinkQuietly(fifo.name);
  return pipeOf(fifo.readFd, fifo.writeFd);
}

/** An {@link OutputPipe} that keeps its name until `unlink()`: another process opens it by name. */
export interface NamedOutputPipe extends OutputPipe {
  /** The FIFO's path. */
  readonly name: string;
  /** Removes the name (the pipe lives on in its descriptors). */
  unlink(): void;
}

/**
 * A pipe made in `directory` (one the caller owns; FIFOs are made there in batches) whose name
 * another process — a sandbox's exec helper — opens for writing; undefined where it cannot be made.
 */
export function openNamedOutputPipe(directory: string): NamedOutputPipe | undefined {
  let pool = pools.get(directory);
  if (pool === undefined) {
    pool = new FifoPool(() => directory);
    pools.set(directory, pool);
  }
  const fifo = openFifo(pool);
  if (fifo === undefined) return undefined;
  return {
    ...pipeOf(fifo.readFd, fifo.writeFd),
    name: fifo.name,
    unlink: () => unlinkQuietly(fifo.name),
  };
}

/** Forgets the FIFO pool of `directory` (it was removed). */
export function forgetPipeDirectory(directory: string): void {
  pools.delete(directory);
}

function pipeOf(readFd: number, writeFd: number): OutputPipe {
  let writeOpen = true;
  let socket: net.Socket | undefined;
  let readFdOwned = true;
  return {
    writeFd,
    closeWriteEnd() {
      if (!writeOpen) return;
      writeOpen = false;
      fs.closeSync(writeFd);
    },
    read(onChunk) {
      sharedBuffer ??= Buffer.allocUnsafe(readBytes);
      const buffer = sharedBuffer;
      return new Promise<void>((resolve) => {
        readFdOwned = false;
        const reader = new net.Socket({
          fd: readFd,
          readable: true,
          writable: false,
          onread: {
            buffer,
            callback: (bytes: number, into: Uint8Array) =>
              onChunk(Buffer.from(into.buffer, into.byteOffset, bytes)),
          },
        });
        socket = reader;
        reader.on('end', resolve);
        reader.on('close', resolve);
        reader.on('error', resolve);
      });
    },
    resume() {
      socket?.resume();
    },
    destroy() {
      if (socket !== undefined) socket.destroy();
      else if (readFdOwned) {
        readFdOwned = false;
        fs.closeSync(readFd);
      }
    },
  };
}
