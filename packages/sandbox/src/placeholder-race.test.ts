import { spawn } from 'node:child_process';
import { once } from 'node:events';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSandbox } from './sandbox.js';

// Root making the auto-run placeholders in a user's workspace gave each to the workspace's owner
// with chown by name. A command running meanwhile (a background one, in a sandbox made before
// the folder was) renamed the new folder away and put a link to a root-owned file in its place:
// the chown followed the link, and the user owned /etc/shadow's like. Real bubblewrap; the racer
// is a real process of another user, as a sandboxed command of theirs would be.

const isRoot = process.getuid?.() === 0;

describe.runIf(isRoot)('the placeholders root makes in a user’s workspace', () => {
  beforeEach(skipWithout('bwrap'));
  let base = '';
  afterEach(() => {
    if (base !== '') fs.rmSync(base, { recursive: true, force: true });
  });

  it('never give a linked file to the workspace’s owner, however the folder is swapped', async () => {
    base = fs.realpathSync(fs.mkdtempSync('/var/tmp/agent-placeholder-race-'));
    fs.chmodSync(base, 0o755);
    const workspace = path.join(base, 'ws');
    fs.mkdirSync(workspace);
    fs.chownSync(workspace, 65534, 65534);
    const target = path.join(base, 'root-only');
    fs.writeFileSync(target, 'secret\n', { mode: 0o600 });
    const stop = path.join(base, 'stop');
    // Renames each placeholder away as soon as it appears and links the target in its place.
    const racer = spawn(
      'setpriv',
      [
        '--reuid=65534',
        '--regid=65534',
        '--clear-groups',
        // The system's: one under /root (pyenv) is not the other user's to run.
        '/usr/bin/python3',
        '-c',
        `import os, sys
ws, target, stop = sys.argv[1:4]
n = 0
print('racing', flush=True)
while not os.path.exists(stop):
    for name in ('.zed', '.idea', '.claude', '.vscode', '.devcontainer'):
        try:
            os.rename(ws + '/' + name, ws + '/moved-%d' % n)
            n += 1
            os.symlink(target, ws + '/' + name)
        except OSError:
            pass`,
        workspace,
        target,
        stop,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const exited = once(racer, 'exit');
    await Promise.race([once(racer.stdout, 'data'), exited]);
    expect(racer.exitCode).toBeNull();
    let made = 0;
    try {
      for (let round = 0; round < 100 && fs.statSync(target).uid === 0; round++) {
        const sandbox = createSandbox({
          mode: 'required',
          writableRoots: [workspace],
          onWarning: () => undefined,
        });
        await sandbox.wrap({ file: 'true', args: [], cwd: workspace, env: {} }).catch(() => {});
        await sandbox.close();
        for (const name of fs.readdirSync(workspace)) {
          const entry = path.join(workspace, name);
          if (name.startsWith('moved-')) made++;
          if (
            name.startsWith('moved-') ||
            fs.lstatSync(entry, { throwIfNoEntry: false })?.isSymbolicLink() === true
          )
            fs.rmSync(entry, { recursive: true, force: true });
        }
      }
    } finally {
      fs.writeFileSync(stop, '');
      await exited;
    }
    // The race was run: folders were made and swapped.
    expect(made).toBeGreaterThan(0);
    const stat = fs.statSync(target);
    expect([stat.uid, stat.gid]).toEqual([0, 0]);
  }, 120_000);
});
