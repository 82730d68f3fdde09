import type { ChildProcess, spawn as nodeSpawn } from 'node:child_process';
import * as fs from 'node:fs';
import type { OutputBuffer } from './output-buffer.js';

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
}

/** A running process group. */
export interface ProcessGroupHandle {
  readonly pid: number | undefined;
  /** Resolves once the shell exited and its output is drained (or given up on). */
  readonly done: Promise<ProcessOutcome>;
  /** Ends the whole group: SIGTERM, then SIGKILL after the grace period. */
  kill(reason: 'timeout' | 'abort' | 'request'): Promise<void>;
}

const signalNumbers: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 };
/** After the shell exits, how long output may stay silent before stdio is closed by force. */
const drainIdleMs = 200;
/** After the shell exits, the longest we keep reading pipes a descendant still writes to. */
const drainMaxMs = 2_000;

/** Environment variable carrying the run marker. */
export const markerVariable = 'AGENT_TOOLS_BUILTIN_RUN';

/** True when some process of group `pid` still exists (zombies count until reaped). */
export function groupAlive(ops: ProcessOperations, pid: number): boolean {
  try {
    ops.kill(-pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Linux only, best effort: SIGKILLs processes whose environment carries `marker` — descendants
 * that left the group with `setsid` or `setpgid`. A no-op where `/proc` is missing.
 */
export function killMarkedProcesses(ops: ProcessOperations, marker: string): number {
  let killed = 0;
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return 0;
  }
  const needle = `${markerVariable}=${marker}\0`;
  for (const entry of entries) {
    if (!/^[0-9]+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    try {
      const environ = fs.readFileSync(`/proc/${entry}/environ`, 'latin1');
      if (environ.includes(needle)) {
        ops.kill(pid, 'SIGKILL');
        killed++;
      }
    } catch {
      // Gone, or not ours to read.
    }
  }
  return killed;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref?.());
}

/**
 * Starts `shell -c command` in its own process group (`detached: true`) with stdin closed,
 * pipes stdout/stderr into bounded buffers (pausing the pipe while a spill file catches up),
 * and kills the whole group on timeout, abort or request. Stdio is destroyed after the shell
 * exits and output goes quiet, so a descendant holding the pipes cannot hang the call.
 */
export function startProcessGroup(options: StartProcessGroupOptions): ProcessGroupHandle {
  const ops = options.process;
  let timedOut = false;
  let aborted = false;
  let child: ChildProcess;
  try {
    child = ops.spawn(options.shell, ['-c', options.command], {
      cwd: options.cwd,
      env: { ...options.env, [markerVariable]: options.marker },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (error) {
    const spawnError = error instanceof Error ? error : new Error(String(error));
    return {
      pid: undefined,
      done: Promise.resolve({ exitCode: null, signal: null, timedOut, aborted, spawnError }),
      kill: async () => {},
    };
  }
  const pid = child.pid;
  let lastData = Date.now();
  const pipe = (stream: NodeJS.ReadableStream | null, buffer: OutputBuffer) => {
    if (stream === null) return Promise.resolve();
    return new Promise<void>((resolve) => {
      stream.on('data', (chunk: Buffer) => {
        lastData = Date.now();
        if (!buffer.write(chunk)) {
          stream.pause();
          void buffer.drain().then(() => stream.resume());
        }
        options.onData?.();
      });
      stream.on('end', resolve);
      stream.on('close', resolve);
      stream.on('error', resolve);
    });
  };
  const stdoutDone = pipe(child.stdout, options.stdout);
  const stderrDone = pipe(child.stderr, options.stderr);

  let killing: Promise<void> | undefined;
  const killGroup = (): Promise<void> => {
    killing ??= (async () => {
      if (pid === undefined) return;
      try {
        ops.kill(-pid, 'SIGTERM');
      } catch {
        // Already gone.
      }
      const deadline = Date.now() + options.killGraceMs;
      while (groupAlive(ops, pid) && Date.now() < deadline) await sleep(25);
      if (groupAlive(ops, pid)) {
        try {
          ops.kill(-pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
      killMarkedProcesses(ops, options.marker);
    })();
    return killing;
  };

  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>(
    (resolve) => {
      child.once('exit', (code, signal) => resolve({ code, signal }));
      child.once('error', (error) => resolve({ code: null, signal: null, error }));
    },
  );

  let timer: NodeJS.Timeout | undefined;
  if (options.timeoutMs !== undefined) {
    timer = setTimeout(() => {
      timedOut = true;
      void killGroup();
    }, options.timeoutMs);
  }
  const onAbort = () => {
    aborted = true;
    void killGroup();
  };
  if (options.signal?.aborted) onAbort();
  else options.signal?.addEventListener('abort', onAbort, { once: true });

  const done = (async (): Promise<ProcessOutcome> => {
    const exit = await exited;
    if (timer !== undefined) clearTimeout(timer);
    // Output may still be in the pipes: wait until they close or go quiet.
    let streamsClosed = false;
    const streams = Promise.all([stdoutDone, stderrDone]).then(() => {
      streamsClosed = true;
    });
    const drainDeadline = Date.now() + drainMaxMs;
    while (!streamsClosed) {
      const idle = Date.now() - lastData;
      if (idle >= drainIdleMs || Date.now() >= drainDeadline) break;
      await Promise.race([
        streams,
        sleep(Math.min(drainIdleMs - idle, drainDeadline - Date.now())),
      ]);
    }
    if (!streamsClosed) {
      // A descendant still holds the pipes (`cmd &`, `setsid`): stop reading them.
      child.stdout?.destroy();
      child.stderr?.destroy();
    }
    // Background jobs left in the group would outlive the call; end them.
    if (killing !== undefined || (pid !== undefined && groupAlive(ops, pid))) await killGroup();
    options.signal?.removeEventListener('abort', onAbort);
    await Promise.all([options.stdout.close(), options.stderr.close()]);
    const signalNumber = exit.signal === null ? undefined : signalNumbers[exit.signal];
    const outcome: ProcessOutcome = {
      exitCode: exit.code ?? (signalNumber === undefined ? null : 128 + signalNumber),
      signal: exit.signal,
      timedOut,
      aborted,
    };
    if (exit.error !== undefined) outcome.spawnError = exit.error;
    return outcome;
  })();

  return {
    pid,
    done,
    kill: async (_reason) => {
      await killGroup();
    },
  };
}
