// A workspace the user may not enter or list (`--cwd /root` as yourself, another user's 0700
// folder, a folder chmod 311): before, each of its settings files, .mcp.json and AGENTS.md was
// said unreadable ("in a trusted folder, so that … every tool asks first"), and then the session
// ran with tools that could read nothing there. Now the start says once what the folder is and
// what to do, and exits 1 — `agent trust` too, which recorded trust in a folder it could not read.
// Permissions hold for a user other than root only: the runs are as nobody.
import { chmod, chown, mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { anyUserDirectory } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, runCli, writeScript } from '../testing/test-support.js';

const nobody = 65534;
const cleanups: (() => void)[] = [];
beforeAll(() => assertBuilt());
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

describe('a workspace this user may not enter or list', () => {
  it.each([
    ['0700, another user’s', 0o700, 'cannot be entered'],
    ['0311, enterable but not listable', 0o311, 'cannot be listed'],
  ])(
    '%s: one line at the start, exit 1, nothing recorded',
    async (_name, mode, what) => {
      if (process.getuid?.() !== 0) return expect(process.getuid?.()).not.toBe(0);
      const dir = anyUserDirectory('agent-workspace-access-');
      cleanups.push(() => dir.dispose());
      const home = join(dir.path, 'home');
      await mkdir(home);
      await chown(home, nobody, nobody);
      const script = await writeScript(dir.path, [{ text: 'answered' }]);
      await chmod(script, 0o644);
      // Root's folder, with a project's files in it that nobody cannot read.
      const workspace = join(dir.path, 'theirs');
      await mkdir(join(workspace, '.agent'), { recursive: true });
      await chmod(workspace, mode);
      const env = cleanEnv({ AGENT_HOME: home, HOME: home });
      const expected = `agent: The workspace ${workspace} ${what} by this user (permission denied): the tools could not work in it. Check its permissions (ls -ld '${workspace}'), or start in a folder of yours (--cwd <dir>)`;

      const run = await runCli(['--scripted', script, '--cwd', workspace, '-p', 'hi'], {
        env,
        cwd: dir.path,
        uid: nobody,
      });
      expect(run.stderr.trim()).toBe(expected);
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');

      const trusted = await runCli(['trust', '--cwd', workspace], {
        env,
        cwd: dir.path,
        uid: nobody,
      });
      expect(trusted.stderr.trim()).toBe(expected);
      expect(trusted.code).toBe(1);
      // No trust store, no session, no journal: nothing was written for it (Node's compile cache may be).
      expect((await readdir(home)).filter((name) => name !== 'cache')).toEqual([]);
    },
    60_000,
  );

  it('control: the same folder opened to others is a workspace', async () => {
    if (process.getuid?.() !== 0) return expect(process.getuid?.()).not.toBe(0);
    const dir = anyUserDirectory('agent-workspace-access-');
    cleanups.push(() => dir.dispose());
    const home = join(dir.path, 'home');
    await mkdir(home);
    await chown(home, nobody, nobody);
    const script = await writeScript(dir.path, [{ text: 'answered' }]);
    await chmod(script, 0o644);
    const workspace = join(dir.path, 'theirs');
    await mkdir(workspace);
    await chmod(workspace, 0o755);
    const run = await runCli(['--scripted', script, '--cwd', workspace, '-p', 'hi'], {
      env: cleanEnv({ AGENT_HOME: home, HOME: home }),
      cwd: dir.path,
      uid: nobody,
    });
    expect(run.stdout).toBe('answered\n');
    expect(run.code).toBe(0);
  }, 60_000);
});
