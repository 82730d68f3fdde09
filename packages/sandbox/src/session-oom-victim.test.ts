import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSandbox } from './sandbox.js';
import type { HostCommandExit, SandboxHost } from './sandbox-host.js';

// In the session sandbox the memory cgroup's out-of-memory killer ended the exec helper (Node,
// the largest resident process: /tmp pages are nobody's RSS) rather than the command that filled
// /tmp — every time, per the kernel's trace of CI's run106 — and every command of the session
// died with it. Each command now starts with oom_score_adj 1000 (raising one's own needs no
// privilege; lowering the helper's would need CAP_SYS_RESOURCE, which nothing in the sandbox has).

const maxMemoryBytes = 64 * 1024 * 1024;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function run(
  host: SandboxHost,
  workspace: string,
  script: string,
): Promise<{ exit: HostCommandExit; stdout: string }> {
  const names = ['out', 'err'].map((name) =>
    path.join(host.pipeDirectory, `oom-${process.pid}-${Math.random()}-${name}`),
  );
  execFileSync('mkfifo', names);
  const ends = names.map((name) => ({
    read: fs.openSync(name, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK),
    write: fs.openSync(name, fs.constants.O_WRONLY),
  }));
  const [stdout, stderr] = names as [string, string];
  try {
    const command = await host.run({
      file: '/bin/bash',
      args: ['-c', script],
      cwd: workspace,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      stdout,
      stderr,
    });
    for (const end of ends) fs.closeSync(end.write);
    const exit = await command.exited;
    await command.end(1_000);
    const chunks: Buffer[] = [];
    const buffer = Buffer.alloc(65_536);
    for (;;) {
      let count = 0;
      try {
        count = fs.readSync(ends[0]?.read ?? -1, buffer);
      } catch {
        break;
      }
      if (count <= 0) break;
      chunks.push(Buffer.from(buffer.subarray(0, count)));
    }
    return { exit, stdout: Buffer.concat(chunks).toString('utf8') };
  } finally {
    for (const end of ends) fs.closeSync(end.read);
    for (const name of names) fs.rmSync(name, { force: true });
  }
}

describe('the session sandbox under the out-of-memory killer', () => {
  beforeEach(skipWithout('bwrap'));

  it('each command is its first choice, the helper is not', async () => {
    const workspace = fs.mkdtempSync(path.join('/var/tmp', 'agent-oom-victim-'));
    const sandbox = createSandbox({
      mode: 'required',
      writableRoots: [workspace],
      maxMemoryBytes,
      onWarning: () => undefined,
    });
    const host = sandbox.createHost?.();
    if (host === undefined) throw new Error('no session sandbox');
    cleanups.push(() => fs.rmSync(workspace, { recursive: true, force: true }));
    cleanups.push(() => sandbox.close());
    cleanups.push(() => host.close());
    // The command, a process it starts, and the helper (the command's parent).
    const scores = await run(
      host,
      workspace,
      'cat /proc/self/oom_score_adj; echo "$(cat /proc/$$/oom_score_adj) helper $(cat /proc/$PPID/oom_score_adj)"',
    );
    expect(scores.exit).toMatchObject({ type: 'exit', code: 0 });
    const [child, shell, , helper] = scores.stdout.trim().split(/\s+/);
    expect({ child, shell }).toEqual({ child: '1000', shell: '1000' });
    expect(helper).not.toBe('1000');
  });
});
