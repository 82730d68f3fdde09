import { execFileSync } from 'node:child_process';
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

  it('a project file with it is refused at start, naming the file and key', async () => {
    const { workspace, run, commits } = await repository();
    await mkdir(join(workspace, '.agent'));
    await writeFile(
      join(workspace, '.agent', 'settings.json'),
      JSON.stringify({ sandboxProtect: { git: false } }),
    );
    const result = await run();
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /\.agent\/settings\.json: "sandboxProtect" is read only from the user settings .*a workspace cannot weaken the sandbox/,
    );
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
