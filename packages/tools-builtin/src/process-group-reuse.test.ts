import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { canHandOverPids, spawnAtPid } from '@agent/tooling-system-tools';
import { afterEach, describe, expect, it } from 'vitest';
import { OutputBuffer } from './output-buffer.js';
import { newRunMarker, startProcessGroup } from './process-group.js';
import { makeTempDir } from './test-helpers.js';

// run105: the `echo alive` after a fork bomb came back SIGKILLed. A call whose leader had exited
// signalled `-pid` until its grace period ended; once the group emptied, the kernel gave that pid
// to a new process (pid_max 32,768 wraps in seconds under CI's load), whose own group — another
// command's sandbox — got the SIGKILL. Here the pid is handed over on purpose: root writes
// /proc/sys/kernel/ns_last_pid (only root can).

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

function buffer(dir: string, name: string): OutputBuffer {
  return new OutputBuffer({ headBytes: 4096, tailBytes: 4096, spillDir: dir, name });
}

/** Resolves once `/proc/<pid>` is gone: the leader exited and Node reaped it. */
async function reaped(pid: number): Promise<void> {
  const until = Date.now() + 20_000;
  while (fs.existsSync(`/proc/${pid}`) && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  expect(fs.existsSync(`/proc/${pid}`)).toBe(false);
}

describe('a group kill after its leader exited', () => {
  it.skipIf(!canHandOverPids)(
    'an abort while the output drains never reaches a new group given the old pid (root: ns_last_pid)',
    async () => {
      const dir = makeTempDir('group-reuse-');
      cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
      const release = path.join(dir, 'release');
      cleanups.push(() => fs.writeFileSync(release, ''));
      // The leader exits at once; a writer that left its group keeps the output busy, so the call
      // is still draining (its group empty, its pid free) when the abort comes.
      const writer = `$| = 1; until (-e $ARGV[0]) { print "x\n"; select(undef, undef, undef, 0.02) }`;
      const controller = new AbortController();
      let onOutput: () => void = () => {};
      const output = new Promise<void>((resolve) => {
        onOutput = resolve;
      });
      const handle = startProcessGroup({
        shell: '/bin/bash',
        command: `setsid perl -e '${writer}' ${release} & exit 0`,
        cwd: dir,
        env: { PATH: process.env.PATH },
        process: { spawn, kill: process.kill.bind(process) },
        stdout: buffer(dir, 'out'),
        stderr: buffer(dir, 'err'),
        killGraceMs: 5_000,
        marker: newRunMarker(),
        signal: controller.signal,
        onData: () => onOutput(),
      });
      const leader = handle.pid;
      if (leader === undefined) throw new Error('the command did not start');
      await output;
      await reaped(leader);
      const other = spawnAtPid(leader);
      if (other === undefined) throw new Error(`pid ${leader} could not be handed out again`);
      cleanups.push(() => other.kill('SIGKILL'));
      const otherExit = new Promise<NodeJS.Signals | null>((resolve) =>
        other.once('exit', (_code, signal) => resolve(signal)),
      );
      controller.abort();
      const outcome = await handle.done;
      expect(outcome.aborted).toBe(true);
      // The old code signalled `-pid`: the new group's leader died of it.
      expect(other.exitCode).toBeNull();
      expect(other.signalCode).toBeNull();
      other.kill('SIGTERM');
      expect(await otherExit).toBe('SIGTERM');
    },
    60_000,
  );
});
