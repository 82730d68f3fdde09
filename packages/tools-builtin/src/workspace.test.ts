import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createReadFileTool } from './read-file.js';
import { makeTempDir, resultText, testContext } from './test-helpers.js';
import { isPathInside, Workspace } from './workspace.js';
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

  it('rejects NUL bytes in paths', async () => {
    await expect(new Workspace({ cwd: root }).resolve('a\0b', 'read')).rejects.toMatchObject({
      kind: 'invalid-args',
    });
  });

  it('confines any relative path exactly when it stays inside lexically (property)', async () => {
    const workspace = new Workspace({ cwd: root });
    const segment = fc.oneof(
      fc.constantFrom('..', '.', 'a', 'p', 'p-evil', 'b c', 'é', '日本', ''),
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
        const inside = isPathInside(root, lexical);
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
