import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createEditFileTool } from './edit-file.js';
import { isPathInside } from './path-inside.js';
import { createReadFileTool } from './read-file.js';
import { makeTempDir, resultText, swapBeforeOpen, testContext } from './test-helpers.js';
import { Workspace } from './workspace.js';
import { createWriteFileTool } from './write-file.js';

let base: string;
let root: string;

beforeEach(() => {
  base = makeTempDir();
  root = path.join(base, 'p');
  fs.mkdirSync(root);
  fs.mkdirSync(path.join(base, 'p-evil'));
  fs.writeFileSync(path.join(base, 'p-evil', 'a'), 'secret');
  fs.writeFileSync(path.join(root, 'ok.txt'), 'fine\n');
  fs.symlinkSync('/etc/passwd', path.join(root, 'leak'));
  fs.symlinkSync(os.tmpdir(), path.join(root, 'lnk'));
  fs.symlinkSync(path.join(base, 'p-evil', 'nothing-yet.txt'), path.join(root, 'dangling'));
  fs.mkdirSync(path.join(root, 'inner'));
  fs.symlinkSync(path.join(root, 'ok.txt'), path.join(root, 'inner', 'alias.txt'));
});

afterEach(() => {
  fs.rmSync(base, { recursive: true, force: true });
});

describe('workspace confinement', () => {
  const read = () => createReadFileTool({ cwd: root });
  const write = () => createWriteFileTool({ cwd: root });

  it('denies a sibling directory that shares the root as a string prefix', async () => {
    await expect(
      read().execute({ path: path.join(base, 'p-evil', 'a') }, testContext()),
    ).rejects.toMatchObject({
      kind: 'denied',
    });
  });

  it('denies a symlink inside the root that points outside (/etc/passwd)', async () => {
    await expect(read().execute({ path: 'leak' }, testContext())).rejects.toMatchObject({
      kind: 'denied',
    });
    await expect(read().permissionSubjects?.({ path: 'leak' })).rejects.toMatchObject({
      kind: 'denied',
    });
  });

  it('denies writing a new file under a symlinked directory that points outside', async () => {
    await expect(
      write().execute({ path: 'lnk/new.txt', content: 'x' }, testContext()),
    ).rejects.toMatchObject({
      kind: 'denied',
    });
    expect(fs.existsSync(path.join(os.tmpdir(), 'new.txt'))).toBe(false);
  });

  it('denies writing through a dangling symlink that points outside', async () => {
    await expect(
      write().execute({ path: 'dangling', content: 'x' }, testContext()),
    ).rejects.toMatchObject({
      kind: 'denied',
    });
    expect(fs.existsSync(path.join(base, 'p-evil', 'nothing-yet.txt'))).toBe(false);
  });

  it('denies .. escapes, relative and absolute', async () => {
    for (const outside of ['../p-evil/a', 'inner/../../p-evil/a', `${root}/../p-evil/a`, '..']) {
      await expect(read().execute({ path: outside }, testContext())).rejects.toMatchObject({
        kind: 'denied',
      });
    }
  });

  it('allows symlinks that stay inside and reports the real path as the subject', async () => {
    const result = await read().execute({ path: 'inner/alias.txt' }, testContext());
    expect(resultText(result)).toContain('fine');
    expect(await read().permissionSubjects?.({ path: 'inner/alias.txt' })).toEqual([
      path.join(root, 'ok.txt'),
    ]);
  });

  it('works with unicode paths', async () => {
    const name = 'données/日本語 ファイル 🎉.txt';
    const written = await write().execute({ path: name, content: 'héllo\n' }, testContext());
    expect(resultText(written)).toContain('Created');
    const result = await read().execute({ path: name }, testContext());
    expect(resultText(result)).toContain('héllo');
    expect(fs.readFileSync(path.join(root, name), 'utf8')).toBe('héllo\n');
  });

  it('allows every root of several, and read-only roots only for reading', async () => {
    const other = path.join(base, 'p-evil');
    const workspace = new Workspace({ cwd: root, readOnlyRoots: [other] });
    expect(await workspace.resolve(path.join(other, 'a'), 'read')).toBe(path.join(other, 'a'));
    await expect(workspace.resolve(path.join(other, 'a'), 'write')).rejects.toMatchObject({
      kind: 'denied',
    });
    const both = new Workspace({ cwd: root, roots: [root, other] });
    expect(await both.resolve(path.join(other, 'a'), 'write')).toBe(path.join(other, 'a'));
  });

  it('refuses ~ paths (not expanded) instead of creating a directory named ~', async () => {
    for (const input of ['~', '~/.bashrc']) {
      await expect(
        write().execute({ path: input, content: 'x' }, testContext()),
      ).rejects.toMatchObject({ kind: 'invalid-args' });
    }
    expect(fs.existsSync(path.join(root, '~'))).toBe(false);
    // A name that merely starts with ~ is an ordinary file name.
    expect(
      resultText(await write().execute({ path: '~x', content: 'y' }, testContext())),
    ).toContain('Created');
  });

  it('write_file refuses a symlink to outside and a directory; the targets are unchanged', async () => {
    const passwd = fs.readFileSync('/etc/passwd', 'utf8');
    await expect(
      write().execute({ path: 'leak', content: 'pwned' }, testContext()),
    ).rejects.toMatchObject({ kind: 'denied' });
    expect(fs.readFileSync('/etc/passwd', 'utf8')).toBe(passwd);
    await expect(write().execute({ path: 'inner', content: 'x' }, testContext())).rejects.toThrow(
      /is a directory/,
    );
    expect(fs.statSync(path.join(root, 'inner')).isDirectory()).toBe(true);
  });

  it('rejects NUL bytes in paths', async () => {
    await expect(new Workspace({ cwd: root }).resolve('a\0b', 'read')).rejects.toMatchObject({
      kind: 'invalid-args',
    });
  });

  it('confines any relative path exactly when it stays inside lexically (property)', async () => {
    const workspace = new Workspace({ cwd: root });
    const segment = fc.oneof(
      fc.constantFrom('..', '.', 'a', 'p', 'p-evil', 'b c', 'é', '日本', '', '~'),
      fc
        .string({ minLength: 1, maxLength: 6 })
        .filter((s) => !s.includes('/') && !s.includes('\0')),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(segment, { minLength: 1, maxLength: 6 }), async (segments) => {
        // Avoid the symlinks created above: they are tested explicitly.
        fc.pre(!['leak', 'lnk', 'dangling', 'inner', 'ok.txt'].includes(segments[0] ?? ''));
        const input = segments.join('/');
        const lexical = path.resolve(root, input);
        // `~` and `~/…` are refused (not expanded), whatever follows.
        const inside = isPathInside(root, lexical) && input !== '~' && !input.startsWith('~/');
        const outcome = await workspace.resolve(input, 'write').then(
          (real) => ({ ok: true as const, real }),
          (error: unknown) => ({ ok: false as const, error }),
        );
        if (inside) {
          expect(outcome.ok).toBe(true);
          if (outcome.ok) expect(isPathInside(root, outcome.real)).toBe(true);
        } else {
          expect(outcome.ok).toBe(false);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('compares by path segments, not string prefixes', () => {
    expect(isPathInside('/w/p', '/w/p')).toBe(true);
    expect(isPathInside('/w/p', '/w/p/a/b')).toBe(true);
    expect(isPathInside('/w/p', '/w/p-evil/a')).toBe(false);
    expect(isPathInside('/w/p', '/w/p/../p-evil')).toBe(false);
    expect(isPathInside('/w/p', '/w/p/..foo')).toBe(true);
    expect(isPathInside('/', '/etc')).toBe(true);
  });
});

describe('confinement under a symlink race (check, then swap, then open)', () => {
  it('read_file refuses a file swapped for a symlink to outside after the check', async () => {
    const target = path.join(root, 'ok.txt');
    const fsOps = swapBeforeOpen('ok.txt', () => {
      fs.rmSync(target);
      fs.symlinkSync(path.join(base, 'p-evil', 'a'), target);
    });
    const call = createReadFileTool({ cwd: root, fs: fsOps }).execute(
      { path: 'ok.txt' },
      testContext(),
    );
    await expect(call).rejects.toMatchObject({ kind: 'denied' });
  });

  it('read_file refuses a parent directory swapped for a symlink to outside after the check', async () => {
    fs.mkdirSync(path.join(root, 'sub'));
    fs.writeFileSync(path.join(root, 'sub', 'a'), 'inside');
    const fsOps = swapBeforeOpen(`${path.sep}sub${path.sep}a`, () => {
      fs.rmSync(path.join(root, 'sub'), { recursive: true });
      fs.symlinkSync(path.join(base, 'p-evil'), path.join(root, 'sub'));
    });
    const call = createReadFileTool({ cwd: root, fs: fsOps }).execute(
      { path: 'sub/a' },
      testContext(),
    );
    await expect(call).rejects.toMatchObject({ kind: 'denied' });
  });

  it('write_file and edit_file refuse a directory swapped for a symlink to outside; nothing lands outside', async () => {
    const evil = path.join(base, 'p-evil');
    const swap = () => {
      fs.rmSync(path.join(root, 'sub'), { recursive: true, force: true });
      fs.symlinkSync(evil, path.join(root, 'sub'));
    };
    fs.mkdirSync(path.join(root, 'sub'));
    // The temp file of the atomic write is what gets opened in the swapped directory.
    const write = createWriteFileTool({ cwd: root, fs: swapBeforeOpen('.tmp', swap) });
    await expect(
      write.execute({ path: 'sub/new.txt', content: 'x' }, testContext()),
    ).rejects.toMatchObject({ kind: 'denied' });
    expect(fs.readdirSync(evil).sort()).toEqual(['a']);

    fs.unlinkSync(path.join(root, 'sub'));
    fs.mkdirSync(path.join(root, 'sub'));
    fs.writeFileSync(path.join(root, 'sub', 'a'), 'inside');
    const edit = createEditFileTool({ cwd: root, fs: swapBeforeOpen(`sub${path.sep}a`, swap) });
    await expect(
      edit.execute({ path: 'sub/a', old_string: 'secret', new_string: 'pwned' }, testContext()),
    ).rejects.toMatchObject({ kind: 'denied' });
    expect(fs.readFileSync(path.join(evil, 'a'), 'utf8')).toBe('secret');
  });
});
