/**
 * The newest tool result reaches the model whole (core clips only older ones), so each tool
 * bounds its own output whatever the model asks for.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createGlobTool } from './glob.js';
import { createListFilesTool } from './list-files.js';
import { makeTempDir, resultText, testContext } from './test-helpers.js';

function tree(files: number): string {
  const dir = makeTempDir();
  fs.mkdirSync(path.join(dir, 'many'));
  for (let i = 0; i < files; i++)
    fs.writeFileSync(path.join(dir, 'many', `file-with-a-rather-long-name-number-${i}.txt`), '');
  return dir;
}

describe('glob', () => {
  it('a limit of a million over 5,000 files returns at most maxOutputChars, and says how many more', async () => {
    const dir = tree(5_000);
    const glob = createGlobTool({ cwd: dir });
    const result = await glob.execute({ pattern: '**/*', limit: 1_000_000 }, testContext());
    const text = resultText(result);
    // Before: 248,889 characters (every path).
    expect(text.length).toBeLessThanOrEqual(50_200);
    expect(text).toMatch(
      /\n\[\d+ more not shown: the result stops at 50000 characters; narrow the pattern or the path\.\]$/,
    );
    const shown = text.split('\n').length - 1;
    expect(result.details).toMatchObject({ shown, total: 5_000 });
  });

  it('maxOutputChars is an option; limit still applies below it', async () => {
    const dir = tree(300);
    const small = createGlobTool({ cwd: dir, maxOutputChars: 1_000 });
    const capped = resultText(await small.execute({ pattern: '**/*', limit: 500 }, testContext()));
    expect(capped.length).toBeLessThan(1_200);
    expect(capped).toContain('the result stops at 1000 characters');
    const glob = createGlobTool({ cwd: dir });
    const limited = resultText(await glob.execute({ pattern: '**/*', limit: 10 }, testContext()));
    expect(limited.split('\n')).toHaveLength(11);
    expect(limited).toMatch(/\[290 more not shown; raise limit or narrow the pattern\.\]$/);
  });
});

describe('list_files', () => {
  it('1,200 files of 250-character names: at most maxOutputChars, cut at a whole entry, said so', async () => {
    const dir = makeTempDir();
    for (let i = 0; i < 1_200; i++)
      fs.writeFileSync(path.join(dir, `${String(i).padStart(5, '0')}-${'n'.repeat(240)}.txt`), '');
    const list = createListFilesTool({ cwd: dir });
    const result = await list.execute({ path: '.' }, testContext());
    const text = resultText(result);
    // Before: 253,075 characters (1,000 entries).
    expect(text.length).toBeLessThanOrEqual(50_200);
    const shown = text.split('\n').filter((line) => line.startsWith('  ')).length;
    expect(text).toMatch(
      new RegExp(
        `\\n\\[Listing cut at 50000 characters \\(${shown} entries shown\\); list a subdirectory or lower depth\\.\\]$`,
      ),
    );
    expect(
      text
        .split('\n')
        .slice(1, -1)
        .every((line) => line.endsWith('.txt')),
    ).toBe(true);
    expect(result.details).toMatchObject({ entries: shown, truncated: true });
  });
});
