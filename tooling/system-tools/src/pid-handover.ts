// Test-only: hand a pid that was just freed to a new process group on purpose, as a busy machine
// does by chance (pid_max 32,768 wraps within minutes) — to show a group kill that reaches it.
import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';

/** Whether this process may hand pids out (root: writing ns_last_pid needs CAP_SYS_ADMIN). */
export const canHandOverPids = process.getuid?.() === 0;

/**
 * A detached `sleep 60` (a group leader, as a sandbox's bwrap is) started at pid `wanted`, or
 * undefined when other processes kept taking it. Root only ({@link canHandOverPids}).
 */
export function spawnAtPid(wanted: number): ChildProcess | undefined {
  // Other processes fork too: a few tries.
  for (let attempt = 0; attempt < 50; attempt++) {
    writeFileSync('/proc/sys/kernel/ns_last_pid', String(wanted - 1));
    const child = spawn('sleep', ['60'], { detached: true, stdio: 'ignore' });
    if (child.pid === wanted) return child;
    child.kill('SIGKILL');
  }
  return undefined;
}

/** The signal `child` ends by (null for an exit with a code), whether it has ended already or not. */
export function exitSignal(child: ChildProcess): Promise<NodeJS.Signals | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.signalCode);
    else child.once('exit', (_code, signal) => resolve(signal));
  });
}
