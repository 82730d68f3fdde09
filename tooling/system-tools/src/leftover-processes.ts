import { readFileSync } from 'node:fs';

/**
 * When process `pid` started, in clock ticks since boot (`/proc/<pid>/stat`, field 22); undefined
 * once it is gone or a zombie (dead, only not yet reaped), or without `/proc`.
 */
export function processStartTime(pid: number): number | undefined {
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return undefined;
  }
  // The command name (field 2) may hold spaces and parentheses: fields are counted after its last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const state = fields[0];
  if (state === 'Z' || state === 'X') return undefined;
  const start = Number(fields[19]);
  return Number.isFinite(start) ? start : undefined;
}

/**
 * Processes a test may have to kill when it ends (the daemons a command was expected to take
 * with it), each remembered with its start time: {@link killAll} signals a pid only while it
 * still names the process it was added as.
 *
 * A plain list of pids killed in `afterEach` killed whatever process had the number by then:
 * these machines have `pid_max` 32768, and the sandbox suite's fork bombs, beside the other
 * packages' suites, go through it in seconds. The daemon the test expected gone is gone; its
 * number may by then be another package's vitest worker ("Worker exited unexpectedly", official
 * CI stop 46) or a CLI under test.
 */
export class LeftoverProcesses {
  readonly #entries: { pid: number; start: number }[] = [];

  /** Remembers `pids` as they are now: one already gone is left out (nothing of it to kill). */
  add(...pids: readonly number[]): void {
    for (const pid of pids) {
      const start = processStartTime(pid);
      if (start !== undefined) this.#entries.push({ pid, start });
    }
  }

  /** Signals each remembered process still running as itself; forgets them all. */
  killAll(signal: NodeJS.Signals = 'SIGKILL'): void {
    for (const { pid, start } of this.#entries.splice(0)) signalIfSame(pid, start, signal);
  }
}

/**
 * Signals `pid` only while it is the process that started at `start` ({@link processStartTime});
 * true when it was signalled. A number the kernel gave to a later process is left alone.
 */
export function signalIfSame(pid: number, start: number, signal: NodeJS.Signals): boolean {
  if (processStartTime(pid) !== start) return false;
  try {
    process.kill(pid, signal);
    return true;
  } catch {
    // Ended between the check and the signal.
    return false;
  }
}
