import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runBashLines, toolResults } from '../testing/bash-lines.js';
import { assertBuilt, tempDir } from '../testing/test-support.js';

// In read-only mode (-p's default), `git grep` runs unasked as a reading command; its
// `-O<pager>` option (which runs the pager with the matching files as its arguments) was refused
// only as a word starting with `-O`. git's parser also takes it bundled after other short
// options (`-lOrm`) and `--open-files-in-pager` by any unambiguous prefix (`--open-files=rm`):
// `git grep -lOrm TODO` deleted every tracked file holding TODO, in read-only mode, unasked.
// xxd reads each word as one option by its first letter: `-ps` is its postscript flag, which
// the list took for `-p` then `-s <offset>` eating the next word — `xxd -ps a.txt b.txt` passed
// for one file read and overwrote b.txt. Real CLI, real bubblewrap, real git and xxd.

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});
beforeAll(() => assertBuilt());
beforeEach(skipWithout('bwrap'));

async function repository() {
  const dir = await tempDir('agent-cli-ro-git-');
  cleanups.push(dir.dispose);
  const workspace = join(dir.path, 'ws');
  execFileSync('git', ['init', '-q', workspace]);
  await writeFile(join(workspace, 'a.txt'), 'TODO one\n');
  await writeFile(join(workspace, 'b.txt'), 'TODO two\n');
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', workspace, '-c', 'user.name=t', '-c', 'user.email=t@t', ...args]);
  git('add', '.');
  git('commit', '-q', '-m', 'files');
  return { dir: dir.path, workspace };
}

async function run(
  setup: { dir: string; workspace: string },
  command: string,
  sandbox: 'required' | 'off' = 'required',
) {
  const { code, stdout } = await runBashLines(
    setup,
    [command],
    ['--mode', 'read-only', '--sandbox', sandbox],
  );
  return { code, result: toolResults(stdout)[0] };
}

describe('git grep in read-only mode', () => {
  it.for([
    'git grep -lOrm TODO',
    'git grep -nOrm TODO',
    'git -P grep -iOrm todo',
    'git grep --open-files=rm TODO',
    'git grep --open=rm TODO',
    'git grep --open-files-in=rm TODO',
  ])('%s is asked (denied in -p): no file is removed', async (command) => {
    const setup = await repository();
    const { code, result } = await run(setup, command);
    expect(result?.errorKind).toBe('denied');
    expect(readdirSync(setup.workspace).sort()).toEqual(['.git', 'a.txt', 'b.txt']);
    expect(code).toBe(4);
  });

  it('git grep that only reads still runs unasked', async () => {
    const setup = await repository();
    const { code, result } = await run(setup, 'git grep -ln TODO');
    expect(result?.errorKind).toBeUndefined();
    expect(result?.text).toContain('a.txt');
    expect(code).toBe(0);
  });
});

describe('xxd in read-only mode', () => {
  it.for(['xxd -ps a.txt b.txt', 'xxd -seek 0 a.txt b.txt', 'xxd -pso 0 a.txt b.txt'])(
    '%s is asked (denied in -p): b.txt is not written',
    async (command, context) => {
      skipWithout('xxd')(context);
      const setup = await repository();
      const { code, result } = await run(setup, command);
      expect(result?.errorKind).toBe('denied');
      expect(readFileSync(join(setup.workspace, 'b.txt'), 'utf8')).toBe('TODO two\n');
      expect(code).toBe(4);
    },
  );

  it('xxd -ps of one file still runs unasked', async (context) => {
    skipWithout('xxd')(context);
    const setup = await repository();
    const { code, result } = await run(setup, 'xxd -ps a.txt');
    expect(result?.errorKind).toBeUndefined();
    expect(result?.text).toContain('544f444f206f6e650a');
    expect(code).toBe(0);
  });
});

describe('od in read-only mode without the sandbox', () => {
  it('od -c -w <a file outside the workspace> is asked (denied in -p): the file is not read', async () => {
    const setup = await repository();
    const outside = join(setup.dir, 'outside-secret');
    await writeFile(outside, 'SECRET-OUTSIDE\n');
    const { code, result } = await run(setup, `od -c -w ${outside}`, 'off');
    expect(result?.errorKind).toBe('denied');
    expect(result?.text).not.toContain('S   E   C   R   E   T');
    expect(code).toBe(4);
    const inside = await run(setup, 'od -c -w8 a.txt', 'off');
    expect(inside.result?.errorKind).toBeUndefined();
    expect(inside.code).toBe(0);
  });
});
