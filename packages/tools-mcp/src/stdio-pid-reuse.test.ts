import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import { createSandbox, type SandboxLimitEvents } from '@agent/sandbox';
import { canHandOverPids, exitSignal, spawnAtPid } from '@agent/tooling-system-tools';
import { afterEach, describe, expect, it } from 'vitest';
import { StdioProcessTransport } from './stdio-transport.js';
import { makeTempDir } from './test-helpers.js';

// A server's exit listener signals `-pid` (what it left in its group goes with it) — after Node
// reaped it, when its pid may be another process's already (pid_max 32,768 wraps within minutes
// on a busy machine). Node reaps every child that exited before it runs the first one's
// listeners: two servers that exit together, and the second one's pid is free while the first
// one's listener runs. Here that listener (its sandbox's cgroup read) hands the pid to a new
// group on purpose: root writes /proc/sys/kernel/ns_last_pid (only root can).

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

/** Blocks this thread (so Node reaps nothing) until every one of `pids` is a zombie. */
function blockUntilZombies(pids: readonly number[]): void {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  const until = Date.now() + 20_000;
  while (pids.some((pid) => state(pid) !== 'Z') && Date.now() < until) Atomics.wait(pause, 0, 0, 5);
  expect(pids.map(state)).toEqual(pids.map(() => 'Z'));
}

describe('stdio servers reaped together', () => {
  it.skipIf(!canHandOverPids)(
    "the second one's exit never signals a new group given its pid (root: ns_last_pid)",
    async () => {
      const dir = makeTempDir('mcp-pid-reuse-');
      cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
      const exitNow = `${dir}/exit`;
      const pids: number[] = [];
      let other: ChildProcess | undefined;
      let finishes = 0;
      let bothFinished: () => void = () => {};
      const finished = new Promise<void>((resolve) => {
        bothFinished = resolve;
      });
      // Server `index`'s cgroup read. In the first exit listener, the other server reaped
      // already: its pid goes to a new group (a `sleep`, as another command's sandbox would be).
      const finishOf = (index: number) => async (): Promise<SandboxLimitEvents> => {
        finishes += 1;
        const theOther = pids[1 - index];
        if (finishes === 1 && theOther !== undefined && state(theOther) === undefined)
          other = spawnAtPid(theOther);
        if (finishes === 2) bothFinished();
        return { memoryKills: 0, refusedForks: 0 };
      };
      const off = createSandbox({ mode: 'off', writableRoots: [dir] });
      // A single-threaded server (a zombie leader with threads left is not reaped yet).
      const transports = [0, 1].map(
        (index) =>
          new StdioProcessTransport({
            command: 'sh',
            args: ['-c', `until [ -e ${exitNow} ]; do sleep 0.01; done`],
            cwd: dir,
            sandbox: { ...off, wrap: async (command) => ({ ...command, finish: finishOf(index) }) },
          }),
      );
      for (const transport of transports) {
        cleanups.push(() => transport.close());
        await transport.start();
        if (transport.pid === undefined) throw new Error('the server did not start');
        pids.push(transport.pid);
      }
      fs.writeFileSync(exitNow, '');
      blockUntilZombies(pids);
      await finished;
      if (other === undefined) throw new Error(`no pid of ${pids.join(', ')} was handed out again`);
      const handedOver = other;
      cleanups.push(() => void handedOver.kill('SIGKILL'));
      const otherExit = exitSignal(handedOver);
      // The old code's SIGTERM to `-pid` came before the second cgroup read: the new group's
      // leader died of it, not of the SIGUSR1 sent now.
      handedOver.kill('SIGUSR1');
      expect(await otherExit).toBe('SIGUSR1');
    },
    60_000,
  );
});
