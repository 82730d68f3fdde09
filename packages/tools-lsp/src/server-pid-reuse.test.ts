import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { canHandOverPids, spawnAtPid } from '@agent/tooling-system-tools';
import { afterEach, describe, expect, it } from 'vitest';
import { type ServerLimitEvents, ServerProcess } from './server-process.js';
import { floodServerConfig } from './test-helpers.js';

// A server's exit is reported once its group is gone and its sandbox's cgroup was read — under
// load, a while after Node reaped it. stop() went on to SIGTERM and SIGKILL `-pid` meanwhile, and
// by then the pid could be another process's (pid_max 32,768 wraps within minutes on a busy
// machine): its group got the signals. Here the pid is handed over on purpose: root writes
// /proc/sys/kernel/ns_last_pid (only root can), and the cgroup read is held until the test lets go.

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Resolves once `/proc/<pid>` is gone: the server exited and Node reaped it. */
async function reaped(pid: number): Promise<void> {
  const until = Date.now() + 20_000;
  while (fs.existsSync(`/proc/${pid}`) && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  expect(fs.existsSync(`/proc/${pid}`)).toBe(false);
}

describe('a server reaped before its exit is reported', () => {
  it.skipIf(!canHandOverPids)(
    'stop() never signals a new group given the old pid (root: ns_last_pid)',
    async () => {
      const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'agent-lsp-reuse-')));
      cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
      let releaseFinish: () => void = () => {};
      const finished = new Promise<ServerLimitEvents>((resolve) => {
        releaseFinish = () => resolve({ memoryKills: 0, refusedForks: 0 });
      });
      cleanups.push(() => releaseFinish());
      const server = await ServerProcess.start({
        config: floodServerConfig,
        executable: process.execPath,
        roots: [root],
        env: { ...process.env },
        // The sandbox's cgroup read after the exit, held: the exit is reported late.
        sandbox: { wrap: async (command) => ({ ...command, finish: () => finished }) },
      });
      const graceMs = 100;
      // `shutdown`, `exit`: the server exits at once, its exit not reported until released.
      const stopping = server.stop(graceMs);
      await reaped(server.pid);
      const other = spawnAtPid(server.pid);
      if (other === undefined) throw new Error(`pid ${server.pid} could not be handed out again`);
      cleanups.push(() => void other.kill('SIGKILL'));
      const otherExit = new Promise<NodeJS.Signals | null>((resolve) =>
        other.once('exit', (_code, signal) => resolve(signal)),
      );
      // The old code's SIGTERM came graceMs after `exit`, its SIGKILL graceMs later: nothing may
      // happen for well past both (no event marks that stop() is past them, so a bounded wait).
      const signalled = await Promise.race([
        otherExit,
        new Promise<'untouched'>((resolve) => setTimeout(resolve, 20 * graceMs, 'untouched')),
      ]);
      expect(signalled).toBe('untouched');
      releaseFinish();
      await stopping;
      expect((await server.exited).requested).toBe(true);
      other.kill('SIGTERM');
      expect(await otherExit).toBe('SIGTERM');
    },
    60_000,
  );
});
