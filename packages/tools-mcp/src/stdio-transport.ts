import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { credentialFreeEnvironment } from '@agent/core';
import {
  createSandbox,
  killGroupButLeader,
  type Sandbox,
  type SandboxMode,
  type SandboxOptions,
} from '@agent/sandbox';
import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { groupLauncher } from './stdio-launcher.js';

/** Options of {@link StdioProcessTransport}. */
export interface StdioProcessTransportOptions {
  /** Executable to run (no shell). */
  command: string;
  args?: readonly string[];
  /**
   * Added as given to a minimal inherited environment (HOME, PATH, …), or to `process.env` with
   * `inheritEnv`: the way to give one server a credential.
   */
  env?: Record<string, string>;
  /**
   * Pass `process.env` to the server instead of the SDK's safe subset [false], without the
   * variables that hold credentials (`credentialFreeEnvironment` of `@agent/core`).
   */
  inheritEnv?: boolean;
  /** Names of the host's variables the server gets too, credentials or not (exact names) [none]. */
  passEnv?: readonly string[];
  cwd?: string;
  /** Receives the server's stderr as it arrives (it is always captured for error messages). */
  onStderr?: (text: string) => void;
  /** How long `close()` waits after closing stdin, and again after SIGTERM, before escalating, in ms [2000]. */
  closeGraceMs?: number;
  /** Run the server in this OS sandbox (or one made from a mode or options) [none]. */
  sandbox?: Sandbox | SandboxMode | Partial<SandboxOptions>;
  /**
   * Largest message (one line of stdout) accepted, in bytes [256 MiB]. A longer one ends the
   * connection with an error naming this limit (the call fails; the next call reconnects). Also
   * the most bytes left waiting to be written to a server that stopped reading its input.
   */
  maxMessageBytes?: number;
  /**
   * Start the server in a process group of its own (POSIX) [true]: closing signals the whole
   * group, grandchildren included, and neither a Ctrl-C in the host's terminal nor the terminal
   * itself reaches the server. On Linux the group stays in the host's session, so the server
   * shares the host's scheduling autogroup (a new session is an autogroup of its own, which made
   * calls 1.2–1.8× the raw SDK's wall time under load): the server is started through `perl`,
   * which sets the group, lets go of the controlling terminal and execs it (same pid). Without
   * `perl` (or on other systems) the server gets a new session instead (`setsid`). With false the
   * server is a plain child, as the SDK's own transport starts it.
   */
  processGroup?: boolean;
}

/** Default of `maxMessageBytes`: far above the SDK reader's 10 MiB, which lost big results. */
export const defaultMaxMessageBytes = 256 * 1024 * 1024;

/**
 * Most messages waiting to be written to a server whose input is full; past it the server is
 * given up as one that stopped reading. A client has at most a few hundred requests and answers
 * in flight; a server flooding it with requests it never reads the answers of has more.
 */
const maxWaitingMessages = 10_000;

/**
 * Splits stdout into lines without copying what was read again for each chunk (the SDK's
 * reader concatenates its whole buffer per chunk: quadratic for a message of many megabytes).
 */
class LineReader {
  #chunks: Buffer[] = [];
  #size = 0;
  readonly #max: number;

  constructor(max: number) {
    this.#max = max;
  }

  /** Adds a chunk; returns the complete lines it finished (without their newline). */
  push(chunk: Buffer): Buffer[] {
    const lines: Buffer[] = [];
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf(10, start);
      if (newline === -1) break;
      const piece = chunk.subarray(start, newline);
      if (this.#size + piece.length > this.#max) throw this.#tooLong(this.#size + piece.length);
      lines.push(this.#chunks.length === 0 ? piece : Buffer.concat([...this.#chunks, piece]));
      this.#chunks = [];
      this.#size = 0;
      start = newline + 1;
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      if (this.#size + rest.length > this.#max) throw this.#tooLong(this.#size + rest.length);
      this.#chunks.push(rest);
      this.#size += rest.length;
    }
    return lines;
  }

  clear(): void {
    this.#chunks = [];
    this.#size = 0;
  }

  #tooLong(size: number): Error {
    this.clear();
    return new Error(
      `The MCP server sent a message over the ${this.#max}-byte limit (${size} bytes read so far); raise maxMessageBytes to accept it`,
    );
  }
}

/** The sandbox a server runs in: none unless configured; writable roots default to its cwd. */
function sandboxFor(
  sandbox: StdioProcessTransportOptions['sandbox'],
  cwd: string,
): Sandbox | undefined {
  if (sandbox === undefined) return undefined;
  if (typeof sandbox === 'object' && 'wrap' in sandbox) return sandbox;
  const options = typeof sandbox === 'string' ? { mode: sandbox } : sandbox;
  const made = createSandbox({ ...options, writableRoots: options.writableRoots ?? [cwd] });
  return made.status.active ? made : undefined;
}

/** How the server process ended. */
export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

const stderrTailChars = 4096;
/** After `exit`, how long to wait for the pipes to drain before reporting the close, in ms. */
const drainAfterExitMs = 200;

const isPosix = process.platform !== 'win32';
const liveChildren = new Set<ChildProcess>();
/** Children started in a process group of their own (the group is signalled, not just the child). */
const groupLeaders = new WeakSet<ChildProcess>();
/** Children that are the reaping launcher (the server is its child): see @agent/sandbox's subreaperSource. */
const reapingLaunchers = new WeakSet<ChildProcess>();
let exitHookInstalled = false;

/**
 * Kills what is left of the servers when the host process exits without closing them (a signal
 * during start-up while servers are still connecting, an uncaught error, `process.exit`). SIGKILL:
 * an exit handler cannot wait, and a server that ignored SIGTERM would be left to init.
 */
function trackChild(child: ChildProcess): void {
  liveChildren.add(child);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const live of liveChildren) {
      if (!groupIsOurs(live)) continue;
      // The launcher stays: with its server killed it ends what left the group, then exits.
      if (reapingLaunchers.has(live) && live.pid !== undefined && killGroupButLeader(live.pid))
        continue;
      signalTree(live, 'SIGKILL');
    }
  });
}

/**
 * Whether `-pid` may still name the group the child leads. Until Node reaps it (and sets
 * `exitCode` / `signalCode`, before any 'exit' listener runs) the pid is ours. After, a process at
 * `/proc/<pid>` is a newer one — the kernel hands a pid out again only once no process bears it
 * as its group id either — so our group is empty and group `pid` is that one's (pid_max 32,768
 * wraps within minutes on a busy machine; Node reaps every exited child before it runs the
 * first one's listeners). Without `/proc`, undecided: ours. A few lines like tools-builtin's
 * process-group.ts: packages share code only through @agent/core, which must not import node:fs.
 */
function groupIsOurs(child: ChildProcess): boolean {
  const reaped = child.exitCode !== null || child.signalCode !== null;
  return !reaped || !existsSync(`/proc/${child.pid}`);
}

/** Signals the child's whole process group when it has one (servers started via npx/uvx have grandchildren). */
function signalTree(child: ChildProcess, signal: NodeJS.Signals): void {
  const pid = child.pid;
  if (pid === undefined) return;
  try {
    if (groupLeaders.has(child)) {
      if (groupIsOurs(child)) process.kill(-pid, signal);
    } else child.kill(signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}

/**
 * MCP client transport over a child process's stdin/stdout, like the SDK's
 * `StdioClientTransport`, but it keeps what a useful error message needs (exit code, signal, the
 * tail of stderr), runs the server in its own process group so `close()` leaves no grandchildren,
 * and reports the close promptly even when a grandchild keeps the pipes open.
 */
export class StdioProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly #options: StdioProcessTransportOptions;
  readonly #reader: LineReader;
  /** Why the transport closed itself: a message over the limit. */
  #overflow: Error | undefined;
  #child: ChildProcess | undefined;
  #starting = false;
  #sandbox: Sandbox | undefined;
  /** A sandbox this transport made (from a mode or options), closed with it. */
  #ownsSandbox = false;
  #exit: ProcessExit | undefined;
  #exited: Promise<void> | undefined;
  #closeReported = false;
  #closing: Promise<void> | undefined;
  #stderrTail = '';
  /** Resolves once the sandbox's cgroup of the process is removed (what it counted read). */
  #finished: Promise<void> = Promise.resolve();
  #limitNote: string | undefined;
  /** Resolves when stdin drains (or closes), for every send that found the pipe full. */
  #drained: Promise<void> | undefined;
  /** Messages written since the pipe was last full: each holds memory until it drains. */
  #waitingMessages = 0;

  constructor(options: StdioProcessTransportOptions) {
    this.#options = options;
    this.#reader = new LineReader(options.maxMessageBytes ?? defaultMaxMessageBytes);
  }

  /** Set when the transport closed itself because a message was over `maxMessageBytes`. */
  get overflow(): Error | undefined {
    return this.#overflow;
  }

  /** The server's process id, once started. */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** How the process ended, once it has. */
  get exit(): ProcessExit | undefined {
    return this.#exit;
  }

  /** The last few KiB of the server's stderr. */
  get stderrTail(): string {
    return this.#stderrTail;
  }

  /**
   * The sandbox's note when the process ran into its memory or process limit (killed for
   * memory, forks refused), known once the close is reported; else undefined.
   */
  get limitNote(): string | undefined {
    return this.#limitNote;
  }

  /** Spawns the server (in its sandbox, if it has one); rejects when it cannot be started. */
  async start(): Promise<void> {
    if (this.#child !== undefined || this.#starting)
      throw new Error('StdioProcessTransport already started');
    this.#starting = true;
    const options = this.#options;
    const pass = options.passEnv ?? [];
    const env = {
      ...credentialFreeEnvironment(
        options.inheritEnv === true ? process.env : getDefaultEnvironment(),
        { pass },
      ),
      ...passedEnv(pass),
      ...options.env,
    };
    const cwd = options.cwd ?? process.cwd();
    this.#sandbox = sandboxFor(options.sandbox, cwd);
    this.#ownsSandbox = this.#sandbox !== undefined && this.#sandbox !== options.sandbox;
    const command =
      this.#sandbox === undefined
        ? { file: options.command, args: options.args ?? [], env }
        : await this.#sandbox.wrap({
            file: options.command,
            args: options.args ?? [],
            cwd,
            env,
          });
    const grouped = isPosix && options.processGroup !== false;
    const launcher = grouped
      ? // Reaping outside the sandbox only: a sandboxed server's pid namespace ends with it.
        groupLauncher(command.file, command.args, command.env, cwd, this.#sandbox === undefined)
      : undefined;
    return new Promise((resolve, reject) => {
      const child = spawn(launcher?.file ?? command.file, launcher?.args ?? [...command.args], {
        env: command.env,
        ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
        stdio: ['pipe', 'pipe', 'pipe'],
        // A session of its own only where the launcher cannot be used.
        detached: grouped && launcher === undefined,
        windowsHide: true,
        shell: false,
      });
      this.#child = child;
      if (grouped) groupLeaders.add(child);
      if (launcher?.reaps === true) reapingLaunchers.add(child);
      // Tracked at once, not at 'spawn': an exit before that event must not leave it behind.
      if (child.pid !== undefined) trackChild(child);
      let spawned = false;
      this.#exited = new Promise((resolveExit) => {
        child.once('exit', (code, signal) => {
          this.#exit = { code, signal };
          liveChildren.delete(child);
          // Grandchildren left in the group would otherwise outlive the server.
          signalTree(child, 'SIGTERM');
          // Its cgroup goes with it; what it counted says whether the sandbox's limit killed it.
          const sandbox = this.#sandbox;
          const finish = 'finish' in command ? command.finish : undefined;
          if (finish !== undefined) {
            this.#finished = finish().then((events) => {
              this.#limitNote = sandbox?.explainLimits(events);
            });
          }
          resolveExit();
          // stderr may still hold the last words of the server: give the pipes a moment to drain.
          setTimeout(
            () => void this.#finished.then(() => this.#reportClose()),
            drainAfterExitMs,
          ).unref();
        });
      });
      child.once('close', () => void this.#finished.then(() => this.#reportClose()));
      child.once('error', (error) => {
        if (!spawned) {
          liveChildren.delete(child);
          reject(error);
          this.#exit ??= { code: null, signal: null };
          this.#reportClose();
        } else {
          this.onerror?.(error);
        }
      });
      child.once('spawn', () => {
        spawned = true;
        resolve();
      });
      child.stdin?.on('error', (error) => {
        // EPIPE after the server died is reported through the close, not as a separate error.
        if (this.#exit === undefined) this.onerror?.(error);
      });
      child.stdout?.on('data', (chunk: Buffer) => this.#onStdout(chunk));
      child.stdout?.on('error', (error) => this.onerror?.(error));
      child.stderr?.setEncoding('utf8');
      child.stderr?.on('data', (text: string) => {
        this.#stderrTail = (this.#stderrTail + text).slice(-stderrTailChars);
        options.onStderr?.(text);
      });
    });
  }

  /**
   * Writes one message; resolves once the pipe takes more (every send waiting on one `drain`).
   * Rejects when the server is no longer running, or when it stopped reading its input while
   * more than `maxMessageBytes` already wait to be written: a server that floods us with
   * requests (pings, unknown methods) and never reads the answers would otherwise have them
   * pile up in this process's memory without end.
   */
  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.#child?.stdin;
    if (stdin === undefined || stdin === null || stdin.destroyed || this.#exit !== undefined)
      return Promise.reject(new Error('The MCP server process is not running'));
    const limit = this.#options.maxMessageBytes ?? defaultMaxMessageBytes;
    // Counted as well as bytes: an answer to a ping is ~40 bytes, but a queued write and the
    // request the SDK keeps open until it is sent hold kilobytes — 256 MiB of pings answered to a
    // server that never reads was gigabytes of this process (30 MB a second without end).
    if (stdin.writableNeedDrain) this.#waitingMessages++;
    const over =
      stdin.writableLength > limit
        ? `more than ${limit} bytes wait to be written to it (maxMessageBytes)`
        : this.#waitingMessages > maxWaitingMessages
          ? `more than ${maxWaitingMessages.toLocaleString('en-US')} messages wait to be written to it`
          : undefined;
    if (over !== undefined) {
      // Reported once: the requests that keep coming while it closes are refused quietly.
      if (this.#overflow === undefined) {
        this.#overflow = new Error(`MCP server stopped reading its input: ${over}`);
        this.onerror?.(this.#overflow);
        void this.close();
      }
      return Promise.reject(this.#overflow);
    }
    if (stdin.write(serializeMessage(message))) return Promise.resolve();
    // One listener for all the sends that wait (one each passed Node's 10-listener warning).
    this.#drained ??= new Promise<void>((resolve) => {
      const done = () => {
        stdin.off('drain', done);
        stdin.off('close', done);
        this.#drained = undefined;
        this.#waitingMessages = 0;
        resolve();
      };
      stdin.on('drain', done);
      stdin.on('close', done);
    });
    return this.#drained;
  }

  /**
   * Stops the server as the MCP spec asks: close its stdin, wait, SIGTERM, wait, SIGKILL (the whole
   * process group on POSIX). Resolves once the process has exited. Idempotent.
   */
  close(): Promise<void> {
    this.#closing ??= this.#shutdown().finally(async () => {
      if (this.#ownsSandbox) await this.#sandbox?.close();
    });
    return this.#closing;
  }

  async #shutdown(): Promise<void> {
    const child = this.#child;
    const exited = this.#exited;
    if (child === undefined || exited === undefined) {
      this.#reportClose();
      return;
    }
    if (this.#exit === undefined) {
      const graceMs = this.#options.closeGraceMs ?? 2000;
      child.stdin?.end();
      if (!(await settlesWithin(exited, graceMs))) {
        signalTree(child, 'SIGTERM');
        if (!(await settlesWithin(exited, graceMs))) {
          signalTree(child, 'SIGKILL');
          await exited;
        }
      }
    }
    this.#reader.clear();
    this.#reportClose();
  }

  #onStdout(chunk: Buffer): void {
    let lines: Buffer[];
    try {
      lines = this.#reader.push(chunk);
    } catch (error) {
      this.#overflow = asError(error);
      this.onerror?.(this.#overflow);
      void this.close();
      return;
    }
    for (const line of lines) {
      let message: JSONRPCMessage;
      try {
        message = parseMessage(line);
      } catch (error) {
        // A server that prints logs to stdout: the line is skipped, the stream goes on.
        this.onerror?.(
          new Error(
            `Ignored a line of MCP server stdout that is not JSON-RPC: ${asError(error).message}`,
          ),
        );
        continue;
      }
      this.onmessage?.(message);
    }
  }

  #reportClose(): void {
    if (this.#closeReported) return;
    this.#closeReported = true;
    this.onclose?.();
  }
}

/**
 * One line of stdout as a JSON-RPC message: JSON, an object, `jsonrpc: "2.0"`. The SDK's reader
 * also runs the whole message union through zod here, but the client validates each message
 * again as it dispatches it (and a tool result against CallToolResultSchema), so that parse was
 * a second validation of every message (about 1 µs of a call's CPU).
 */
function parseMessage(line: Buffer): JSONRPCMessage {
  let text = line.toString('utf8');
  if (text.endsWith('\r')) text = text.slice(0, -1);
  const value: unknown = JSON.parse(text);
  if (
    value === null ||
    typeof value !== 'object' ||
    Array.isArray(value) ||
    (value as { jsonrpc?: unknown }).jsonrpc !== '2.0'
  )
    throw new Error('not a JSON-RPC 2.0 message object');
  return value as JSONRPCMessage;
}

function settlesWithin(promise: Promise<void>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    timer.unref();
    void promise.then(() => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/** The host's variables named in `passEnv` that are set. */
function passedEnv(names: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of names) {
    const value = process.env[name];
    if (value !== undefined) out[name] = value;
  }
  return out;
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
