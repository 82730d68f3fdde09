// A trusted hook runs a tool that runs what a project file of its own says: `mise run check` the
// task of mise.toml (mise trusts a config by its path, not its content, and the sandbox leaves it
// writable). The command line names no file, so none was pinned: a sandboxed command rewrote the
// config, and the next hook ran the new command as the user, outside the sandbox. Real CLI, real
// bubblewrap, real mise where it is installed (no Debian package has it: npm's
// @jdxcode/mise-linux-x64 does), as root and as nobody. (`.pre-commit-config.yaml` the sandbox
// keeps read-only; a pull changing it: config/trust-tool-config.test.ts.)
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { describe, expect, it } from 'vitest';
import { projectFileDigests } from '../config/trust-scripts.js';
import type { Turn } from '../testing/messages-server.js';
import { tempDir, testUsers } from '../testing/test-support.js';
import {
  expectRanAfterEachCall,
  expectStoppedAfterChange,
  hookSessionSuite,
  plantTurns,
  runHookSession,
  untouchedTurns,
} from '../testing/trusted-hook-session.js';

const cleanups = hookSessionSuite('bwrap');

const appendRan = 'echo ran >> OUTSIDE/hook-ran';

interface Case {
  command: string;
  config: string;
  /** The config running `line` (a shell command). */
  write: (line: string) => string;
  env?: (dir: string) => Record<string, string>;
}

const mise: Case = {
  command: 'mise run check',
  config: 'mise.toml',
  write: (line) => `[tasks.check]\nrun = ${JSON.stringify(line)}\n`,
  // Its state (the configs it trusts) in the test's folder, not the user's home.
  env: (dir) => ({
    MISE_DATA_DIR: join(dir, 'mise', 'data'),
    MISE_STATE_DIR: join(dir, 'mise', 'state'),
    MISE_CACHE_DIR: join(dir, 'mise', 'cache'),
    MISE_CONFIG_DIR: join(dir, 'mise', 'config'),
  }),
};

function runWithToolHook(setup: Case, turns: (outside: string) => Turn[], uid: number | undefined) {
  return runHookSession({
    turns,
    cleanups,
    uid,
    setup: { command: setup.command, files: { [setup.config]: setup.write(appendRan) } },
    ...(setup.env === undefined ? {} : { env: setup.env }),
  });
}

/** A file tool stages the new config; a sandboxed command puts it in place. */
function rewriteConfig(setup: Case, outside: string): Turn[] {
  return plantTurns([
    {
      tool: {
        name: 'write_file',
        input: { path: 'staged.txt', content: setup.write(`touch ${outside}/escaped`) },
      },
    },
    { tool: { name: 'bash', input: { command: `cp staged.txt ${setup.config}` } } },
  ]);
}

describe.each(testUsers)("a tool's config a trusted hook runs ($label)", ({ uid }) => {
  it('mise: rewritten by a sandboxed command, the hook does not run it', async (context) => {
    skipWithout('mise')(context);
    expectStoppedAfterChange(
      await runWithToolHook(mise, (outside) => rewriteConfig(mise, outside), uid),
      // After list_files and write_file (staged.txt is no file the hook runs).
      { command: mise.command, ranBefore: 2, changed: mise.config },
    );
  });

  it('mise: untouched, the hook runs after every call', async (context) => {
    skipWithout('mise')(context);
    expectRanAfterEachCall(await runWithToolHook(mise, untouchedTurns, uid));
  });
});

describe('the files of the tools that run what a project file says, pinned with them', () => {
  it.each([
    ['pre-commit run --all-files', '.pre-commit-config.yaml'],
    ['tox -e lint', 'tox.ini'],
    ['nox -s lint', 'noxfile.py'],
    ['task lint', 'Taskfile.yml'],
    ['uv run scripts/check.py', 'pyproject.toml'],
    ['uv run scripts/check.py', 'uv.toml'],
    ['pipenv run lint', '.env'],
    ['direnv exec . make lint', '.envrc'],
    ['cargo clippy', '.cargo/config.toml'],
    ['cargo clippy', 'rust-toolchain.toml'],
    ['mise run lint', 'mise-tasks/lint'],
    ['mise run lint', '.tool-versions'],
  ])('%s: %s', async (command, file) => {
    const scratch = await tempDir('agent-tool-config-');
    cleanups.push(scratch.dispose);
    await mkdir(dirname(join(scratch.path, file)), { recursive: true });
    await writeFile(join(scratch.path, file), 'x = 1\n');
    expect(Object.keys(projectFileDigests([command], scratch.path) ?? {})).toContain(file);
  });
});
