import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { canHandOverPids, exitSignal, spawnAtPid } from '@agent/tooling-system-tools';
import { afterEach, describe, expect, it } from 'vitest';
import { type ReplLimitEvents, ReplSession } from './repl-session.js';

// An interpreter's exit handler SIGKILLed `-pid` — after Node had reaped it, when its pid may be
// another process's already (pid_max 32,768 wraps within minutes on a busy machine). Node reaps
// every child that exited before it runs the first one's handlers: two interpreters that exit
// together, and the second one's pid is free while the first one's handler runs. Here that
// handler (its sandbox's cgroup read) hands the pid to a new group on purpose: root writes
// /proc/sys/kernel/ns_last_pid (only root can).

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The state letter of `/proc/<pid>/stat` (`Z`: exited, not reaped), or undefined when gone. */
function state(pid: number): string | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  } catch {
    return undefined;
  }
}

/**
 * Whether `pid` can be reaped: a zombie whose threads are all gone (a thread-group leader shows
 * `Z` while its other threads still exit, and waitpid does not take it until they have).
 */
function reapable(pid: number): boolean {
  try {
    return state(pid) === 'Z' && fs.readdirSync(`/proc/${pid}/task`).length === 1;
  } catch {
    return false;
  }
}

/** Blocks this thread (so Node reaps nothing) until every one of `pids` can be reaped. */
function blockUntilReapable(pids: readonly number[]): void {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  const until = Date.now() + 20_000;
  while (!pids.every(reapable) && Date.now() < until) Atomics.wait(pause, 0, 0, 5);
  expect(pids.map(reapable)).toEqual(pids.map(() => true));
}

describe('interpreters reaped together', () => {
  it.skipIf(!canHandOverPids)(
    "the second one's exit never signals a new group given its pid (root: ns_last_pid)",
    async () => {
      const dir = await mkdtemp(path.join(tmpdir(), 'repl-pid-reuse-'));
      cleanups.push(() => rm(dir, { recursive: true, force: true }));
      const exitNow = path.join(dir, 'exit');
      const pids: number[] = [];
      let other: ChildProcess | undefined;
      let finishes = 0;
      let bothFinished: () => void = () => {};
      const finished = new Promise<void>((resolve) => {
        bothFinished = resolve;
      });
      const noEvents: ReplLimitEvents = { memoryKills: 0, refusedForks: 0 };
      // Session `index`'s cgroup read. In the first exit handler, the other interpreter reaped
      // already: its pid goes to a new group (a `sleep`, as another command's sandbox would be).
      const finishOf = (index: number) => async (): Promise<ReplLimitEvents> => {
        finishes += 1;
        const theOther = pids[1 - index];
        if (finishes === 1 && theOther !== undefined && state(theOther) === undefined)
          other = spawnAtPid(theOther);
        if (finishes === 2) bothFinished();
        return noEvents;
      };
      const sessions = [0, 1].map(
        (index) =>
          new ReplSession({
            language: 'javascript',
            cwd: dir,
            sandbox: { wrap: async (command) => ({ ...command, finish: finishOf(index) }) },
          }),
      );
      for (const session of sessions) cleanups.push(() => session.close());
      // Each interpreter exits once the file is there, and says its pid.
      const cell = `const fs = require('fs'); require('timers').setInterval(() => { if (fs.existsSync(${JSON.stringify(exitNow)})) process.exit(0); }, 5); process.pid`;
      for (const session of sessions) {
        const outcome = await session.run(cell, { timeoutMs: 30_000 });
        pids.push(Number(outcome.value));
      }
      expect(pids.every(Number.isInteger)).toBe(true);
      fs.writeFileSync(exitNow, '');
      blockUntilReapable(pids);
      await finished;
      if (other === undefined) throw new Error(`no pid of ${pids.join(', ')} was handed out again`);
      const handedOver = other;
      cleanups.push(() => void handedOver.kill('SIGKILL'));
      const otherExit = exitSignal(handedOver);
      // The old code's SIGKILL to `-pid` came before the second cgroup read: the new group's
      // leader died of it, not of the SIGTERM sent now.
      handedOver.kill('SIGTERM');
      expect(await otherExit).toBe('SIGTERM');
    },
    60_000,
  );
});
