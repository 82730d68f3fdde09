// A home that is a file: `AGENT_HOME` set to one (a path to the settings file instead of its
// folder), a file on its path, a `~/.agent` file another tool left. Before, the start said only
// "Cannot read …/settings.json: ENOTDIR" — a code, naming a file the user never made. Now it says
// which path is a file and what to do, exit 1. And a file that cannot be read is said in words
// with its code ("permission denied (EACCES)"), not by the code alone.
import { chmod, chown, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { anyUserDirectory } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, runCli, tempDir, writeScript } from '../testing/test-support.js';

const cleanups: (() => Promise<void> | void)[] = [];
beforeAll(() => assertBuilt());
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function scratch(): Promise<string> {
  const dir = await tempDir('agent-home-not-a-folder-');
  cleanups.push(dir.dispose);
  return dir.path;
}

function expectOneLine(stderr: string, line: string): void {
  expect(stderr.trim()).toBe(line);
  expect(stderr).not.toContain('ENOTDIR');
}

describe('a home that is a file', () => {
  it('AGENT_HOME naming a file, or a path through one', async () => {
    const dir = await scratch();
    const file = join(dir, 'settings.json');
    await writeFile(file, '{}');
    const script = await writeScript(dir, [{ text: 'answered' }]);
    const itself = await runCli(['--scripted', script, '--cwd', dir, '-p', 'hi'], {
      env: cleanEnv({ AGENT_HOME: file }),
    });
    expect(itself.code).toBe(1);
    expectOneLine(
      itself.stderr,
      `agent: ${file} is a file, not a folder: agent keeps its settings, sessions and trusted folders in ${file}. Move the file away, or point AGENT_HOME at a folder (it is created when missing), or unset it to use ~/.agent`,
    );
    const below = join(file, 'agent');
    const through = await runCli(['--scripted', script, '--cwd', dir, '-p', 'hi'], {
      env: cleanEnv({ AGENT_HOME: below }),
    });
    expect(through.code).toBe(1);
    expectOneLine(
      through.stderr,
      `agent: ${file}, on its path, is a file, not a folder: agent keeps its settings, sessions and trusted folders in ${below}. Move the file away, or point AGENT_HOME at a folder (it is created when missing), or unset it to use ~/.agent`,
    );
  }, 60_000);

  it('~/.agent a file, AGENT_HOME unset: says to set AGENT_HOME elsewhere', async () => {
    const home = await scratch();
    await writeFile(join(home, '.agent'), 'another tool’s file');
    const script = await writeScript(home, [{ text: 'answered' }]);
    const run = await runCli(['--scripted', script, '--cwd', home, '-p', 'hi'], {
      env: cleanEnv({ HOME: home, AGENT_HOME: '' }),
    });
    expect(run.code).toBe(1);
    expectOneLine(
      run.stderr,
      `agent: ${join(home, '.agent')} is a file, not a folder: agent keeps its settings, sessions and trusted folders in ${join(home, '.agent')}. Move the file away, or set AGENT_HOME to another folder (export AGENT_HOME=$HOME/.agent-cli)`,
    );
  }, 60_000);
});

describe('a settings file this user cannot read', () => {
  it('is said in words with its code (as nobody)', async () => {
    if (process.getuid?.() !== 0) return expect(process.getuid?.()).not.toBe(0);
    const dir = anyUserDirectory('agent-unreadable-settings-');
    cleanups.push(() => dir.dispose());
    const workspace = join(dir.path, 'project');
    await mkdir(join(workspace, '.agent'), { recursive: true });
    const settings = join(workspace, '.agent', 'settings.json');
    await writeFile(settings, '{}');
    await chmod(settings, 0o000);
    const home = join(dir.path, 'home');
    await mkdir(home);
    for (const path of [workspace, join(workspace, '.agent'), settings, home])
      await chown(path, 65534, 65534);
    const script = await writeScript(dir.path, [{ text: 'answered' }]);
    await chmod(script, 0o644);
    const run = await runCli(['--scripted', script, '--cwd', workspace, '-p', 'hi'], {
      env: cleanEnv({ AGENT_HOME: home, HOME: home }),
      cwd: dir.path,
      uid: 65534,
    });
    expect(run.stderr).toContain(`Cannot read ${settings}: permission denied (EACCES)`);
    expect(run.stdout).toBe('answered\n');
  }, 60_000);
});
