// Keys only the user's own settings may set (passEnv, sandboxProtect, hooksSandbox…), found in a
// project's file: each is ignored with one notice line naming the file and the key, and the
// session goes on — trusted or not. They used to stop the start, so a cloned repository kept the
// CLI from starting in it at all.
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  assertBuilt,
  cleanEnv,
  runCli,
  shellQuoted,
  tempDir,
  writeScript,
} from '../testing/test-support.js';
import { userOnlyKeyNames } from './user-only-keys.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});
beforeAll(() => assertBuilt());

/** A value of each user-only key that checks (so only where it is written decides). */
const values: Record<(typeof userOnlyKeyNames)[number], unknown> = {
  passEnv: ['USER_ONLY_TEST_TOKEN'],
  webFetchPrivateHosts: ['localhost'],
  compaction: { contextWindow: 10_000 },
  codeMode: true,
  sandboxProtect: { git: false },
  hooksSandbox: 'off',
  hooksSandboxNetwork: 'on',
  mcpServe: { maxConcurrentCalls: 1000 },
  sessions: { keepDays: 1 },
};

async function setup() {
  const dir = await tempDir('agent-cli-user-only-');
  cleanups.push(dir.dispose);
  const home = join(dir.path, 'home');
  const workspace = join(dir.path, 'ws');
  await mkdir(home);
  await mkdir(join(workspace, '.agent'), { recursive: true });
  const env = cleanEnv({ AGENT_HOME: home, USER_ONLY_TEST_TOKEN: 'token-value-kept-out' });
  return { dir: dir.path, home, workspace, env };
}

describe('a key only the user settings may set, in a project file', () => {
  it('covers every user-only key', () => {
    expect(Object.keys(values).sort()).toEqual([...userOnlyKeyNames].sort());
  });

  it.each(
    userOnlyKeyNames.flatMap((key) =>
      (['settings.json', 'settings.local.json'] as const).flatMap((file) =>
        [false, true].map((trusted) => ({ key, file, trusted })),
      ),
    ),
  )(
    '$key in $file (trusted: $trusted) is ignored, named; the run goes on',
    async ({ key, file, trusted }) => {
      const { dir, workspace, env } = await setup();
      const path = join(workspace, '.agent', file);
      await writeFile(path, JSON.stringify({ [key]: values[key] }));
      const script = await writeScript(dir, [{ text: 'answered' }]);
      const run = await runCli(
        ['-p', 'go', '--scripted', script, '--cwd', workspace, ...(trusted ? ['--trust'] : [])],
        { env },
      );
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain('answered');
      const notices = run.stderr.split('\n').filter((line) => line.includes(`ignored "${key}"`));
      expect(notices).toEqual([
        expect.stringMatching(
          new RegExp(
            `^agent: ignored "${key}" in ${path.replaceAll('.', '\\.')}: only your settings`,
          ),
        ),
      ]);
    },
  );

  it('a hook’s own "sandbox" is left out of it (the hook stays, as trusted or not), named', async () => {
    const { dir, workspace, env } = await setup();
    const path = join(workspace, '.agent', 'settings.json');
    const marker = join(dir, 'hook-ran');
    await writeFile(
      path,
      JSON.stringify({
        hooks: {
          Stop: [
            {
              hooks: [{ type: 'command', command: `touch ${shellQuoted(marker)}`, sandbox: false }],
            },
          ],
        },
      }),
    );
    const script = await writeScript(dir, [{ text: 'answered' }]);
    const run = await runCli(['-p', 'go', '--scripted', script, '--cwd', workspace, '--trust'], {
      env,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(
      `agent: ignored "hooks.Stop[0].hooks[0].sandbox" in ${path}: only your settings`,
    );
    expect(existsSync(marker)).toBe(true);
  });

  it('passEnv from the project never reaches a command; from the user’s settings it does', async () => {
    const { dir, home, workspace, env } = await setup();
    await writeFile(
      join(workspace, '.agent', 'settings.json'),
      JSON.stringify({ passEnv: ['USER_ONLY_TEST_TOKEN'] }),
    );
    const script = await writeScript(dir, [
      { toolCalls: [{ name: 'bash', arguments: { command: 'env' } }] },
      { text: 'done' },
    ]);
    const saved = join(dir, 'saved.json');
    const run = () =>
      runCli(
        [
          '-p',
          'go',
          '--scripted',
          script,
          '--cwd',
          workspace,
          '--trust',
          '--allow',
          'bash',
          '--save',
          saved,
        ],
        { env },
      );
    const project = await run();
    expect(project.code, project.stderr).toBe(0);
    const projectOutput = await readFile(saved, 'utf8');
    expect(projectOutput).toContain('PATH=');
    expect(projectOutput).not.toContain('USER_ONLY_TEST_TOKEN=');
    // The control: the same name in the user's own settings is passed.
    await writeFile(
      join(home, 'settings.json'),
      JSON.stringify({ passEnv: ['USER_ONLY_TEST_TOKEN'] }),
    );
    const user = await run();
    expect(user.code, user.stderr).toBe(0);
    expect(await readFile(saved, 'utf8')).toContain('USER_ONLY_TEST_TOKEN=');
  });
});
