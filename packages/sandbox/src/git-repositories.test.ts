import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findRepositories, repositorySearchLimits, watchRepositories } from './git-repositories.js';
import { homeStartupFiles, startupFilesToProtect } from './startup-files.js';

// Real repositories made by git itself (init, worktree, submodule, --separate-git-dir, --bare).

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function directory(): string {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'git-repositories-')));
  made.push(root);
  return root;
}

function git(cwd: string, ...args: string[]): void {
  execFileSync('git', ['-c', 'protocol.file.allow=always', ...args], {
    cwd,
    stdio: 'ignore',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@t',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@t',
    },
  });
}

function write(file: string, text = ''): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}

describe('findRepositories', () => {
  it('finds each kind of repository a workspace holds, and what their .git files point to', () => {
    const workspace = directory();
    const outside = directory();
    git(workspace, 'init', '-q', 'app');
    git(workspace, 'init', '-q', 'code/org/service/packages/lib');
    git(workspace, 'init', '-q', '--bare', 'mirror.git');
    fs.mkdirSync(path.join(workspace, 'store'));
    git(
      workspace,
      'init',
      '-q',
      `--separate-git-dir=${path.join(workspace, 'store/separate.git')}`,
      'separate',
    );
    // A worktree of a repository inside the workspace, and one of a repository outside it.
    write(path.join(workspace, 'app/file'), 'x');
    git(path.join(workspace, 'app'), 'add', 'file');
    git(path.join(workspace, 'app'), 'commit', '-qm', 'one');
    git(path.join(workspace, 'app'), 'worktree', 'add', '-q', path.join(workspace, 'app-feature'));
    git(outside, 'init', '-q', 'upstream');
    write(path.join(outside, 'upstream/file'), 'x');
    git(path.join(outside, 'upstream'), 'add', 'file');
    git(path.join(outside, 'upstream'), 'commit', '-qm', 'one');
    git(
      path.join(outside, 'upstream'),
      'worktree',
      'add',
      '-q',
      path.join(workspace, 'upstream-feature'),
    );
    // A submodule: its .git is a file pointing into the parent's .git/modules.
    git(
      path.join(workspace, 'app'),
      'submodule',
      'add',
      '-q',
      path.join(outside, 'upstream'),
      'vendor/upstream',
    );
    // A .git link to a git directory elsewhere in the workspace.
    git(workspace, 'init', '-q', '--bare', 'linked-store');
    fs.mkdirSync(path.join(workspace, 'linked'));
    fs.symlinkSync(path.join(workspace, 'linked-store'), path.join(workspace, 'linked/.git'));

    const search = findRepositories([workspace]);
    expect(search.incomplete).toBeUndefined();
    expect(search.paths.sort()).toEqual(
      [
        'app/.git', // holds the submodule's modules/ and the worktree's worktrees/ entry
        'code/org/service/packages/lib/.git',
        'mirror.git',
        'separate/.git',
        'store/separate.git',
        'app-feature/.git',
        'upstream-feature/.git', // its git directory is outside: read-only already
        'app/vendor/upstream/.git',
        'linked-store',
      ]
        .map((entry) => path.join(workspace, entry))
        .sort(),
    );
  });

  it('does not enter node_modules nor follow links to directories, and skips what it cannot read', () => {
    const workspace = directory();
    git(workspace, 'init', '-q', 'node_modules/dependency');
    git(workspace, 'init', '-q', 'packages/a/node_modules/dependency');
    const elsewhere = directory();
    git(elsewhere, 'init', '-q', 'repo');
    fs.symlinkSync(elsewhere, path.join(workspace, 'link-out'));
    fs.symlinkSync(path.join(workspace, 'packages'), path.join(workspace, 'link-in'));
    expect(findRepositories([workspace]).paths).toEqual([]);
  });

  it('stops at the depth, the directory count and the time limits, saying so for the last two', () => {
    const workspace = directory();
    git(workspace, 'init', '-q', 'one/two/three/shallow');
    git(workspace, 'init', '-q', 'one/two/three/four/five/six/deep');
    for (let index = 0; index < 30; index++) fs.mkdirSync(path.join(workspace, `wide-${index}`));
    const shallow = path.join(workspace, 'one/two/three/shallow/.git');
    const deep = path.join(workspace, 'one/two/three/four/five/six/deep/.git');

    expect(findRepositories([workspace]).paths.sort()).toEqual([deep, shallow].sort());
    const byDepth = findRepositories([workspace], { ...repositorySearchLimits, depth: 4 });
    expect(byDepth).toEqual({ paths: [shallow] });
    const byCount = findRepositories([workspace], { ...repositorySearchLimits, directories: 20 });
    expect(byCount.incomplete).toBe('stopped after 20 directories');
    expect(byCount.paths).toEqual([]);
    const byTime = findRepositories([workspace], { ...repositorySearchLimits, milliseconds: -1 });
    expect(byTime.incomplete).toMatch(/^stopped after -1 ms \(0 directories read\)$/);
  });

  it('reads a planted .git file or commondir without blocking on a FIFO, and ignores a .git FIFO', () => {
    const workspace = directory();
    fs.mkdirSync(path.join(workspace, 'fifo-file'));
    execFileSync('mkfifo', [path.join(workspace, 'fifo-file/.git')]);
    git(workspace, 'init', '-q', '--bare', 'store.git');
    execFileSync('mkfifo', [path.join(workspace, 'store.git/commondir')]);
    fs.mkdirSync(path.join(workspace, 'points'));
    write(path.join(workspace, 'points/.git'), 'gitdir: ../store.git\n');
    expect(findRepositories([workspace]).paths.sort()).toEqual(
      [path.join(workspace, 'points/.git'), path.join(workspace, 'store.git')].sort(),
    );
  });

  it('keeps a git directory a .git file names outside every root out of the list', () => {
    const workspace = directory();
    const outside = directory();
    fs.mkdirSync(path.join(workspace, 'sub'));
    write(path.join(workspace, 'sub/.git'), `gitdir: ${outside}\n`);
    write(path.join(workspace, 'garbage/.git'), 'not a gitfile');
    expect(findRepositories([workspace]).paths.sort()).toEqual(
      [path.join(workspace, 'garbage/.git'), path.join(workspace, 'sub/.git')].sort(),
    );
  });
});

describe('watchRepositories', () => {
  it('reports each repository made since the last check, once, however it was made', () => {
    const workspace = directory();
    const outside = directory();
    git(workspace, 'init', '-q', 'existing');
    fs.mkdirSync(path.join(workspace, 'src/deep/er'), { recursive: true });
    fs.mkdirSync(path.join(workspace, 'docs'));
    git(workspace, 'init', '-q', 'node_modules/dependency');
    const watch = watchRepositories([workspace]);
    expect(watch.paths()).toEqual([path.join(workspace, 'existing/.git')]);
    expect(watch.check()).toEqual([]);

    // At the root, in a new tree, in an existing deep folder (a .git file naming a directory
    // the command filled), a bare one, a tree moved in from node_modules (not searched).
    git(workspace, 'init', '-q');
    git(workspace, 'init', '-q', 'new/tree/app');
    git(workspace, 'init', '-q', '--bare', 'store');
    write(path.join(workspace, 'src/deep/er/.git'), 'gitdir: ../../../store\n');
    git(workspace, 'init', '-q', '--bare', 'docs/mirror.git');
    fs.renameSync(
      path.join(workspace, 'node_modules/dependency'),
      path.join(workspace, 'src/moved'),
    );
    // Setting a folder's times back hides nothing: its ctime moves on.
    execFileSync('touch', ['-d', '2001-01-01', path.join(workspace, 'src/deep/er')]);
    const expected = [
      '.git',
      'new/tree/app/.git',
      'store',
      'src/deep/er/.git',
      'docs/mirror.git',
      'src/moved/.git',
    ].map((entry) => path.join(workspace, entry));
    expect(watch.check().sort()).toEqual(expected.sort());
    expect(watch.check()).toEqual([]);
    expect(watch.paths()).toEqual(
      expect.arrayContaining([path.join(workspace, 'new/tree/app/.git')]),
    );

    // Removed (outside the sandbox) and made again: new again. In node_modules: not searched.
    fs.rmSync(path.join(workspace, 'new/tree/app/.git'), { recursive: true });
    expect(watch.check()).toEqual([]);
    git(workspace, 'init', '-q', 'new/tree/app');
    git(workspace, 'init', '-q', 'node_modules/other');
    git(outside, 'init', '-q', 'elsewhere');
    expect(watch.check()).toEqual([path.join(workspace, 'new/tree/app/.git')]);
  });
});

describe('watchRepositories, more directories than a check reads', () => {
  it('says a check was cut short, and the next ones go on where it stopped until the repository is found', () => {
    const root = directory();
    const watch = watchRepositories([root], { depth: 8, directories: 10, milliseconds: 60_000 });
    // A command hides a repository among more new directories than one check reads.
    for (let index = 0; index < 25; index++)
      fs.mkdirSync(path.join(root, 'flood', `d${index}`), { recursive: true });
    git(root, 'init', '-q', 'flood/d24/x');
    const found: string[] = [];
    const cuts: (string | undefined)[] = [];
    for (let check = 0; check < 5; check++) {
      found.push(...watch.check());
      cuts.push(watch.checkIncomplete);
    }
    expect(cuts[0]).toBe('stopped after 10 directories');
    expect(found).toEqual([path.join(root, 'flood/d24/x/.git')]);
    expect(cuts.at(-1)).toBeUndefined();
  });
});

describe('watchRepositories, a repository put where one was', () => {
  // Inside a sandbox the directories above are pinned (cannot be renamed); this is the second
  // line: a sandbox started before a repository existed did not pin them.
  it('reports one at the same path under a directory moved in since, not one edited in place', () => {
    const root = directory();
    git(root, 'init', '-q', 'vendor/lib');
    const watch = watchRepositories([root]);
    expect(watch.check()).toEqual([]);
    // git writing its own files inside .git, and the user replacing a file beside it: nothing.
    git(path.join(root, 'vendor/lib'), 'config', 'core.bare', 'false');
    write(path.join(root, 'vendor/README'), 'x');
    expect(watch.check()).toEqual([]);
    fs.renameSync(path.join(root, 'vendor'), path.join(root, 'node_modules-moved'));
    git(root, 'init', '-q', 'vendor/lib');
    expect(watch.check()).toContain(path.join(root, 'vendor/lib/.git'));
    expect(watch.check()).toEqual([]);
  });
});

describe('startupFilesToProtect', () => {
  it('lists the startup files that exist strictly inside a writable root (the home, ~/.config)', () => {
    const base = directory();
    const home = path.join(base, 'home');
    write(path.join(home, '.bashrc'), 'x');
    write(path.join(home, '.config/fish/config.fish'), 'x');
    fs.mkdirSync(path.join(home, '.local/bin'), { recursive: true });
    write(path.join(home, 'notes.txt'), 'x');
    const expected = ['.bashrc', '.config/fish', '.local/bin'].map((entry) =>
      path.join(home, entry),
    );
    expect(startupFilesToProtect(home, [home]).sort()).toEqual(expected.sort());
    expect(startupFilesToProtect(home, [base]).sort()).toEqual(expected.sort());
    expect(startupFilesToProtect(home, [path.join(home, 'project')])).toEqual([]);
    // A dotfiles repository at ~/.config: what lies in it is protected, not a root that is one.
    expect(startupFilesToProtect(home, [path.join(home, '.config')])).toEqual([
      path.join(home, '.config/fish'),
    ]);
    expect(startupFilesToProtect(home, [path.join(home, '.config/fish')])).toEqual([]);
  });

  it('follows a dotfile manager’s links to targets inside a root, drops dangling ones and those outside', () => {
    const base = directory();
    const outside = directory();
    const home = path.join(base, 'home');
    write(path.join(home, 'dotfiles/zshrc'), 'x');
    write(path.join(outside, 'profile'), 'x');
    fs.symlinkSync(path.join(home, 'dotfiles/zshrc'), path.join(home, '.zshrc'));
    fs.symlinkSync(path.join(outside, 'profile'), path.join(home, '.profile'));
    fs.symlinkSync(path.join(home, 'missing'), path.join(home, '.bashrc'));
    expect(startupFilesToProtect(home, [home])).toEqual([path.join(home, 'dotfiles/zshrc')]);
  });

  it('names the shells’ startup files, git, ssh and npm configuration and the PATH directories', () => {
    for (const entry of [
      '.bashrc',
      '.profile',
      '.bash_profile',
      '.zshrc',
      '.zshenv',
      '.config/fish',
      '.gitconfig',
      '.config/git',
      '.ssh/config',
      '.npmrc',
      '.local/bin',
    ]) {
      expect(homeStartupFiles).toContain(entry);
    }
  });
});
