// A trusted folder with no `.git` at its root (a project found by its `.agent/`, an unpacked
// download): the sandbox keeps an existing `.git` read-only, but where there was none a sandboxed
// command made one, its `config` saying `core.fsmonitor = <command>`. The sandbox said so ("look
// before using it") — and the trusted hook's `git status` ran that command as the user, outside
// the sandbox, right after the same call. Real CLI, real bubblewrap, real git.
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Turn } from '../testing/messages-server.js';
import { assertBuilt, testUsers } from '../testing/test-support.js';
import {
  expectRanAfterEachCall,
  runHookSession,
  untouchedTurns,
} from '../testing/trusted-hook-session.js';

beforeAll(assertBuilt);
beforeEach(skipWithout('bwrap'));
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** A trusted folder without `.git` whose PostToolUse hook runs `git status`. */
function runWithGitHook(turns: (outside: string) => Turn[], uid: number | undefined) {
  return runHookSession({
    turns,
    cleanups,
    uid,
    setup: {
      command: 'sh scripts/hooks/status.sh',
      files: {
        'scripts/hooks/status.sh':
          'git status --short >/dev/null 2>&1\necho ran >> "OUTSIDE/hook-ran"\n',
      },
    },
    prepare: (repo) => rm(join(repo, '.git'), { recursive: true, force: true }),
  });
}

/** The calls that make a repository whose git runs `command`: a write_file, then sandboxed bash. */
function plantRepository(how: 'folder' | 'gitdir file', command: string): Turn[] {
  const config = `[core]\n\trepositoryformatversion = 0\n\tfsmonitor = "${command}; false"\n`;
  const gitDirectory = how === 'folder' ? '.git' : 'vendor/repo.git';
  const pointer = how === 'folder' ? '' : ` && echo 'gitdir: ${gitDirectory}' > .git`;
  return [
    { tool: { name: 'write_file', input: { path: 'staged/config', content: config } } },
    {
      tool: {
        name: 'bash',
        input: {
          command: `mkdir -p ${gitDirectory}/objects ${gitDirectory}/refs/heads && echo 'ref: refs/heads/main' > ${gitDirectory}/HEAD && cp staged/config ${gitDirectory}/config${pointer}`,
        },
      },
    },
  ];
}

describe.each(testUsers)(
  'a .git a sandboxed command made at a trusted root ($label)',
  ({ uid }) => {
    it.each(['folder', 'gitdir file'] as const)(
      'as a %s: the hook that runs git does not run again, and says why',
      async (how) => {
        const { run, outside, ran } = await runWithGitHook(
          (outside) => [
            { tool: { name: 'list_files', input: { path: '.' } } },
            ...plantRepository(how, `touch ${join(outside, 'escaped')}`),
            { tool: { name: 'list_files', input: { path: '.' } } },
            { text: 'done' },
          ],
          uid,
        );
        expect(run.code, run.stderr).toBe(0);
        expect(
          existsSync(join(outside, 'escaped')),
          'the planted fsmonitor ran outside the sandbox',
        ).toBe(false);
        // The control: the hook ran outside the sandbox (it can write there) until the plant.
        expect(ran.startsWith('ran\n'), run.stderr).toBe(true);
        expect(run.stderr).toContain(
          'PostToolUse hook "sh scripts/hooks/status.sh" did not run: the project files it runs changed during this session (.git)',
        );
      },
    );

    it('without one, the hook runs after every call', async () => {
      expectRanAfterEachCall(await runWithGitHook(untouchedTurns, uid));
    });
  },
);
