import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import type { Turn } from '../testing/messages-server.js';
import { testUsers } from '../testing/test-support.js';
import {
  expectRanAfterEachCall,
  expectStoppedAfterChange,
  hookSessionSuite,
  runHookSession,
  untouchedTurns,
} from '../testing/trusted-hook-session.js';

const cleanups = hookSessionSuite('bwrap');

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
        expectStoppedAfterChange(
          await runWithGitHook(
            (outside) => [
              { tool: { name: 'list_files', input: { path: '.' } } },
              ...plantRepository(how, `touch ${join(outside, 'escaped')}`),
              { tool: { name: 'list_files', input: { path: '.' } } },
              { text: 'done' },
            ],
            uid,
          ),
          { command: 'sh scripts/hooks/status.sh', ranBefore: 2, changed: '.git' },
        );
      },
    );

    it('without one, the hook runs after every call', async () => {
      expectRanAfterEachCall(await runWithGitHook(untouchedTurns, uid));
    });
  },
);
