// Tokens inside git configuration files: actions/checkout's `http.https://github.com/.extraheader
// = AUTHORIZATION: basic <base64 of x-access-token:ghs_…>`, a `url.https://<token>@github.com/
// .insteadOf`, a remote `https://user:token@host/…`, an inline `credential.helper = !echo
// password=…`, a submodule's extraheader, and a token in a file `~/.gitconfig` includes. A
// sandboxed `cat .git/config`, `git config -l`, `base64 .git/config`, and read_file or search of
// the file, gave them to the model. Now the sandbox shows the files without them (git status and
// log still work, a remote without credentials is shown as it is) and every tool result is
// redacted of them. Real CLI processes, a scripted model, bubblewrap, git; as root and as nobody.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { anyUserDirectory, skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { probeSession } from '../testing/probe-session.js';
import { assertBuilt, testUsers } from '../testing/test-support.js';

beforeAll(assertBuilt);
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

const installationToken = `ghs_${'Ck7q'.repeat(9)}`;
const basic = Buffer.from(`x-access-token:${installationToken}`).toString('base64');
const insteadOfToken = `ghp_${'Zy9x'.repeat(9)}`;
const remotePassword = `glpat-${'Rm4w'.repeat(5)}`;
const helperPassword = 'Hunter2-Sup3rS3cretV4lue';
const submoduleToken = `ghs_${'Sb2m'.repeat(9)}`;
const includedToken = `github_pat_${'In5c'.repeat(12)}`;
/** Every secret, and the forms a command could print them in. */
const secrets = [
  installationToken,
  basic,
  insteadOfToken,
  remotePassword,
  helperPassword,
  submoduleToken,
  includedToken,
];

function git(cwd: string, ...args: string[]): void {
  const run = spawnSync('git', args, { cwd, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`git ${args.join(' ')}: ${run.stderr}`);
}

/** A checkout as actions/checkout leaves it, with a submodule, and a home whose config includes a token. */
function checkout(dir: string): { workspace: string; home: string } {
  const workspace = join(dir, 'ws');
  const home = join(dir, 'home');
  mkdirSync(workspace, { recursive: true });
  mkdirSync(home, { recursive: true });
  git(workspace, 'init', '-q');
  git(
    workspace,
    '-c',
    'user.name=a',
    '-c',
    'user.email=a@b',
    'commit',
    '-q',
    '--allow-empty',
    '-m',
    'init',
  );
  const config = (...args: string[]) => git(workspace, 'config', '--local', ...args);
  config('http.https://github.com/.extraheader', `AUTHORIZATION: basic ${basic}`);
  config(`url.https://${insteadOfToken}@github.com/.insteadOf`, 'https://github.com/');
  config('remote.origin.url', `https://oauth2:${remotePassword}@gitlab.example.com/g/p.git`);
  config('remote.upstream.url', 'https://gitlab.example.com/upstream/p.git');
  config('credential.helper', `!f() { echo username=bob; echo password=${helperPassword}; }; f`);
  // A submodule's git directory, as `git submodule` keeps it, and its worktree's `.git` file.
  const module = join(workspace, '.git', 'modules', 'lib');
  mkdirSync(join(workspace, 'lib'), { recursive: true });
  mkdirSync(join(workspace, '.git', 'modules'), { recursive: true });
  git(join(workspace, '.git', 'modules'), 'init', '-q', '--bare', 'lib');
  git(
    module,
    'config',
    'http.https://github.com/.extraheader',
    `AUTHORIZATION: bearer ${submoduleToken}`,
  );
  writeFileSync(join(workspace, 'lib', '.git'), 'gitdir: ../.git/modules/lib\n');
  writeFileSync(
    join(home, '.gitconfig'),
    '[user]\n\tname = A\n[include]\n\tpath = ~/.gitconfig-ci\n',
  );
  writeFileSync(
    join(home, '.gitconfig-ci'),
    `[url "https://x:${includedToken}@github.com/"]\n\tinsteadOf = git@github.com:\n`,
  );
  return { workspace, home };
}

describe.each(testUsers)('credentials in git configuration files, as $label', ({ uid }) => {
  it('are neither shown to sandboxed commands nor in the file tools’ results', async (context) => {
    skipWithout('bwrap')(context);
    const dir = anyUserDirectory('agent-cli-git-config-');
    cleanups.push(() => dir.dispose());
    const { workspace, home } = checkout(dir.path);
    const before = readFileSync(join(workspace, '.git', 'config'), 'utf8');
    // What a command sees is written down as it sees it (the CLI redacts what reaches the model).
    const { seen, conversation } = await probeSession({
      uid,
      dir: dir.path,
      workspace,
      home,
      commands: [
        'cat .git/config .git/modules/lib/config ~/.gitconfig-ci',
        'git config -l',
        'base64 -w0 .git/config; echo',
        'git remote -v',
        'git status',
        'git log --oneline',
      ],
      calls: [
        { id: 'read', name: 'read_file', arguments: { path: '.git/config' } },
        { id: 'module', name: 'read_file', arguments: { path: '.git/modules/lib/config' } },
        { id: 'search', name: 'search', arguments: { pattern: 'basic|bearer|@', path: '.git' } },
      ],
      env: { GIT_CONFIG_NOSYSTEM: '1' },
    });
    expect(secrets.filter((secret) => seen.includes(secret))).toEqual([]);
    expect(secrets.filter((secret) => conversation.includes(secret))).toEqual([]);
    // The credential-free copy: what git reads in there, with the rest of the configuration.
    expect(seen).toContain('extraheader=AUTHORIZATION: basic ***');
    expect(seen).toContain('https://oauth2:***@gitlab.example.com/g/p.git');
    expect(seen).toContain('upstream\thttps://gitlab.example.com/upstream/p.git (fetch)');
    expect(seen).toMatch(/On branch \w+/);
    expect(seen).toMatch(/[0-9a-f]{7} init/);
    // The file tools read the files themselves: their results are redacted.
    expect(conversation).toMatch(/\[redacted:[^\]]*\.git\/config secret \d+\]/);
    expect(conversation).toContain('url = https://gitlab.example.com/upstream/p.git');
    // The user's file is untouched.
    expect(readFileSync(join(workspace, '.git', 'config'), 'utf8')).toBe(before);
  });

  it('given in the environment as pairs, are withheld without breaking git', async (context) => {
    // GIT_CONFIG_VALUE_0 (an extraheader with a token) was withheld and GIT_CONFIG_COUNT and
    // GIT_CONFIG_KEY_0 were not: every git command of the tools failed with "missing config value".
    skipWithout('bwrap')(context);
    const dir = anyUserDirectory('agent-cli-git-config-env-');
    cleanups.push(() => dir.dispose());
    const { workspace, home } = checkout(dir.path);
    const { seen } = await probeSession({
      uid,
      dir: dir.path,
      workspace,
      home,
      commands: ['git status', 'git config --get user.name', 'env | grep ^GIT_CONFIG_ | sort'],
      calls: [],
      env: {
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_CONFIG_COUNT: '2',
        GIT_CONFIG_KEY_0: 'http.https://github.com/.extraheader',
        GIT_CONFIG_VALUE_0: `AUTHORIZATION: basic ${basic}`,
        GIT_CONFIG_KEY_1: 'user.name',
        GIT_CONFIG_VALUE_1: 'CI Bot',
      },
    });
    expect(seen).not.toContain(basic);
    expect(seen).not.toMatch(/missing config/);
    expect(seen).toMatch(/On branch \w+/);
    expect(seen).toContain('CI Bot');
    const variables = seen
      .split('\n')
      .filter((line) => /^GIT_CONFIG_(?:COUNT|KEY|VALUE)/.test(line));
    expect(variables).toEqual([
      'GIT_CONFIG_COUNT=1',
      'GIT_CONFIG_KEY_0=user.name',
      'GIT_CONFIG_VALUE_0=CI Bot',
    ]);
  });
});
