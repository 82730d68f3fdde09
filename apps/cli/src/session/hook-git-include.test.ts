// The repository's `.git/config` includes a file of the workspace (`git config include.path
// ../tools.gitconfig`: a team's shared git settings kept in the repository). The sandbox keeps
// `.git` read-only, not the file it includes: a sandboxed command wrote `core.fsmonitor` there, and
// the trusted hook's `git status` ran it as the user, outside the sandbox, right after the call.
// Now the sandbox keeps an existing included file read-only and the file tools ask for full access
// there; one made where none was is caught by the hook's pin. Real CLI, real bubblewrap, real git,
// as root and as nobody.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
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
import { gitConfigIncludes } from './git-config-includes.js';

const cleanups = hookSessionSuite('bwrap');

const command = 'sh scripts/hooks/status.sh';

/** A trusted repository whose config includes `include` and whose PostToolUse hook runs `git status`. */
function runWithInclude(
  include: string,
  turns: (outside: string) => Turn[],
  uid: number | undefined,
) {
  return runHookSession({
    turns,
    cleanups,
    uid,
    setup: {
      command,
      files: {
        'scripts/hooks/status.sh':
          'git status --short >/dev/null 2>&1\necho ran >> "OUTSIDE/hook-ran"\n',
        'tools.gitconfig': '[user]\n\tname = team\n',
      },
    },
    prepare: async (repo) => {
      execFileSync('git', ['-C', repo, 'config', 'include.path', include]);
    },
  });
}

const fsmonitor = (outside: string) =>
  `[core]\n\tfsmonitor = "touch ${join(outside, 'escaped')}; false"\n`;

describe.each(testUsers)('a workspace file the repository config includes ($label)', ({ uid }) => {
  it('rewritten by a file tool: refused as a write into .git is (full access), the hook runs on', async () => {
    const session = await runWithInclude(
      '../tools.gitconfig',
      (outside) =>
        plantTurns([
          {
            tool: {
              name: 'write_file',
              input: { path: 'tools.gitconfig', content: fsmonitor(outside) },
            },
          },
        ]),
      uid,
    );
    // Denied: no one to ask in -p (exit 4); the file is unchanged, so the hook is not stopped.
    expect(session.run.code, session.run.stderr).toBe(4);
    expect(session.run.stderr).toMatch(
      /write_file \[denied\].*tools\.gitconfig\)', or use --mode full-access/,
    );
    expect(existsSync(join(session.outside, 'escaped'))).toBe(false);
    expect(session.ran).toBe('ran\nran\n');
    expect(session.run.stderr).not.toContain('did not run');
  });

  it('made by a sandboxed command where none was: likewise', async () => {
    expectStoppedAfterChange(
      await runWithInclude(
        '../.gitconfig.local',
        (outside) =>
          plantTurns([
            {
              tool: {
                name: 'bash',
                input: {
                  // printf's format: its \n and \t are the config's line breaks and tabs.
                  command: `printf '${fsmonitor(outside).replaceAll('\n', '\\n').replaceAll('\t', '\\t')}' > .gitconfig.local`,
                },
              },
            },
          ]),
        uid,
      ),
      { command, ranBefore: 1, changed: '.git/config includes .gitconfig.local' },
    );
  });

  it('untouched, the hook runs after every call', async () => {
    expectRanAfterEachCall(await runWithInclude('../tools.gitconfig', untouchedTurns, uid));
  });
});

describe('gitConfigIncludes', () => {
  it("follows include and includeIf paths into the workspace, in turn too; not .git's, not the home's", async () => {
    const dir = await tempDir('agent-git-includes-');
    cleanups.push(dir.dispose);
    const root = dir.path;
    await mkdir(join(root, '.git'));
    await mkdir(join(root, 'config'));
    await writeFile(
      join(root, '.git', 'config'),
      [
        '[core]\n\tbare = false',
        '[include]\n\tpath = ../config/team.gitconfig ; shared',
        '[includeIf "gitdir:/x/"]\n\tPath = "../absent.gitconfig"',
        '[include]\n\tpath = ~/.gitconfig-extra\n\tpath = info/local.config',
        '',
      ].join('\n'),
    );
    await writeFile(
      join(root, 'config', 'team.gitconfig'),
      '[include]\n\tpath = deeper.gitconfig\n',
    );
    await writeFile(join(root, 'config', 'deeper.gitconfig'), '[user]\n\tname = x\n');
    const looked = new Set<string>();
    const pins = gitConfigIncludes(root, looked);
    expect(Object.keys(pins).sort()).toEqual([
      '.git/config includes absent.gitconfig',
      '.git/config includes config/deeper.gitconfig',
      '.git/config includes config/team.gitconfig',
    ]);
    expect(pins['.git/config includes absent.gitconfig']).toBe('none');
    expect(pins['.git/config includes config/deeper.gitconfig']).toMatch(/^sha256:/);
    expect(looked).toContain(join(root, 'absent.gitconfig'));
  });
});
