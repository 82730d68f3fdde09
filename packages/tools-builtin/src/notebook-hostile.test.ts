// Notebooks someone else wrote, read and edited: outputs of megabytes and hundreds of images,
// "images" that are not images (a provider refuses the whole request over one, and every later
// request carries it), values of the wrong shape, and duplicated cell ids. Before the fixes
// read_file returned 6 MB of text and 300 images for one 6 MB notebook, passed `image/x-evil`
// and non-base64 data on as images, failed with "object is not iterable", and notebook_edit
// edited the first of two cells sharing an id.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ToolResultContent } from '@agent/core';
import { describe, expect, it } from 'vitest';
import { createNotebookEditTool } from './notebook.js';
import { createReadFileTool } from './read-file.js';
import { makeTempDir, testContext } from './test-helpers.js';

const pixel =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

function notebookFile(cells: unknown[]): { cwd: string; name: string } {
  const cwd = makeTempDir();
  const name = 'nb.ipynb';
  const notebook = { cells, metadata: {}, nbformat: 4, nbformat_minor: 5 };
  fs.writeFileSync(path.join(cwd, name), `${JSON.stringify(notebook, null, 1)}\n`);
  return { cwd, name };
}

const code = (index: number, outputs: unknown) => ({
  cell_type: 'code',
  execution_count: index,
  id: `c${index}`,
  metadata: {},
  outputs,
  source: [`print(${index})`],
});
const image = (mime: string, data: unknown) => ({
  output_type: 'display_data',
  data: { [mime]: data, 'text/plain': ['<Figure>'] },
  metadata: {},
});

async function read(cells: unknown[], options = {}) {
  const { cwd, name } = notebookFile(cells);
  const result = await createReadFileTool({ cwd, ...options }).execute(
    { path: name },
    testContext(),
  );
  const parts: ToolResultContent[] = result.content;
  const text = parts.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('');
  const images = parts.flatMap((part) => (part.type === 'image' ? [part] : []));
  return { text, images, isError: result.isError === true };
}

describe('read_file: one budget for the whole notebook', () => {
  it('300 cells with an image each: at most 10 images, the others named', async () => {
    const cells = Array.from({ length: 300 }, (_, index) =>
      code(index, [
        { output_type: 'stream', name: 'stdout', text: 'x'.repeat(100) },
        image('image/png', pixel),
      ]),
    );
    const { text, images } = await read(cells);
    expect(images).toHaveLength(10);
    expect(text.match(/not shown: this read shows at most 10 images/g)).toHaveLength(290);
    expect(text).toContain('--- cell 299 (id c299)');
  });

  it('300 cells of 20,000 characters: text within the budget, the cells left out named', async () => {
    const cells = Array.from({ length: 300 }, (_, index) =>
      code(index, [{ output_type: 'stream', name: 'stdout', text: 'x'.repeat(20_000) }]),
    );
    const { text } = await read(cells, { maxOutputChars: 100_000 });
    expect(text.length).toBeLessThan(101_000);
    expect(text).toMatch(
      /… \(cut at 100000 characters; cells \d+ to 299 not shown: read the file with offset and limit/,
    );
  });

  it('one huge output is cut too', async () => {
    const { text } = await read(
      [code(1, [{ output_type: 'stream', name: 'stdout', text: 'y'.repeat(3_000_000) }])],
      {
        maxOutputChars: 50_000,
      },
    );
    expect(text.length).toBeLessThan(51_000);
    expect(text).toContain('… (cut at 50000 characters');
  });

  it('an image over maxImageBytes, or over the total, is named, not shown', async () => {
    const png = Buffer.from(pixel, 'base64');
    const large = Buffer.concat([png, Buffer.alloc(2 * 1024 * 1024, 1)]).toString('base64');
    const { images, text } = await read(
      [code(1, [image('image/png', large)]), code(2, [image('image/png', pixel)])],
      { maxImageBytes: 1024 * 1024 },
    );
    expect(images).toHaveLength(1);
    expect(text).toMatch(
      /\[output: image\/png; not shown: it is \d+ bytes, over the 1048576-byte limit/,
    );
  });
});

describe('read_file: images that are not images', () => {
  const gif = Buffer.from('R0lGODlhAQABAAAAACw=', 'base64').toString('base64');
  it.each([
    ['an unknown image type', image('image/x-evil', 'AAAA')],
    ['text that is not base64', image('image/png', 'not base64 at all !!!')],
    [
      'base64 of text',
      image('image/png', Buffer.from('<script>alert(1)</script>').toString('base64')),
    ],
    [
      'base64 of a PDF',
      image('image/png', Buffer.from('%PDF-1.7 xxxxxxxxxxxx').toString('base64')),
    ],
    ['a number', image('image/png', 42)],
    ['a list of numbers', image('image/png', [1, 2])],
    ['an object', image('image/jpeg', { src: 'x' })],
    ['base64 with a bad tail', image('image/png', `${pixel}A`)],
  ])('%s: named in a line, never sent as an image', async (_name, output) => {
    const { images, text, isError } = await read([code(1, [output])]);
    expect(isError).toBe(false);
    expect(images).toEqual([]);
    expect(text).toMatch(/\[output: image\/[\w-]+; not shown: /);
  });

  it('an image is sent with the type its bytes have, whatever the output declared', async () => {
    const { images } = await read([
      code(1, [image('image/jpeg', pixel)]),
      code(2, [image('image/png', gif)]),
    ]);
    expect(images.map((part) => part.mimeType)).toEqual(['image/png', 'image/gif']);
  });
});

describe('read_file: values of the wrong shape', () => {
  it.each([
    [
      'outputs that are not a list',
      [{ cell_type: 'code', source: 'a', outputs: { not: 'a list' } }],
      'its outputs are not a list',
    ],
    [
      'a null output',
      [{ cell_type: 'code', source: 'a', outputs: [null] }],
      'not an nbformat output',
    ],
    [
      'an output without a type',
      [{ cell_type: 'code', source: 'a', outputs: [{ text: 'x' }] }],
      'not an nbformat output',
    ],
    [
      'a numeric source',
      [{ cell_type: 'code', source: 12, outputs: [] }],
      'its source is not text',
    ],
    [
      'stream text that is a number',
      [{ cell_type: 'code', source: 'a', outputs: [{ output_type: 'stream', text: 5 }] }],
      '[not text]',
    ],
    [
      'data that is a string',
      [{ cell_type: 'code', source: 'a', outputs: [{ output_type: 'execute_result', data: 'x' }] }],
      '--- cell 0: code ---',
    ],
    [
      'an error output with objects',
      [
        {
          cell_type: 'code',
          source: 'a',
          outputs: [{ output_type: 'error', ename: {}, evalue: [] }],
        },
      ],
      '[error] : ',
    ],
  ])('%s: shown with a note, never a TypeError', async (_name, cells, note) => {
    const { text, isError } = await read(cells);
    expect(isError).toBe(false);
    expect(text).toContain(note);
    expect(text).not.toMatch(/TypeError|is not a function|not iterable|Cannot read properties/);
  });
});

describe('notebook_edit: duplicated cell ids', () => {
  it.each(['replace', 'delete', 'insert'] as const)(
    '%s by an id two cells share is refused; the file is unchanged',
    async (mode) => {
      const { cwd, name } = notebookFile([code(0, []), code(1, []), { ...code(2, []), id: 'c0' }]);
      const before = fs.readFileSync(path.join(cwd, name), 'utf8');
      const error = await createNotebookEditTool({ cwd })
        .execute({ path: name, edit_mode: mode, cell_id: 'c0', new_source: 'z' }, testContext())
        .then(
          () => undefined,
          (thrown: Error) => thrown,
        );
      expect(error?.message).toContain(
        'has 2 cells with id "c0" (cells 0, 2); name the cell by cell_index',
      );
      expect(fs.readFileSync(path.join(cwd, name), 'utf8')).toBe(before);
    },
  );
});
