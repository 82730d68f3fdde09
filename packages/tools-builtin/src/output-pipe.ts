import { execFile, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';

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

let directory: string | undefined;
const ready: string[] = [];
let serial = 0;
let refilling = false;
let unavailable = process.platform === 'win32';

function fifoNames(count: number): string[] {
  const dir = directory ?? makeDirectory();
  return Array.from({ length: count }, () => path.join(dir, `p${serial++}`));
}

/** Our FIFO directories are named `agent-bash-fifo-<pid>-<random>`. */
const directoryPrefix = 'agent-bash-fifo-';

function makeDirectory(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `${directoryPrefix}${process.pid}-`));
  directory = dir;
  // FIFOs never taken are removed with the directory when the process exits.
  process.once('exit', () => {
    try {
      fs.rmSync(dir, { recursive: true, force: true });
    } catch {
      // Best effort.
    }
  });
  // A process killed by a signal runs no exit handler: the first of its successors cleans up.
  void sweepAbandonedFifoDirectories(os.tmpdir());
  return dir;
}

/** Whether a process with this pid exists (EPERM: it does, as another user's). */
function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
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
  let entries: string[];
  try {
    entries = await fs.promises.readdir(tmp);
  } catch {
    return removed;
  }
  const uid = process.getuid?.();
  for (const entry of entries) {
    if (!entry.startsWith(directoryPrefix)) continue;
    const pid = Number(/^(\d+)-/.exec(entry.slice(directoryPrefix.length))?.[1]);
    if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid || processExists(pid))
      continue;
    const dir = path.join(tmp, entry);
    try {
      const stat = await fs.promises.lstat(dir);
      if (!stat.isDirectory() || (uid !== undefined && stat.uid !== uid)) continue;
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

function refillSync(): void {
  try {
    const names = fifoNames(batchSize);
    const made = spawnSync('mkfifo', ['-m', '600', ...names], { stdio: 'ignore' });
    if (made.status !== 0) {
      unavailable = true;
      return;
    }
    ready.push(...names);
  } catch {
    unavailable = true;
  }
}

function refillInBackground(): void {
  if (refilling || unavailable) return;
  refilling = true;
  let names: string[];
  try {
    names = fifoNames(batchSize);
  } catch {
    refilling = false;
    unavailable = true;
    return;
  }
  execFile('mkfifo', ['-m', '600', ...names], (error) => {
    refilling = false;
    if (error === null) ready.push(...names);
  });
}

function takeFifo(): string | undefined {
  if (unavailable) return undefined;
  if (ready.length === 0) refillSync();
  const name = ready.shift();
  if (ready.length < lowWater) refillInBackground();
  return name;
}

/** A pipe for one output stream of a child, or undefined where FIFOs cannot be used. */
export function openOutputPipe(): OutputPipe | undefined {
  const name = takeFifo();
  if (name === undefined) return undefined;
  let readFd: number | undefined;
  let writeFd: number | undefined;
  try {
    // Read end first and non-blocking (it does not wait for a writer); then the write end, which
    // a reader lets open at once. The write end stays blocking: the child shares it.
    readFd = fs.openSync(name, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
    writeFd = fs.openSync(name, fs.constants.O_WRONLY);
    fs.unlinkSync(name);
  } catch {
    if (readFd !== undefined) fs.closeSync(readFd);
    if (writeFd !== undefined) fs.closeSync(writeFd);
    try {
      fs.unlinkSync(name);
    } catch {
      // Already gone.
    }
    return undefined;
  }
  return pipeOf(readFd, writeFd);
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
