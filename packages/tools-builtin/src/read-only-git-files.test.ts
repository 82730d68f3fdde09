/**
 * Before a reading git command runs unasked, this process reads the repository's own git files
 * (`.git`, `commondir`, `config`, `config.worktree`) to see whether git would run a program. The
 * repository is untrusted: an unpacked archive can hold any of them as a FIFO (the read blocked
 * for ever, and the run with it), a link to `/dev/zero` (740 MB read before failing) or a huge
 * file. Each is refused at once, which makes the command ask; a test here that hangs is the failure.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { gitConfigRefusal } from './read-only-git.js';
import { makeTempDir } from './test-helpers.js';

type Plant = (file: string) => void;
const hostile: [string, Plant][] = [
  ['a FIFO', (file) => execFileSync('mkfifo', [file])],
  ['a link to /dev/zero', (file) => fs.symlinkSync('/dev/zero', file)],
  ['a folder', (file) => fs.mkdirSync(file)],
  [
    'a sparse file of 2 GB',
    (file) => {
      fs.writeFileSync(file, '');
      fs.truncateSync(file, 2 * 1024 ** 3);
    },
  ],
];

function repository(): { work: string; gitDir: string } {
  const work = makeTempDir();
  execFileSync('git', ['init', '-q', work]);
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

  it('an ordinary repository, a worktree file and a config of 1 MiB exactly still pass', async () => {
    const { work, gitDir } = repository();
    expect(await gitConfigRefusal(work)).toBeUndefined();
    const config = fs.readFileSync(path.join(gitDir, 'config'), 'utf8');
    fs.writeFileSync(
      path.join(gitDir, 'config'),
      config + '#'.repeat(1024 * 1024 - Buffer.byteLength(config) - 1) + '\n',
    );
    expect(fs.statSync(path.join(gitDir, 'config')).size).toBe(1024 * 1024);
    expect(await gitConfigRefusal(work)).toBeUndefined();
    const linked = makeTempDir();
    fs.writeFileSync(path.join(linked, '.git'), `gitdir: ${gitDir}\n`);
    expect(await gitConfigRefusal(linked)).toBeUndefined();
  });
});
