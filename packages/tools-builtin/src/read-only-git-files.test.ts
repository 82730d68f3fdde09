/**
 * Before a reading git command runs unasked, this process reads the repository's own git files
 * (`.git`, `commondir`, `config`, `config.worktree`) to see whether git would run a program. The
 * repository is untrusted: an unpacked archive can hold any of them as a FIFO (the read blocked
 * for ever, and the run with it), a link to `/dev/zero` (740 MB read before failing) or a huge
 * file. Each is refused at once, which makes the command ask; a test here that hangs is the failure.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { gitConfigRefusal } from './read-only-git.js';
import { hostilePlants as hostile, makeTempDir } from './test-helpers.js';

/**
 * Runs git; a failure says how it ended (exit status or signal, and its stderr) — in CI a
 * `git init` here once failed with nothing more than "Command failed".
 */
function runGit(cwd: string | undefined, args: string[]): void {
  const result = spawnSync('git', args, {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  if (result.status === 0) return;
  const how =
    result.error?.message ??
    (result.signal === null ? `exit ${result.status}` : `signal ${result.signal}`);
  throw new Error(`git ${args.join(' ')}: ${how}; stderr: ${result.stderr ?? ''}`);
}

function repository(): { work: string; gitDir: string } {
  const work = makeTempDir();
  runGit(undefined, ['init', '-q', work]);
  return { work, gitDir: path.join(work, '.git') };
}

describe("a repository's git files that are not small regular files", () => {
  it.each(hostile)('.git/config as %s: refused, naming it', async (_label, plant) => {
    const { work, gitDir } = repository();
    fs.rmSync(path.join(gitDir, 'config'));
    plant(path.join(gitDir, 'config'));
    expect(await gitConfigRefusal(work)).toBe(
      `${path.join(gitDir, 'config')} cannot be read (not a regular file of at most 1048576 bytes)`,
    );
  });

  it.each(hostile)('.git/config.worktree as %s: refused', async (_label, plant) => {
    const { work, gitDir } = repository();
    plant(path.join(gitDir, 'config.worktree'));
    expect(await gitConfigRefusal(work)).toContain('config.worktree cannot be read');
  });

  it.each(hostile)('a commondir as %s: refused', async (_label, plant) => {
    const { work, gitDir } = repository();
    plant(path.join(gitDir, 'commondir'));
    expect(await gitConfigRefusal(work)).toContain('commondir cannot be read');
  });

  it.each(hostile.filter(([label]) => label !== 'a folder'))(
    'a .git that is %s (where a gitdir: file may stand): refused',
    async (_label, plant) => {
      const work = makeTempDir();
      plant(path.join(work, '.git'));
      expect(await gitConfigRefusal(work)).toBe('a .git file that does not name its git directory');
    },
  );

  it("a .git folder's commondir that moves the configuration elsewhere: that config is checked", async () => {
    const { work, gitDir } = repository();
    fs.mkdirSync(path.join(work, '.common'));
    fs.writeFileSync(
      path.join(work, '.common', 'config'),
      '[core]\n\tfsmonitor = "touch CANARY; false"\n',
    );
    fs.writeFileSync(path.join(gitDir, 'commondir'), '../.common\n');
    expect(await gitConfigRefusal(work)).toBe(
      `${path.join(work, '.common', 'config')} sets "fsmonitor", which git may run on a read`,
    );
  });

  it.each([
    ['its uploadpack', ['remote.origin.uploadpack', 'touch CANARY; git-upload-pack']],
    ['an ext:: URL', ['remote.origin.url', 'ext::sh -c touch% CANARY']],
  ])(
    'a partial clone whose promisor remote runs %s on a read: refused',
    async (_label, setting) => {
      const source = makeTempDir();
      const git = (cwd: string, ...args: string[]) => runGit(cwd, args);
      git(source, 'init', '-q');
      fs.writeFileSync(path.join(source, 'a.txt'), 'hello\n');
      git(source, 'add', '.');
      git(source, '-c', 'user.name=a', '-c', 'user.email=b', 'commit', '-qm', 'one');
      git(source, 'config', 'uploadpack.allowFilter', 'true');
      const work = path.join(makeTempDir(), 'clone');
      git(
        path.dirname(work),
        'clone',
        '-q',
        '--no-local',
        '--filter=blob:none',
        '--no-checkout',
        `file://${source}`,
        work,
      );
      // A plain partial clone already has a promisor remote: a read may fetch.
      expect(await gitConfigRefusal(work)).toContain('sets "promisor"');
      const [key = '', value = ''] = setting ?? [];
      git(work, 'config', key, value);
      git(work, 'config', 'protocol.ext.allow', 'always');
      expect(await gitConfigRefusal(work)).toContain('which git may run on a read');
      // Control: git itself runs it on `git show` of a blob not fetched yet.
      spawnSync('git', ['show', 'HEAD:a.txt'], { cwd: work, stdio: 'ignore' });
      expect(fs.existsSync(path.join(work, 'CANARY'))).toBe(true);
    },
  );

  it('an ordinary repository, a worktree file and a config of 1 MiB exactly still pass', async () => {
    const { work, gitDir } = repository();
    expect(await gitConfigRefusal(work)).toBeUndefined();
    const config = fs.readFileSync(path.join(gitDir, 'config'), 'utf8');
    fs.writeFileSync(
      path.join(gitDir, 'config'),
      `${config + '#'.repeat(1024 * 1024 - Buffer.byteLength(config) - 1)}\n`,
    );
    expect(fs.statSync(path.join(gitDir, 'config')).size).toBe(1024 * 1024);
    expect(await gitConfigRefusal(work)).toBeUndefined();
    const linked = makeTempDir();
    fs.writeFileSync(path.join(linked, '.git'), `gitdir: ${gitDir}\n`);
    expect(await gitConfigRefusal(linked)).toBeUndefined();
  });
});
