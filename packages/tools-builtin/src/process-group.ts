import type { ChildProcess, spawn as nodeSpawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import { killGroupButLeader, type SandboxLimitEvents } from '@agent/sandbox';
import { endEarly } from './end-early.js';
import { underOrphanReaper } from './orphan-reaper.js';
import type { OutputBuffer } from './output-buffer.js';
import { type OutputPipe, openOutputPipe } from './output-pipe.js';

/** The process operations bash uses; inject to observe or replace them. Defaults to Node's. */
export interface ProcessOperations {
  /** `child_process.spawn`. */
  spawn: typeof nodeSpawn;
  /** `process.kill`; a negative pid signals a whole process group. */
  kill: (pid: number, signal?: NodeJS.Signals | 0) => boolean;
}

/** How a process run ended. */
export interface ProcessOutcome {
  /** Exit code; `128 + n` when killed by signal n; `null` when it never started. */
  exitCode: number | null;
  /** The signal that ended the shell, if any. */
  signal: NodeJS.Signals | null;
  /** True when our timeout ended it. */
  timedOut: boolean;
  /** True when an abort ended it. */
  aborted: boolean;
  /** Set when the process could not be started. */
  spawnError?: Error;
  /** Set when the long-lived sandbox the command ran in died under it (the command died with it): why. */
  lost?: string;
  /** What the sandbox's cgroup counted while it ran (out-of-memory kills, refused forks), when one bounded it. */
  limitEvents?: SandboxLimitEvents;
  /**
   * Set when the long-lived sandbox it ran in is replaced before the next command (a process of it
   * was killed for memory): what commands wrote to its /tmp and /dev/shm is gone.
   */
  sandboxReplaced?: true;
}

/** Options of {@link startProcessGroup}. */
export interface StartProcessGroupOptions {
  shell: string;
  command: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  process: ProcessOperations;
  stdout: OutputBuffer;
  stderr: OutputBuffer;
  /** Time limit in ms; none when undefined. */
  timeoutMs?: number;
  /** Wait in ms between SIGTERM and SIGKILL. */
  killGraceMs: number;
  signal?: AbortSignal;
  /** Called after each chunk of output. */
  onData?: () => void;
  /** A marker put in the environment so escaped descendants (`setsid`) can be found and killed. */
  marker: string;
  /**
   * Start the shell under the orphan reaper (orphan-reaper.ts) where it can run: what leaves the
   * group and clears its environment (`env -i setsid …`) is ended with the call. For commands
   * outside any sandbox; ignored with `wrapped`.
   */
  reapOrphans?: boolean;
  /** Spawn this instead of `shell -c command` (the command wrapped in an OS sandbox). */
  wrapped?: {
    file: string;
    args: readonly string[];
    env: NodeJS.ProcessEnv;
    /** Called once it is over: removes its cgroup, says which limit it ran into. */
    finish?: () => Promise<SandboxLimitEvents>;
  };
}

/** A running process group. */
export interface ProcessGroupHandle {
  readonly pid: number | undefined;
  /** Resolves once the shell exited and its output is drained (or given up on). */
  readonly done: Promise<ProcessOutcome>;
  /** Ends the whole group: SIGTERM, then SIGKILL after the grace period. */
  kill(reason: 'timeout' | 'abort' | 'request'): Promise<void>;
}

/** The handle of a run that never started (or whose sandbox was lost as it started): done at once. */
export function unstartedHandle(
  reason: { spawnError: Error } | { lost: string },
): ProcessGroupHandle {
  return {
    pid: undefined,
    done: Promise.resolve({
      exitCode: null,
      signal: null,
      timedOut: false,
      aborted: false,
      ...reason,
    }),
    kill: async () => {},
  };
}

/** After the shell exits, how long output may stay silent before stdio is closed by force. */
const drainIdleMs = 200;
/** After the shell exits, the longest we keep reading pipes a descendant still writes to. */
const drainMaxMs = 2_000;

/** Environment variable carrying the run marker. */
export const markerVariable = 'AGENT_TOOLS_BUILTIN_RUN';

/**
 * True when some process of group `pid` still runs. A zombie does not count where `/proc` tells
 * (Linux): orphans are reaped by init, which in containers may take a second or more, and
 * waiting for that would stretch every kill to the full grace period.
 */
export function groupAlive(ops: ProcessOperations, pid: number): boolean {
  try {
    ops.kill(-pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  return procGroupRunning(pid) ?? true;
}

const procMounted = fs.existsSync('/proc/self/stat');

/**
 * Whether `-pid` may still name the group of a command whose leader (`pid`) has exited. The
 * kernel gives a pid out again only once no process bears it as its group id either, so a process
 * at `pid` now is a newer one, and a group `pid` is that one's (a pid_max of 32,768 wraps in
 * seconds on a busy machine): signalling `-pid` would end another command — run105's `echo
 * alive`, SIGKILLed at the end of another call's grace period. Without `/proc`, undecided: true.
 */
function groupOutlivesLeader(pid: number): boolean {
  if (!procMounted) return true;
  try {
    fs.statSync(`/proc/${pid}`);
    return false;
  } catch {
    return true;
  }
}

/** Linux: whether `pid` exists and is not a zombie (false without `/proc`). */
function processRunning(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/** Linux: whether a non-zombie process of group `pgid` exists; undefined without `/proc`. */
function procGroupRunning(pgid: number): boolean | undefined {
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return undefined;
  }
  for (const entry of entries) {
    if (entry.charCodeAt(0) < 48 || entry.charCodeAt(0) > 57) continue;
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${entry}/stat`, 'latin1');
    } catch {
      continue; // Gone meanwhile.
    }
    // `pid (comm) state ppid pgrp …`; comm may contain spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ', 3);
    if (Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') return true;
  }
  return false;
}

/**
 * Linux only, best effort: SIGKILLs processes whose environment carries `marker` — descendants
 * that left the group with `setsid` or `setpgid`. A no-op where `/proc` is missing.
 */
export function killMarkedProcesses(ops: ProcessOperations, marker: string): number[] {
  return killProcessesWhoseEnvironmentHas(ops, `${markerVariable}=${marker}\0`);
}

/** Runs whose marked escapees the next sweep ends, per process operations, and its promise. */
const pendingSweeps = new Map<
  ProcessOperations,
  { markers: Set<string>; done: Promise<number[]> }
>();

/**
 * {@link killMarkedProcesses} for many runs in one pass over `/proc`: each run that ended joins
 * the next sweep (on the next turn of the event loop) and waits for it — one read of every
 * process's environment however many commands ended together (a load of 500 commands must not
 * read `/proc` 500 times). Resolves with the pids killed.
 */
export function sweepMarkedProcesses(ops: ProcessOperations, marker: string): Promise<number[]> {
  let pending = pendingSweeps.get(ops);
  if (pending === undefined) {
    const markers = new Set<string>();
    const done = new Promise<number[]>((resolve) =>
      setImmediate(() => {
        pendingSweeps.delete(ops);
        resolve(killProcessesWhoseMarkerIsIn(ops, markers));
      }),
    );
    pending = { markers, done };
    pendingSweeps.set(ops, pending);
  }
  pending.markers.add(marker);
  return pending.done;
}

function killProcessesWhoseMarkerIsIn(
  ops: ProcessOperations,
  markers: ReadonlySet<string>,
): number[] {
  const killed: number[] = [];
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return killed;
  }
  const name = `${markerVariable}=`;
  for (const entry of entries) {
    if (!/^[0-9]+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    try {
      const environ = fs.readFileSync(`/proc/${entry}/environ`, 'latin1');
      const at = environ.indexOf(name);
      if (at === -1 || (at > 0 && environ[at - 1] !== '\0')) continue;
      const end = environ.indexOf('\0', at);
      if (markers.has(environ.slice(at + name.length, end === -1 ? undefined : end))) {
        ops.kill(pid, 'SIGKILL');
        killed.push(pid);
      }
    } catch {
      // Gone, or not ours to read.
    }
  }
  return killed;
}

function killProcessesWhoseEnvironmentHas(ops: ProcessOperations, needle: string): number[] {
  const killed: number[] = [];
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return killed;
  }
  for (const entry of entries) {
    if (!/^[0-9]+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    try {
      const environ = fs.readFileSync(`/proc/${entry}/environ`, 'latin1');
      if (environ.includes(needle)) {
        ops.kill(pid, 'SIGKILL');
        killed.push(pid);
      }
    } catch {
      // Gone, or not ours to read.
    }
  }
  return killed;
}

/** Every run marker of this process starts with this (then `.` and the run's own id). */
const processMarker = randomUUID();

/** A new run marker: unique to the run, and recognisably this process's. */
export function newRunMarker(): string {
  return `${processMarker}.${randomUUID()}`;
}

/**
 * Commands still running (group leader → process operations, led by the orphan reaper, whether
 * the leader exited), for the exit.
 */
const running = new Map<
  number,
  { ops: ProcessOperations; reaped: boolean; leaderExited: boolean }
>();
let exitOps: ProcessOperations | undefined;

/**
 * When this process exits (a second Ctrl-C, `process.exit`, the end of a script, an uncaught
 * error), what its commands left running is killed: the groups of commands still running, and
 * every process carrying one of its run markers — `setsid` daemons of finished commands too. A
 * command does not outlive the process that ran it. Synchronous, as 'exit' handlers must be; a
 * process killed by a signal runs no handler (the CLI turns SIGHUP and SIGTERM into an exit).
 */
function endCommandsAtExit(): void {
  for (const [pid, { ops, reaped, leaderExited }] of running) {
    // Its group is over, and the pid another process's: nothing of this command to end there.
    if (leaderExited && !groupOutlivesLeader(pid)) continue;
    // The reaper stays: with its command killed it ends what left the group, then exits.
    if (reaped && killGroupButLeader(pid, ops.kill)) continue;
    try {
      ops.kill(-pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  running.clear();
  if (exitOps !== undefined) {
    killProcessesWhoseEnvironmentHas(exitOps, `${markerVariable}=${processMarker}.`);
  }
}

function trackRunning(pid: number, ops: ProcessOperations, reaped: boolean): void {
  if (exitOps === undefined) process.once('exit', endCommandsAtExit);
  exitOps = ops;
  running.set(pid, { ops, reaped, leaderExited: false });
}

/** Resolves after the event loop's next poll phase, so output already in a pipe has been read. */
function pollTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** A wait that keeps the event loop alive: a pending call must not let a script's process exit under it. */
function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Reads a command's two output streams into their buffers, and knows when they went quiet. */
export interface OutputReader {
  /**
   * After the command's first process exited: waits for end-of-file on both streams, giving up
   * (and destroying them) on pipes a descendant still holds, once they were quiet for a while.
   */
  drain(): Promise<void>;
  /** Stops reading now. */
  destroy(): void;
}

/**
 * Starts reading `pipes` (and any Node streams) into `stdout` / `stderr`, pausing a pipe while
 * its buffer's spill file catches up.
 */
export function readOutput(options: {
  stdout: OutputBuffer;
  stderr: OutputBuffer;
  pipes: readonly [OutputPipe, OutputPipe] | undefined;
  streams?: readonly [NodeJS.ReadableStream | null, NodeJS.ReadableStream | null];
  onData?: (() => void) | undefined;
}): OutputReader {
  const { pipes } = options;
  // When output last arrived, and how many pipes are paused while a spill file catches up (a
  // paused pipe is not quiet: its data is waiting for us, not missing).
  let lastData = Date.now();
  let paused = 0;
  /** Takes a chunk; false when the reader must pause until `resume` is called. */
  const take = (buffer: OutputBuffer, chunk: Buffer, resume: () => void): boolean => {
    lastData = Date.now();
    const ok = buffer.write(chunk);
    if (!ok) {
      paused += 1;
      void buffer.drain().then(() => {
        paused -= 1;
        lastData = Date.now();
        resume();
      });
    }
    options.onData?.();
    return ok;
  };
  const pipe = (stream: NodeJS.ReadableStream | null | undefined, buffer: OutputBuffer) => {
    if (stream === null || stream === undefined) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const resume = () => stream.resume();
      stream.on('data', (chunk: Buffer) => {
        if (!take(buffer, chunk, resume)) stream.pause();
      });
      stream.on('end', resolve);
      stream.on('close', resolve);
      stream.on('error', resolve);
    });
  };
  const read = (outputPipe: OutputPipe, buffer: OutputBuffer) =>
    outputPipe.read((chunk) => take(buffer, chunk, () => outputPipe.resume()));
  // An injected spawn may still give streams of its own: read those as well.
  const stdoutDone = Promise.all([
    pipe(options.streams?.[0], options.stdout),
    pipes === undefined ? undefined : read(pipes[0], options.stdout),
  ]);
  const stderrDone = Promise.all([
    pipe(options.streams?.[1], options.stderr),
    pipes === undefined ? undefined : read(pipes[1], options.stderr),
  ]);
  const destroy = () => {
    const streams = options.streams ?? [];
    for (const stream of streams)
      (stream as NodeJS.ReadableStream & { destroy?: () => void })?.destroy?.();
    for (const outputPipe of pipes ?? []) outputPipe.destroy();
  };
  return {
    destroy,
    async drain() {
      // Everything the command wrote is in the pipes now, but may not have been read yet: the exit is
      // often seen first (a busy loop reaps every exited child at once, before the pipes' turn).
      // Wait for end-of-file; give up only on pipes a descendant still holds (`cmd &`, `setsid`),
      // and only after they were quiet for a while *after the exit*, across a full event-loop turn
      // (timers run before the poll phase that reads pipes), and never while paused for a spill.
      let streamsClosed = false;
      const streams = Promise.all([stdoutDone, stderrDone]).then(() => {
        streamsClosed = true;
      });
      const exitedAt = Date.now();
      const drainDeadline = exitedAt + drainMaxMs;
      while (!streamsClosed) {
        const now = Date.now();
        const quietFor = paused > 0 ? 0 : now - Math.max(lastData, exitedAt);
        const overdue = now >= drainDeadline && paused === 0;
        if (quietFor >= drainIdleMs || overdue) {
          const seen = lastData;
          await pollTurn();
          if (streamsClosed) break;
          if (!overdue && (lastData !== seen || paused > 0)) continue;
          break;
        }
        await Promise.race([
          streams,
          sleep(Math.max(1, Math.min(drainIdleMs - quietFor, drainDeadline - now))),
        ]);
      }
      // A descendant still holds the pipes (`cmd &`, `setsid`): stop reading them.
      if (!streamsClosed) destroy();
    },
  };
}

/** The outcome of a run from how its first process exited; every signal as a shell reports it: 128 + n. */
export function outcomeOf(
  exit: { code: number | null; signal: NodeJS.Signals | null; error?: Error },
  flags: { timedOut: boolean; aborted: boolean },
): ProcessOutcome {
  const signalNumber = exit.signal === null ? undefined : os.constants.signals[exit.signal];
  const outcome: ProcessOutcome = {
    exitCode: exit.code ?? (signalNumber === undefined ? null : 128 + signalNumber),
    signal: exit.signal,
    timedOut: flags.timedOut,
    aborted: flags.aborted,
  };
  if (exit.error !== undefined) outcome.spawnError = exit.error;
  return outcome;
}

/** Both output pipes, or neither (then Node's `'pipe'` stdio). */
function openPipes(): [OutputPipe, OutputPipe] | undefined {
  const outPipe = openOutputPipe();
  const errPipe = outPipe === undefined ? undefined : openOutputPipe();
  if (outPipe !== undefined && errPipe === undefined) {
    // Both or neither: close the one pipe we got, both ends.
    outPipe.closeWriteEnd();
    outPipe.destroy();
  }
  return outPipe !== undefined && errPipe !== undefined ? [outPipe, errPipe] : undefined;
}

/**
 * Starts `shell -c command` in its own process group (`detached: true`) with stdin closed,
 * pipes stdout/stderr (real pipes where possible, see output-pipe.ts) into bounded buffers (pausing the pipe while a spill file catches up),
 * and kills the whole group on timeout, abort or request. Stdio is destroyed after the shell
 * exits and output goes quiet, so a descendant holding the pipes cannot hang the call.
 */
export function startProcessGroup(options: StartProcessGroupOptions): ProcessGroupHandle {
  const ops = options.process;
  let child: ChildProcess;
  let reaped = false;
  // Real pipes read into reused buffers where FIFOs can be made (see output-pipe.ts); else Node's.
  const pipes = openPipes();
  const closeWriteEnds = () => {
    for (const pipe of pipes ?? []) pipe.closeWriteEnd();
  };
  try {
    const direct = { file: options.shell, args: ['-c', options.command] };
    const { file, args } =
      options.wrapped ??
      (options.reapOrphans === true ? underOrphanReaper(direct.file, direct.args) : undefined) ??
      direct;
    reaped = file !== direct.file && options.wrapped === undefined;
    child = ops.spawn(file, [...args], {
      cwd: options.cwd,
      env: { ...(options.wrapped?.env ?? options.env), [markerVariable]: options.marker },
      detached: true,
      stdio:
        pipes === undefined
          ? ['ignore', 'pipe', 'pipe']
          : ['ignore', pipes[0].writeFd, pipes[1].writeFd],
    });
  } catch (error) {
    closeWriteEnds();
    for (const pipe of pipes ?? []) pipe.destroy();
    const spawnError = error instanceof Error ? error : new Error(String(error));
    // Nothing entered its cgroup: removed now rather than at the next sweep.
    void options.wrapped?.finish?.();
    return unstartedHandle({ spawnError });
  }
  // The child has its copies: the readers see end-of-file once it and its descendants close them.
  closeWriteEnds();
  const pid = child.pid;
  if (pid !== undefined) trackRunning(pid, ops, reaped);
  const reader = readOutput({
    stdout: options.stdout,
    stderr: options.stderr,
    pipes,
    streams: [child.stdout, child.stderr],
    onData: options.onData,
  });

  let leaderExited = false;
  /** Whether `-pid` is still this command's group (see {@link groupOutlivesLeader}) with a process running. */
  const ownGroupAlive = (): boolean =>
    pid !== undefined && (!leaderExited || groupOutlivesLeader(pid)) && groupAlive(ops, pid);
  let killing: Promise<void> | undefined;
  const killGroup = (): Promise<void> => {
    killing ??= (async () => {
      if (pid === undefined) return;
      if (!leaderExited || groupOutlivesLeader(pid)) {
        try {
          ops.kill(-pid, 'SIGTERM');
        } catch {
          // Already gone.
        }
      }
      const deadline = Date.now() + options.killGraceMs;
      while (ownGroupAlive() && Date.now() < deadline) await sleep(25);
      if (ownGroupAlive()) {
        try {
          ops.kill(-pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
      await endMarkedProcesses();
    })();
    return killing;
  };
  /** SIGKILLs the marked escapees and waits (briefly: delivery is asynchronous) until they are gone. */
  const endMarkedProcesses = async (): Promise<void> => {
    const escaped = await sweepMarkedProcesses(ops, options.marker);
    const escapedDeadline = Date.now() + 1_000;
    while (escaped.some(processRunning) && Date.now() < escapedDeadline) await sleep(10);
  };

  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>(
    (resolve) => {
      child.once('exit', (code, signal) => {
        // Reaped: from now on its pid may be given to another process.
        leaderExited = true;
        const entry = pid === undefined ? undefined : running.get(pid);
        if (entry !== undefined) entry.leaderExited = true;
        resolve({ code, signal });
      });
      child.once('error', (error) => resolve({ code: null, signal: null, error }));
    },
  );

  const early = endEarly(options, () => void killGroup());

  const done = (async (): Promise<ProcessOutcome> => {
    const exit = await exited;
    early.clearTimer();
    await reader.drain();
    // Background jobs left in the group would outlive the call; end them.
    if (killing !== undefined || ownGroupAlive()) await killGroup();
    // What left the group (`setsid daemon &`) is found by its marker: the call is not over until
    // it is gone — outside the sandbox as in it (a sandbox's pid namespace ends with its first
    // process, but the kernel tears it down after the sandbox has already reported the exit).
    // Outside, one that also cleared its environment (`env -i setsid …`) is ended by the orphan
    // reaper before it exits (where perl runs; else it is not found: README).
    else await endMarkedProcesses();
    early.stopListening();
    if (pid !== undefined) running.delete(pid);
    await Promise.all([options.stdout.close(), options.stderr.close()]);
    // Its cgroup goes with it, whatever is left there killed; read before, its counters.
    const limitEvents = await options.wrapped?.finish?.();
    return {
      ...outcomeOf(exit, early),
      ...(limitEvents === undefined ? {} : { limitEvents }),
    };
  })();

  return {
    pid,
    done,
    kill: async (_reason) => {
      await killGroup();
    },
  };
}
