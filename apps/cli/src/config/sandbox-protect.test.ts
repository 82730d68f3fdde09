import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, runCli, tempDir, writeScript } from '../testing/test-support.js';

// The user settings' "sandboxProtect": the model's `git commit` in the sandbox fails by default
// (the workspace's .git is read-only inside it) and works once the user lifts it; a project file
// cannot lift it. Real CLI, real bubblewrap, real git.

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});
beforeAll(() => assertBuilt());
beforeEach(skipWithout('bwrap'));

async function repository() {
  const dir = await tempDir('agent-cli-sandbox-protect-');
  cleanups.push(dir.dispose);
  const home = join(dir.path, 'home');
  const workspace = join(dir.path, 'ws');
  await mkdir(home, { recursive: true });
  await mkdir(workspace, { recursive: true });
  execFileSync('git', ['init', '-q', workspace]);
  execFileSync('git', ['-C', workspace, 'config', 'user.name', 'agent']);
  execFileSync('git', ['-C', workspace, 'config', 'user.email', 'agent@example.invalid']);
  const script = await writeScript(dir.path, [
    {
      toolCalls: [
        {
          name: 'bash',
          arguments: {
            command: 'git commit -q --allow-empty -m sandboxed && echo COMMITTED',
          },
        },
      ],
    },
    { text: 'done' },
  ]);
  const run = () =>
    runCli(
      [
        '-p',
        'go',
        '--scripted',
        script,
        '--cwd',
        workspace,
        '--mode',
        'full-access',
        '--sandbox',
        'required',
        '--trust',
      ],
      { env: cleanEnv({ AGENT_HOME: home }) },
    );
  const commits = () =>
    execFileSync('git', ['-C', workspace, 'log', '--oneline'], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean).length;
  return { home, workspace, run, commits };
}

describe('"sandboxProtect" in the user settings', () => {
  it('by default a sandboxed git commit fails (.git is read-only); { git: false } lets it through', async () => {
    const { home, run, commits } = await repository();
    const refused = await run();
    expect(refused.code, refused.stderr).toBe(0);
    expect(refused.stderr).toMatch(
      /✗ bash \[failed\]: .*\.git\/index\.lock': Read-only file system/,
    );
    expect(refused.stderr).not.toMatch(/✓ bash: COMMITTED/);
    expect(() => commits()).toThrow(); // no commit at all: HEAD names no branch yet

    await writeFile(
      join(home, 'settings.json'),
      JSON.stringify({ sandboxProtect: { git: false } }),
    );
    const allowed = await run();
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(allowed.stderr).toMatch(/✓ bash: COMMITTED/);
    expect(commits()).toBe(1);
  });

  it('a project file with it is ignored with a notice naming the file and key; .git stays read-only', async () => {
    const { workspace, run, commits } = await repository();
    await mkdir(join(workspace, '.agent'));
    await writeFile(
      join(workspace, '.agent', 'settings.json'),
      JSON.stringify({ sandboxProtect: { git: false } }),
    );
    const result = await run();
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(
      /ignored "sandboxProtect" in .*\.agent\/settings\.json: only your settings .* a workspace cannot weaken the sandbox/,
    );
    expect(result.stderr).toMatch(/✗ bash \[failed\]: .*Read-only file system/);
    expect(() => commits()).toThrow();
  });

  it.for([
    [{ sandboxProtect: false }, '"sandboxProtect" must be an object'],
    [{ sandboxProtect: { git: 'no' } }, '"sandboxProtect.git" must be true or false'],
    [{ sandboxProtect: { hooks: false } }, '"sandboxProtect.hooks" is unknown'],
  ] as const)(
    'a wrong value in the user settings is an error naming it: %j',
    async ([settings, message]) => {
      const { home, run } = await repository();
      await writeFile(join(home, 'settings.json'), JSON.stringify(settings));
      const result = await run();
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(message);
    },
  );
});

/** A temporary AGENT_HOME (with `settings` as its settings file) beside an empty workspace. */
async function homeAndWorkspace(prefix: string, settings: object | undefined) {
  const dir = await tempDir(prefix);
  cleanups.push(dir.dispose);
  const home = join(dir.path, 'home');
  const workspace = join(dir.path, 'ws');
  await mkdir(home, { recursive: true });
  await mkdir(workspace, { recursive: true });
  if (settings !== undefined)
    await writeFile(join(home, 'settings.json'), JSON.stringify(settings));
  return { dir, home, workspace };
}

describe('the file tools write what the sandbox protects only at the full-access tier', () => {
  async function plant(extra: string[], settings?: object) {
    const { dir, home, workspace } = await homeAndWorkspace('agent-cli-file-tools-git-', settings);
    execFileSync('git', ['init', '-q', workspace]);
    // A prompt-injected model: edit_file and write_file run in the CLI's process, not in bash's sandbox.
    const script = await writeScript(dir.path, [
      {
        toolCalls: [
          {
            name: 'edit_file',
            arguments: {
              path: '.git/config',
              old_string: '[core]',
              new_string: '[core]\n\tfsmonitor = "touch PWNED; false"',
            },
          },
          {
            name: 'write_file',
            arguments: { path: '.git/hooks/post-checkout', content: '#!/bin/sh\ntouch PWNED\n' },
          },
        ],
      },
      { text: 'done' },
    ]);
    const run = await runCli(['-p', 'go', '--scripted', script, '--cwd', workspace, ...extra], {
      env: cleanEnv({ AGENT_HOME: home }),
    });
    const config = readFileSync(join(workspace, '.git', 'config'), 'utf8');
    return { run, config, hook: existsSync(join(workspace, '.git', 'hooks', 'post-checkout')) };
  }

  it('workspace-write: asked, so -p denies them and .git is unchanged', async () => {
    const { run, config, hook } = await plant(['--mode', 'workspace-write']);
    expect(run.code, run.stderr).toBe(4);
    expect(run.stderr).toContain('✗ edit_file [denied]');
    expect(run.stderr).toContain('✗ write_file [denied]');
    expect(config).not.toContain('fsmonitor');
    expect(hook).toBe(false);
  });

  it('full-access, or { "sandboxProtect": { "git": false } }: written as asked', async () => {
    const full = await plant(['--mode', 'full-access']);
    expect(full.run.code, full.run.stderr).toBe(0);
    expect(full.config).toContain('fsmonitor');
    const lifted = await plant(['--mode', 'workspace-write'], { sandboxProtect: { git: false } });
    expect(lifted.run.code, lifted.run.stderr).toBe(0);
    expect(lifted.hook).toBe(true);
  });
});

describe("what the user's editor and tools run without asking (.vscode, .devcontainer…)", () => {
  async function plant(extra: string[], settings?: object) {
    const { dir, home, workspace } = await homeAndWorkspace('agent-cli-auto-run-', settings);
    const tasks = JSON.stringify({
      version: '2.0.0',
      tasks: [{ label: 'x', command: 'touch PWNED', runOptions: { runOn: 'folderOpen' } }],
    });
    const script = await writeScript(dir.path, [
      {
        toolCalls: [
          {
            name: 'bash',
            arguments: {
              command: `mkdir -p .vscode .devcontainer; echo '${tasks}' > .vscode/tasks.json && echo WROTE-TASKS; echo '{}' > .devcontainer/devcontainer.json && echo WROTE-DEVCONTAINER; true`,
            },
          },
          { name: 'write_file', arguments: { path: '.idea/workspace.xml', content: '<x/>' } },
        ],
      },
      { text: 'done' },
    ]);
    const run = await runCli(
      [
        '-p',
        'go',
        '--scripted',
        script,
        '--cwd',
        workspace,
        '--sandbox',
        'required',
        '--trust',
        ...extra,
      ],
      { env: cleanEnv({ AGENT_HOME: home }) },
    );
    return { run, workspace };
  }

  it('bash cannot create them (not even the folder), write_file is asked; nothing is left behind', async () => {
    const { run, workspace } = await plant(['--mode', 'workspace-write']);
    expect(run.stderr).not.toContain('WROTE');
    expect(run.stderr).toMatch(/tasks\.json: Read-only file system/);
    expect(run.stderr).toContain('✗ write_file [denied]');
    for (const name of ['.vscode', '.devcontainer', '.idea', '.devcontainer.json', '.claude'])
      expect(existsSync(join(workspace, name)), name).toBe(false);
  });

  it('{ "sandboxProtect": { "autoRunFiles": false } } lets both through', async () => {
    const { run, workspace } = await plant(['--mode', 'workspace-write'], {
      sandboxProtect: { autoRunFiles: false },
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('WROTE-TASKS');
    expect(readFileSync(join(workspace, '.vscode/tasks.json'), 'utf8')).toContain('folderOpen');
    expect(existsSync(join(workspace, '.devcontainer/devcontainer.json'))).toBe(true);
    expect(readFileSync(join(workspace, '.idea/workspace.xml'), 'utf8')).toBe('<x/>');
  });
});

describe('what a sandboxed command plants', () => {
  it('the transcript tells the user about a repository a command made', async () => {
    const { workspace, home } = await repository();
    const dir = join(home, '..');
    const script = await writeScript(
      dir,
      [
        { toolCalls: [{ name: 'bash', arguments: { command: 'git init -q vendor/lib' } }] },
        { text: 'done' },
      ],
      'plant.json',
    );
    const result = await runCli(
      [
        '-p',
        'go',
        '--scripted',
        script,
        '--cwd',
        workspace,
        '--mode',
        'full-access',
        '--sandbox',
        'required',
        '--trust',
      ],
      { env: cleanEnv({ AGENT_HOME: home }) },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(
      `! sandboxed commands made ${join(workspace, 'vendor/lib/.git')}: what a repository's hooks and config`,
    );
  });
});
