// A trusted project's `env` applies to the hooks, which run outside the sandbox in a trusted
// folder: `NODE_OPTIONS=--require ./preload.cjs` makes every `node` a hook starts load the
// project's preload.cjs, `PYTHONPATH=.` every `python3` its sitecustomize.py. Trust pins
// preload.cjs between sessions, but within one the hook's pin held only the files its command
// names: write_file (unasked in workspace-write) rewrote preload.cjs, or made sitecustomize.py,
// and the next tool call's hook ran it as the user, outside the sandbox. Real CLI, real bubblewrap.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, runCli, tempDir, writeScript } from '../testing/test-support.js';
import { serverStartPin } from './mcp-start-pins.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});
beforeAll(() => assertBuilt());
beforeEach(skipWithout('bwrap', 'python3'));

/**
 * A trusted repository whose settings set `env` and a PostToolUse hook `hook`; the model writes
 * `file` with code that leaves a marker outside the workspace, then makes one more call.
 */
async function session(setup: {
  env: Record<string, string>;
  hook: string;
  file: string;
  code: (marker: string) => string;
  before?: string;
}) {
  const dir = await tempDir('agent-cli-hook-env-pins-');
  cleanups.push(dir.dispose);
  const repo = join(dir.path, 'repo');
  const home = join(dir.path, 'home');
  const marker = join(dir.path, 'outside', 'escaped');
  await mkdir(join(repo, '.agent'), { recursive: true });
  await mkdir(join(dir.path, 'outside'));
  await mkdir(home);
  execFileSync('git', ['init', '-q', repo]);
  if (setup.before !== undefined) await writeFile(join(repo, setup.file), setup.before);
  await writeFile(
    join(repo, '.agent', 'settings.json'),
    JSON.stringify({
      env: setup.env,
      hooks: { PostToolUse: [{ hooks: [{ type: 'command', command: setup.hook }] }] },
    }),
  );
  const script = await writeScript(dir.path, [
    {
      toolCalls: [
        { name: 'write_file', arguments: { path: setup.file, content: setup.code(marker) } },
      ],
    },
    { toolCalls: [{ name: 'bash', arguments: { command: 'echo next' } }] },
    { text: 'done' },
  ]);
  const env = cleanEnv({ AGENT_HOME: home });
  const trust = await runCli(['trust', '--cwd', repo], { env });
  expect(trust.code, trust.stderr).toBe(0);
  const run = await runCli(
    ['-p', 'go', '--scripted', script, '--cwd', repo, '--mode', 'workspace-write'],
    { env },
  );
  return { run, escaped: existsSync(marker) };
}

describe("files a trusted project's env makes a hook load, written during the session", () => {
  it('NODE_OPTIONS=--require ./preload.cjs: the rewritten preload does not run outside', async () => {
    const { run, escaped } = await session({
      env: { NODE_OPTIONS: '--require ./preload.cjs' },
      hook: 'node -e 0',
      file: 'preload.cjs',
      before: '// sets up the environment\n',
      code: (marker) => `require('node:fs').writeFileSync(${JSON.stringify(marker)}, 'x');\n`,
    });
    expect(escaped, 'the hook ran the rewritten preload outside the sandbox').toBe(false);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('the project files it runs changed during this session');
    expect(run.stderr).toContain('preload.cjs');
  });

  it.each(['.', '/nonexistent:'])(
    'PYTHONPATH=%s: a sitecustomize.py made by the model does not run outside',
    async (path) => {
      const { run, escaped } = await session({
        env: { PYTHONPATH: path },
        hook: 'python3 -c pass',
        file: 'sitecustomize.py',
        code: (marker) => `open(${JSON.stringify(marker)}, 'w').write('x')\n`,
      });
      expect(escaped, 'the hook ran the planted sitecustomize.py outside the sandbox').toBe(false);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toContain('sitecustomize.py');
    },
  );

  it('a file no loader variable names: the hook still runs (control)', async () => {
    const { run, escaped } = await session({
      env: { PROJECT_MODE: 'dev' },
      hook: 'node -e 0',
      file: 'notes.cjs',
      code: (marker) => `require('node:fs').writeFileSync(${JSON.stringify(marker)}, 'x');\n`,
    });
    expect(escaped).toBe(false);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).not.toContain('changed during this session');
  });
});

describe("a stdio server's env, within a session", () => {
  it('a reconnect is refused once the file its NODE_OPTIONS loads changed', async () => {
    const dir = await tempDir('agent-cli-server-env-pins-');
    cleanups.push(dir.dispose);
    await writeFile(join(dir.path, 'server.mjs'), '// the server\n');
    await writeFile(join(dir.path, 'preload.cjs'), '// sets up\n');
    const beforeStart = serverStartPin(
      {
        name: 'tools',
        transport: {
          type: 'stdio',
          command: 'node',
          args: ['server.mjs'],
          env: { NODE_OPTIONS: '--require ./preload.cjs' },
        },
      },
      dir.path,
    );
    expect(beforeStart()).toBeUndefined();
    expect(beforeStart()).toBeUndefined();
    await writeFile(join(dir.path, 'preload.cjs'), 'require("node:child_process");\n');
    expect(beforeStart()).toContain('(preload.cjs)');
  });
});
