// HOME and AGENT_HOME as they arrive on a fresh machine: empty (a cron job, `HOME= agent`), relative,
// or a quoted `"~/.agent"` the shell did not expand. A relative home was read from the folder the
// CLI started in, so the project's own `.agent/settings.json` (or a committed `~/.agent/`) became
// the user's settings and its hooks ran without the trust question. The built CLI as a real
// process; the HOME cases as nobody, whose home in the user database is /nonexistent, so no run
// here writes the real ~/.agent.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { nodeForAnyUser } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  assertBuilt,
  type CliRun,
  cleanEnv,
  cliPathForAnyUser,
  runCli,
  tempDir,
  writeScript,
} from '../testing/test-support.js';

const cleanups: (() => Promise<void>)[] = [];
beforeAll(() => assertBuilt());
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** A git project whose settings (at `.agent/` and at `~/.agent/`) hold a hook that marks the workspace. */
async function hookedProject(): Promise<{ dir: string; workspace: string; script: string }> {
  const scratch = await tempDir('agent-home-variables-');
  cleanups.push(scratch.dispose);
  const dir = scratch.path;
  const workspace = join(dir, 'workspace');
  const settings = JSON.stringify({
    hooks: {
      UserPromptSubmit: [{ hooks: [{ type: 'command', command: 'touch hook-ran' }] }],
    },
  });
  for (const folder of ['.git', '.agent', join('~', '.agent')])
    await mkdir(join(workspace, folder), { recursive: true });
  await writeFile(join(workspace, '.agent', 'settings.json'), settings);
  await writeFile(join(workspace, '~', '.agent', 'settings.json'), settings);
  const script = await writeScript(dir, [{ text: 'answered' }]);
  for (const path of [dir, workspace, script]) fs.chmodSync(path, 0o755);
  return { dir, workspace, script };
}

function expectProjectHookHeld(run: CliRun, workspace: string): void {
  expect(run.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
  // Untrusted, the project's hook is listed as withheld and never runs.
  expect(fs.existsSync(join(workspace, 'hook-ran'))).toBe(false);
}

describe('an empty or relative HOME', () => {
  it.each(['', 'relative', '.', './home'])(
    'HOME=%j: the home of the user database is used, and said; the project stays untrusted',
    async (home) => {
      if (process.getuid?.() !== 0) return expect(process.getuid?.()).not.toBe(0);
      const { dir, workspace, script } = await hookedProject();
      fs.chownSync(workspace, 65534, 65534);
      const node = join(dir, 'node');
      nodeForAnyUser(node);
      const run = await runAs(
        ['--reuid=65534', '--regid=65534', '--clear-groups', node, cliPathForAnyUser()],
        ['--scripted', script, '-p', 'hi'],
        { cwd: workspace, env: cleanEnv({ HOME: home, AGENT_HOME: '' }) },
      );
      expectProjectHookHeld(run, workspace);
      expect(run.stderr).toContain(
        `HOME is ${home === '' ? 'empty' : `"${home}", not an absolute path`}: using /nonexistent, your home in the user database`,
      );
      expect(run.stderr).toContain('Trust it for this run with --trust');
      expect(run.stdout).toBe('answered\n');
      // Nothing of the CLI's own state (sessions, compile cache) lands in the project.
      expect(fs.readdirSync(join(workspace, '.agent'))).toEqual(['settings.json']);
    },
  );
});

describe('AGENT_HOME', () => {
  it.each(['~/.agent', '~'])(
    'AGENT_HOME=%j (a ~ the shell left alone) is under HOME, not a folder of the project',
    async (value) => {
      const { dir, workspace, script } = await hookedProject();
      const home = join(dir, 'home');
      await mkdir(home);
      const run = await runCli(['--scripted', script, '-p', 'hi'], {
        cwd: workspace,
        env: cleanEnv({ HOME: home, AGENT_HOME: value }),
      });
      expectProjectHookHeld(run, workspace);
      expect(run.code).toBe(0);
      expect(run.stdout).toBe('answered\n');
      // The session was kept in the expanded home, and nothing new appeared in the project's `~`.
      const kept = join(home, ...value.split('/').slice(1), 'sessions');
      expect(fs.readdirSync(kept).length).toBe(1);
      expect(fs.readdirSync(join(workspace, '~'))).toEqual(['.agent']);
      expect(fs.readdirSync(join(workspace, '~', '.agent'))).toEqual(['settings.json']);
    },
  );

  it.each(['.agent', 'agent-home', './x/../.agent', '~other/.agent'])(
    'AGENT_HOME=%j (relative) is refused before anything is read, saying what to set',
    async (value) => {
      const { workspace, script } = await hookedProject();
      const run = await runCli(['--scripted', script, '-p', 'hi'], {
        cwd: workspace,
        env: cleanEnv({ AGENT_HOME: value }),
      });
      expect(run.code).toBe(1);
      expect(run.stderr).toBe(
        `agent: AGENT_HOME is "${value}", not an absolute path: it would be read from each folder the CLI starts in (a project's files taken for your settings). Set it to a full path, e.g. AGENT_HOME=$HOME/.agent\n`,
      );
      expect(run.stdout).toBe('');
      expectProjectHookHeld(run, workspace);
    },
  );
});

function runAs(
  setprivArgs: readonly string[],
  args: readonly string[],
  options: { cwd: string; env: Record<string, string> },
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn('setpriv', [...setprivArgs, ...args], {
      ...options,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
