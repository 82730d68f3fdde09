import * as fs from 'node:fs';
import * as path from 'node:path';
import { ToolError } from '@agent/core';
import { describe, expect, it } from 'vitest';
import { createNotebookEditTool } from './notebook.js';
import { createReadFileTool } from './read-file.js';
import { makeTempDir, testContext } from './test-helpers.js';

// A notebook as Jupyter writes it: 1-space indent, a trailing newline, ids (4.5), outputs.
const pixel =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const original = {
  cells: [
    {
      cell_type: 'markdown',
      id: 'intro1',
      metadata: { tags: ['doc'] },
      source: ['# Title\n', 'Some text'],
    },
    {
      cell_type: 'code',
      execution_count: 3,
      id: 'calc01',
      metadata: { collapsed: false },
      outputs: [
        { name: 'stdout', output_type: 'stream', text: ['hello\n'] },
        {
          data: { 'image/png': pixel, 'text/plain': ['<Figure>'] },
          metadata: {},
          output_type: 'display_data',
        },
      ],
      source: ['x = 1\n', 'print("hello")'],
    },
  ],
  metadata: { kernelspec: { display_name: 'Python 3', language: 'python', name: 'python3' } },
  nbformat: 4,
  nbformat_minor: 5,
};

function setup() {
  const cwd = makeTempDir();
  const file = path.join(cwd, 'analysis.ipynb');
  fs.writeFileSync(file, `${JSON.stringify(original, null, 1)}\n`);
  return { cwd, file, edit: createNotebookEditTool({ cwd }), read: createReadFileTool({ cwd }) };
}

const load = (file: string) => JSON.parse(fs.readFileSync(file, 'utf8'));

describe('notebook_edit', () => {
  it('replaces a cell by id, clears its outputs, keeps formatting and metadata', async () => {
    const { file, edit } = setup();
    await edit.execute(
      {
        path: 'analysis.ipynb',
        edit_mode: 'replace',
        cell_id: 'calc01',
        new_source: 'x = 2\nprint(x)',
      },
      testContext(),
    );
    const text = fs.readFileSync(file, 'utf8');
    expect(text.endsWith('}\n')).toBe(true);
    expect(text).toContain('\n "cells": [');
    const notebook = load(file);
    expect(notebook.cells[1]).toEqual({
      cell_type: 'code',
      execution_count: null,
      id: 'calc01',
      metadata: { collapsed: false },
      outputs: [],
      source: ['x = 2\n', 'print(x)'],
    });
    expect(notebook.metadata).toEqual(original.metadata);
    expect(notebook.cells[0]).toEqual(original.cells[0]);
  });

  it('inserts after a cell (with a new id), changes a type, deletes by index', async () => {
    const { file, edit } = setup();
    await edit.execute(
      {
        path: 'analysis.ipynb',
        edit_mode: 'insert',
        cell_id: 'intro1',
        new_source: '## Part 2',
        cell_type: 'markdown',
      },
      testContext(),
    );
    let notebook = load(file);
    expect(notebook.cells.map((cell: { cell_type: string }) => cell.cell_type)).toEqual([
      'markdown',
      'markdown',
      'code',
    ]);
    expect(notebook.cells[1].id).toMatch(/^[0-9a-f]{8}$/);
    expect(notebook.cells[1].outputs).toBeUndefined();
    await edit.execute(
      { path: 'analysis.ipynb', edit_mode: 'replace', cell_index: 1, cell_type: 'code' },
      testContext(),
    );
    notebook = load(file);
    expect(notebook.cells[1]).toMatchObject({
      cell_type: 'code',
      outputs: [],
      execution_count: null,
      source: ['## Part 2'],
    });
    await edit.execute(
      { path: 'analysis.ipynb', edit_mode: 'delete', cell_index: 0 },
      testContext(),
    );
    expect(load(file).cells.map((cell: { id: string }) => cell.id)).toEqual([
      notebook.cells[1].id,
      'calc01',
    ]);
  });

  it('refuses what it cannot do, with a clear error, leaving the file as it was', async () => {
    const { cwd, file, edit } = setup();
    const before = fs.readFileSync(file, 'utf8');
    const failure = (args: Parameters<typeof edit.execute>[0]) =>
      edit.execute(args, testContext()).then(
        () => 'no error',
        (error: unknown) => (ToolError.isInstance(error) ? error.message : String(error)),
      );
    expect(
      await failure({
        path: 'analysis.ipynb',
        edit_mode: 'replace',
        cell_id: 'nope',
        new_source: 'x',
      }),
    ).toContain('has no cell with id "nope"');
    expect(await failure({ path: 'analysis.ipynb', edit_mode: 'delete', cell_index: 9 })).toContain(
      'has 2 cells',
    );
    expect(await failure({ path: 'analysis.ipynb', edit_mode: 'delete' })).toContain(
      'needs cell_id or cell_index',
    );
    fs.writeFileSync(path.join(cwd, 'broken.ipynb'), '{"cells": 3}');
    expect(await failure({ path: 'broken.ipynb', edit_mode: 'delete', cell_index: 0 })).toContain(
      'is not a valid notebook',
    );
    fs.writeFileSync(path.join(cwd, 'old.ipynb'), JSON.stringify({ nbformat: 3, cells: [] }));
    expect(await failure({ path: 'old.ipynb', edit_mode: 'delete', cell_index: 0 })).toContain(
      'only nbformat 4',
    );
    expect(await failure({ path: '../outside.ipynb', edit_mode: 'delete', cell_index: 0 })).toMatch(
      /outside the workspace/,
    );
    expect(fs.readFileSync(file, 'utf8')).toBe(before);
  });
});

describe('read_file on a notebook', () => {
  it('shows the cells with their ids, sources and outputs, images as images', async () => {
    const { read } = setup();
    const result = await read.execute({ path: 'analysis.ipynb' }, testContext());
    const text = result.content
      .filter((block) => block.type === 'text')
      .map((block) => (block as { text: string }).text)
      .join('');
    expect(text).toContain('Jupyter notebook (nbformat 4.5), 2 cells');
    expect(text).toContain('--- cell 0 (id intro1): markdown ---\n# Title\nSome text');
    expect(text).toContain('--- cell 1 (id calc01): code [3] ---\nx = 1\nprint("hello")');
    expect(text).toContain('[stdout]\nhello');
    expect(result.content).toContainEqual({ type: 'image', data: pixel, mimeType: 'image/png' });
    const raw = await read.execute({ path: 'analysis.ipynb', offset: 1, limit: 3 }, testContext());
    expect((raw.content[0] as { text: string }).text).toContain('"cells": [');
  });
});
