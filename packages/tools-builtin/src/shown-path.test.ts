/**
 * File names are the workspace's (a cloned repository's) to choose: any byte but `/` and NUL. In
 * a listing a newline in one forged an entry, a CR or escape sequence rewrote the line, a bidi
 * override reversed it. Such names are shown as JSON strings — what the model writes back.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { StaticToolExecutor } from '@agent/core';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { BackgroundTasks } from './background-tasks.js';
import { defaultTools } from './default-tools.js';
import { shownPath } from './shown-path.js';
import { makeTempDir } from './test-helpers.js';

const sessions: BackgroundTasks[] = [];
afterAll(async () => {
  await Promise.all(sessions.map((session) => session.close()));
});

function workspace() {
  const cwd = makeTempDir();
  const backgroundTasks = new BackgroundTasks();
  sessions.push(backgroundTasks);
  const tools = new StaticToolExecutor();
  for (const tool of defaultTools({ cwd, backgroundTasks, bash: { sandbox: 'off' } }))
    tools.register(tool);
  return { cwd, tools };
}

const hostileNames = [
  ['a newline forging a second entry', 'notes\nsrc'],
  ['a carriage return', 'ok.txt\rsecret.txt'],
  ['an escape sequence', 'name\u001b[2Jx'],
  ['a C1 CSI', 'name\u009b31mx'],
  ['a right-to-left override', '\u202etxt.exe'],
  ['a line separator', 'one\u2028two'],
  ['a leading quote', '"quoted".txt'],
] as const;

describe('names with unprintable characters in listings', () => {
  it.each(hostileNames)('%s: glob, list_files and search show one quoted line', async (_, name) => {
    const { cwd, tools } = workspace();
    fs.writeFileSync(path.join(cwd, name), 'needle\n');
    fs.writeFileSync(path.join(cwd, 'plain.txt'), 'needle\n');
    const quoted = JSON.stringify(name).replace(
      /[\u0080-\u009f\u2028\u2029\u202a-\u202e]/g,
      (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`,
    );
    const glob = String(await tools.execute('glob', { pattern: '*' }));
    expect(glob.split('\n').sort()).toEqual([quoted, 'plain.txt'].sort());
    const list = String(await tools.execute('list_files', { path: '.' }));
    expect(list.split('\n').sort()).toEqual(['./', `  ${quoted}`, '  plain.txt'].sort());
    const found = String(await tools.execute('search', { pattern: 'needle' }));
    expect(found.split('\n').sort()).toEqual([`${quoted}:1:needle`, 'plain.txt:1:needle'].sort());
    // The name shown, written back as JSON, is the file.
    const back = JSON.parse(quoted) as string;
    expect(String(await tools.execute('read_file', { path: back }))).toContain('needle');
  });

  it('a forged entry in a folder name cannot pose as a file in the tree', async () => {
    const { cwd, tools } = workspace();
    fs.mkdirSync(path.join(cwd, 'evil\nsrc'));
    fs.writeFileSync(path.join(cwd, 'evil\nsrc', 'fake.ts'), 'needle\n');
    expect(String(await tools.execute('glob', { pattern: '**/*.ts' }))).toBe(
      '"evil\\nsrc/fake.ts"',
    );
    expect(String(await tools.execute('list_files', { path: '.' }))).toBe(
      './\n  "evil\\nsrc"/\n    fake.ts',
    );
    expect(String(await tools.execute('write_file', { path: 'a\nb.txt', content: 'x' }))).toBe(
      'Created "a\\nb.txt" (1 bytes).',
    );
  });

  it('printable names (any script, spaces, quotes inside) are shown as they are', () => {
    for (const name of [
      'src/index.ts',
      'naïve café.md',
      '日本語/ファイル.txt',
      'it\'s "x".md',
      'a\\b',
    ])
      expect(shownPath(name)).toBe(name);
  });

  // Any UTF-16 unit (lone surrogates too), weighted towards the characters that get escaped.
  const names = fc
    .array(
      fc.oneof(
        fc.constantFrom(
          '\n',
          '\r',
          '\t',
          '\u001b',
          '\u0085',
          '\u009b',
          '\u2028',
          '\u202e',
          '"',
          '\\',
        ),
        fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code)),
      ),
      { maxLength: 40 },
    )
    .map((units) => units.join(''));

  it('a quoted name always parses back to the name, and is one line', () => {
    fc.assert(
      fc.property(names, (name) => {
        const shown = shownPath(name);
        if (/[\n\r\u2028\u2029]/.test(shown)) return false;
        return shown === name || JSON.parse(shown) === name;
      }),
    );
  });
});
