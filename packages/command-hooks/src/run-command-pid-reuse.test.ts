import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { canHandOverPids, spawnAtPid } from '@agent/tooling-system-tools';
import { afterEach, describe, expect, it } from 'vitest';
import { runCommand } from './run-command.js';

// A hook's shell that exits while a descendant that left its group (`setsid … &`) holds the output
// pipes: the close comes later, and the close ended the group with SIGKILL to `-pid` — by then
// the pid could be another process's (pid_max 32,768 wraps within minutes on a busy machine), and
// its group died. Here the pid is handed over on purpose: root writes ns_last_pid (only root can).

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

/** Resolves with the number in `file` once written, then once `/proc/<it>` is gone (reaped). */
async function reapedPidIn(file: string): Promise<number> {
  const until = Date.now() + 20_000;
  let pid = Number.NaN;
  while (Date.now() < until) {
    pid = Number.parseInt(fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '', 10);
    if (Number.isInteger(pid) && !fs.existsSync(`/proc/${pid}`)) return pid;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`no reaped pid in ${file} (read ${pid})`);
}

describe('a hook whose shell exited before its output closed', () => {
  it.skipIf(!canHandOverPids)(
    'the close never signals a new group given the old pid (root: ns_last_pid)',
    async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hook-pid-reuse-'));
      cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
      const release = path.join(dir, 'release');
      cleanups.push(() => fs.writeFileSync(release, ''));
      const pidFile = path.join(dir, 'pid');
      const command = `echo $$ > ${pidFile}; setsid sh -c 'until [ -e ${release} ]; do sleep 0.02; done' & exit 0`;
      const outcome = runCommand(command, '', {
        cwd: dir,
        env: { PATH: process.env.PATH },
        timeoutMs: 60_000,
      });
      const leader = await reapedPidIn(pidFile);
      const other = spawnAtPid(leader);
      if (other === undefined) throw new Error(`pid ${leader} could not be handed out again`);
      cleanups.push(() => other.kill('SIGKILL'));
      const otherExit = new Promise<NodeJS.Signals | null>((resolve) =>
        other.once('exit', (_code, signal) => resolve(signal)),
      );
      // The descendant ends, the pipes close: the close's group kill comes now.
      fs.writeFileSync(release, '');
      expect((await outcome).exitCode).toBe(0);
      // The old code sent SIGKILL to `-pid` before the outcome was given: the new group's leader
      // died of that, not of the SIGTERM sent after it.
      other.kill('SIGTERM');
      expect(await otherExit).toBe('SIGTERM');
    },
    60_000,
  );
});
