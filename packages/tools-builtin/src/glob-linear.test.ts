/**
 * Globs come from the model (glob, list_files, search's include). picomatch turns one into a
 * JavaScript regular expression; run on JavaScript's backtracking engine, `*a*a*a*a*a*a*a*a*b`
 * took 86 s against one 60-character file name of a repository. They run on RE2 now. A test here
 * that hangs is the failure; the table checks the answers are picomatch's.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import picomatch from 'picomatch';
import { describe, expect, it } from 'vitest';
import { createGlobTool } from './glob.js';
import { createListFilesTool } from './list-files.js';
import { createSearchTool } from './search.js';
import { createTypeScriptEngine } from './search-engines.js';
import { globMatcher } from './search-worker.js';
import { makeTempDir, resultText, testContext } from './test-helpers.js';
import { nodeFileSystem } from './workspace.js';

const hostile = ['*a*a*a*a*a*a*a*a*b', '**/*a*a*a*a*a*a*a*a*a*a*b', 'x/**/a*a*a*a*a*a*a*a*a*b'];

describe('hostile globs', () => {
  it.each(hostile)('%s against long names of a', (glob) => {
    const match = globMatcher(glob);
    expect(match('a'.repeat(60))).toBe(false);
    expect(match(`x/${'a/'.repeat(30)}${'a'.repeat(200)}`)).toBe(false);
    const found = `${'a'.repeat(12)}b`;
    expect(glob.includes('/') ? match(`x/${found}`) : match(found)).toBe(true);
  });

  it('through glob, list_files and search', async () => {
    const dir = makeTempDir();
    fs.writeFileSync(path.join(dir, 'a'.repeat(60)), 'needle\n');
    fs.writeFileSync(path.join(dir, `${'a'.repeat(10)}b`), 'needle\n');
    const glob = createGlobTool({ cwd: dir });
    expect(resultText(await glob.execute({ pattern: hostile[0] as string }, testContext()))).toBe(
      `${'a'.repeat(10)}b`,
    );
    const list = createListFilesTool({ cwd: dir });
    expect(
      resultText(await list.execute({ pattern: hostile[0] as string }, testContext())),
    ).toContain(`${'a'.repeat(10)}b`);
    const search = createSearchTool({
      cwd: dir,
      engine: createTypeScriptEngine({ fs: nodeFileSystem, workers: 0 }),
    });
    expect(
      resultText(
        await search.execute(
          { pattern: 'needle', include: hostile[0] as string, output_mode: 'files_with_matches' },
          testContext(),
        ),
      ),
    ).toBe(`${'a'.repeat(10)}b`);
    await expect(
      search.execute({ pattern: 'needle', include: '!(a)' }, testContext()),
    ).rejects.toMatchObject({ kind: 'invalid-args' });
  });
});

describe('answers as picomatch gives them', () => {
  const globs = [
    '*.ts',
    '**/*.ts',
    'src/**/*.{ts,tsx}',
    'a?c',
    '[abc]*.md',
    '*a*b*',
    '!*.ts',
    '+(a|b)',
    'foo/**',
    '**',
    '.github/**',
    '**/.env*',
    'a/**/b/**/c',
    '*.[jt]s',
    '**/test/*.spec.?s',
  ];
  const paths = [
    'a.ts',
    'src/a.ts',
    'src/x/y.tsx',
    'abc',
    'a/c',
    'b.md',
    'ab',
    'foo',
    'foo/bar/baz',
    '.github/workflows/ci.yml',
    'x/.env.local',
    '.env',
    'a/b/c',
    'a/x/b/y/z/c',
    'src/test/a.spec.ts',
    'abab',
  ];
  it.each(globs)('%s', (glob) => {
    for (const basename of [false, true]) {
      const ours = globMatcher(glob, { basename });
      const theirs = picomatch(glob, { dot: true, basename });
      for (const candidate of paths)
        expect({ glob, basename, candidate, matches: ours(candidate) }).toEqual({
          glob,
          basename,
          candidate,
          matches: theirs(candidate),
        });
    }
  });
});
