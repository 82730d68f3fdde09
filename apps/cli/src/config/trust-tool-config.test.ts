// A trusted hook runs a tool that runs what a project file of its own says: `pre-commit run
// --all-files` each `entry` of `.pre-commit-config.yaml`, `mise run check` the task of mise.toml.
// Trust pinned the command line, which names neither: a `git pull` that changed the config ran
// the new command in the next session, unasked. Real CLI (`agent trust`, then `-p`), real
// pre-commit, and real mise where it is installed (no Debian package has it), as root and nobody.
import { join } from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, beforeEach, describe, it } from 'vitest';
import { assertBuilt, testUsers } from '../testing/test-support.js';
import { expectPullAsksAgain, trustedRepository } from '../testing/trusted-pull.js';

const cleanups: (() => Promise<void>)[] = [];
beforeAll(() => assertBuilt());
beforeEach(skipWithout('pre-commit'));
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** Each tool: its hook, its config, and that config running `line` (a shell command). */
const tools = [
  {
    name: 'pre-commit',
    command: 'pre-commit run --all-files',
    config: '.pre-commit-config.yaml',
    write: (line: string) =>
      `repos:\n  - repo: local\n    hooks:\n      - id: check\n        name: check\n        entry: sh -c '${line}'\n        language: system\n        pass_filenames: false\n        always_run: true\n`,
    env: undefined,
  },
  {
    name: 'mise',
    command: 'mise run check',
    config: 'mise.toml',
    write: (line: string) => `[tasks.check]\nrun = ${JSON.stringify(line)}\n`,
    // Its state (the configs it trusts) in the test's folder, not the user's home.
    env: (dir: string) => ({
      MISE_DATA_DIR: join(dir, 'mise', 'data'),
      MISE_STATE_DIR: join(dir, 'mise', 'state'),
      MISE_CACHE_DIR: join(dir, 'mise', 'cache'),
      MISE_CONFIG_DIR: join(dir, 'mise', 'config'),
    }),
  },
] as const;

describe.each(testUsers)('a pull changing the config a trusted tool runs ($label)', ({ uid }) => {
  for (const tool of tools)
    it(`${tool.name}: the hook is left out, named, its new command not run`, async (context) => {
      if (tool.name === 'mise') skipWithout('mise')(context);
      const touch = (dir: string, canary: string) => tool.write(`touch ${join(dir, canary)}`);
      const repository = await trustedRepository({
        settings: { hooks: { Stop: [{ hooks: [{ type: 'command', command: tool.command }] }] } },
        files: (dir) => ({ [tool.config]: touch(dir, 'first') }),
        uid,
        cleanups,
        ...(tool.env === undefined ? {} : { env: tool.env }),
      });
      await expectPullAsksAgain(
        repository,
        tool.command,
        tool.config,
        touch(repository.dir, 'second'),
      );
    });
});
