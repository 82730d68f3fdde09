// notebook_edit rewrites the cell it edits and nothing else. Before, the whole file was
// re-serialised: in cells the edit never touched, `1.0` became `1`, `3.10` became `3.1`,
// `12345678901234567890` became `12345678901234567000`, `"\u00e9"` became `"é"`, `\/` became
// `/`, and one-line metadata was reflowed. Each file below is edited every way; the bytes outside
// the edited cell must be the original's, and the file must parse as the edited notebook.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createNotebookEditTool } from './notebook.js';
import { makeTempDir, testContext } from './test-helpers.js';

/** A cell written by hand, the way other tools write them: numbers and escapes JSON.stringify would change. */
function cell(marker: string, indent: string, newline: string): string {
  const lines = [
    '{',
    ` "cell_type": "code",`,
    ` "execution_count": 1,`,
    ` "id": "${marker}",`,
    ` "metadata": {"marker": "${marker}", "scrolled": 1.0, "big": 12345678901234567890, "e": 1e5, "zero": -0.0, "v": 3.10},`,
    ` "outputs": [{"output_type": "stream", "name": "stdout", "text": ["]}{[ \\"cells\\": [ caf\\u00e9 \\/ done\\n"]}],`,
    ` "source": ["x = \\"caf\\u00e9\\" \\/ 2  # ${marker}"]`,
    '}',
  ];
  return lines.map((line, index) => (index === 0 ? line : `${indent}${line}`)).join(newline);
}

function notebookText(
  markers: string[],
  style: 'jupyter' | 'two' | 'tabs' | 'crlf' | 'minified',
): string {
  if (style === 'minified') {
    const cells = markers.map((marker) => cell(marker, '', '').replace(/\n/g, ''));
    return `{"cells":[${cells.join(',')}],"metadata":{"v":3.10},"nbformat":4,"nbformat_minor":5}`;
  }
  const unit = style === 'two' ? '  ' : style === 'tabs' ? '\t' : ' ';
  const newline = style === 'crlf' ? '\r\n' : '\n';
  const inner = unit.repeat(2);
  const cells = markers.map((marker) => `${inner}${cell(marker, inner, newline)}`);
  return [
    '{',
    `${unit}"cells": [`,
    cells.join(`,${newline}`),
    `${unit}],`,
    `${unit}"metadata": {"kernelspec": {"name": "python3"}, "version": 3.10},`,
    `${unit}"nbformat": 4,`,
    `${unit}"nbformat_minor": 5`,
    '}',
    '',
  ].join(newline);
}

/** The part of `after` that differs from `before`: between their common prefix and suffix. */
function changedRegion(before: string, after: string): string {
  let prefix = 0;
  while (prefix < before.length && before[prefix] === after[prefix]) prefix++;
  let suffix = 0;
  while (
    suffix < before.length - prefix &&
    before[before.length - 1 - suffix] === after[after.length - 1 - suffix]
  )
    suffix++;
  return before.slice(prefix, before.length - suffix);
}

const styles = ['jupyter', 'two', 'tabs', 'crlf', 'minified'] as const;
const edits: [string, Record<string, unknown>, string[]][] = [
  // name, arguments, markers of cells the edit may touch
  ['replace the middle cell', { edit_mode: 'replace', cell_id: 'm1', new_source: 'y = 2' }, ['m1']],
  [
    'replace the first cell by index',
    { edit_mode: 'replace', cell_index: 0, new_source: 'y' },
    ['m0'],
  ],
  ['retype the last cell', { edit_mode: 'replace', cell_id: 'm2', cell_type: 'markdown' }, ['m2']],
  ['delete the first cell', { edit_mode: 'delete', cell_index: 0 }, ['m0']],
  ['delete the middle cell', { edit_mode: 'delete', cell_id: 'm1' }, ['m1']],
  ['delete the last cell', { edit_mode: 'delete', cell_id: 'm2' }, ['m2']],
  ['insert first', { edit_mode: 'insert', cell_index: 0, new_source: 'new' }, []],
  ['insert after the middle cell', { edit_mode: 'insert', cell_id: 'm1', new_source: 'new' }, []],
  ['insert at the end', { edit_mode: 'insert', cell_index: 3, new_source: 'new' }, []],
];

describe.each(styles)('a %s notebook', (style) => {
  it.each(edits)('%s: every other byte stays', async (_name, args, touched) => {
    const cwd = makeTempDir();
    const file = path.join(cwd, 'nb.ipynb');
    const before = notebookText(['m0', 'm1', 'm2'], style);
    fs.writeFileSync(file, before);
    const result = await createNotebookEditTool({ cwd }).execute(
      { path: 'nb.ipynb', ...args } as never,
      testContext(),
    );
    expect(result.isError).toBeFalsy();
    const after = fs.readFileSync(file, 'utf8');
    const changed = changedRegion(before, after);
    for (const marker of ['m0', 'm1', 'm2'].filter((name) => !touched.includes(name)))
      expect(changed, `${marker} was rewritten`).not.toContain(`"${marker}"`);
    // What stays is the original text: its numbers and escapes as they were written.
    const untouched = ['m0', 'm1', 'm2'].filter((name) => !touched.includes(name));
    for (const marker of untouched)
      expect(after).toContain(
        `"marker": "${marker}", "scrolled": 1.0, "big": 12345678901234567890`,
      );
    expect(after).toContain(style === 'minified' ? '"metadata":{"v":3.10}' : '"version": 3.10}');
    expect(after.endsWith(before.endsWith('\n') ? '\n' : '}')).toBe(true);
    if (style === 'crlf') expect(after.replace(/\r\n/g, '')).not.toContain('\n');
    // And it parses as the notebook the edit meant.
    const cells = JSON.parse(after).cells as { id: string; source: string[] }[];
    const ids = cells.map((parsed) => parsed.id);
    if (args.edit_mode === 'delete') expect(ids).toHaveLength(2);
    if (args.edit_mode === 'insert') expect(ids).toHaveLength(4);
    if (args.edit_mode === 'replace') expect(ids).toEqual(['m0', 'm1', 'm2']);
  });
});

describe('files the splice cannot read are written whole, still correctly', () => {
  it.each([
    [
      'two "cells" keys (JSON.parse keeps the last)',
      (text: string) => text.replace('{', '{"cells": [],'),
    ],
    ['an escaped "cells" key', (text: string) => text.replace('"cells"', '"\\u0063ells"')],
  ])('%s', async (_name, change) => {
    const cwd = makeTempDir();
    const file = path.join(cwd, 'nb.ipynb');
    fs.writeFileSync(file, change(notebookText(['m0', 'm1'], 'jupyter')));
    await createNotebookEditTool({ cwd }).execute(
      { path: 'nb.ipynb', edit_mode: 'replace', cell_id: 'm1', new_source: 'edited' },
      testContext(),
    );
    const cells = JSON.parse(fs.readFileSync(file, 'utf8')).cells as { source: string[] }[];
    expect(cells.map((parsed) => parsed.source.join(''))).toEqual([
      'x = "café" / 2  # m0',
      'edited',
    ]);
  });
});
