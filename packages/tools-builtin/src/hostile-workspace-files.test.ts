/**
 * Files of the workspace that the tools read on their own account — ignore files on every walk,
 * the files a knowledge context indexes, the notebook notebook_edit changes — placed by a hostile
 * repository (or a sandboxed command) as a FIFO, a link to /dev/zero, a folder or a sparse 2 GB
 * file. A FIFO named `.gitignore` held list_files, glob and search for ever (and a thread of
 * Node's pool with them). Each is left out or refused at once; a test here that hangs is the failure.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createGlobTool } from './glob.js';
import { createKnowledgeTool } from './knowledge.js';
import { createListFilesTool } from './list-files.js';
import { createNotebookEditTool } from './notebook.js';
import { createSearchTool } from './search.js';
import { findRipgrep } from './search-engines.js';
import {
  hostilePlants as hostile,
  makeTempDir,
  type Plant,
  resultText,
  testContext,
} from './test-helpers.js';
import { Workspace } from './workspace.js';

/** A workspace with `sub/found.txt` (holding "needle") and `sub/<name>` planted by `plant`. */
function workspaceWith(name: string, plant: Plant): string {
  const dir = makeTempDir();
  fs.mkdirSync(path.join(dir, 'sub'));
  fs.writeFileSync(path.join(dir, 'sub', 'found.txt'), 'a needle here\n');
  plant(path.join(dir, 'sub', name));
  return dir;
}

describe.each(hostile)('an ignore file that is %s', (_label, plant) => {
  it.each(['.gitignore', '.ignore', '.rgignore'])(
    '%s: list_files, glob and search go on without it',
    async (name) => {
      const cwd = workspaceWith(name, plant);
      const listed = await createListFilesTool({ cwd }).execute(
        { path: '.', depth: 3 },
        testContext(),
      );
      expect(resultText(listed)).toContain('found.txt');
      const globbed = await createGlobTool({ cwd }).execute({ pattern: '**/*.txt' }, testContext());
      expect(resultText(globbed)).toContain('sub/found.txt');
      const searched = await createSearchTool({ cwd, engine: 'typescript' }).execute(
        { pattern: 'needle' },
        testContext(),
      );
      expect(resultText(searched)).toContain('sub/found.txt');
    },
  );
});

describe.each(hostile.filter(([label]) => label !== 'a folder'))(
  'a file to index that is %s',
  (_label, plant) => {
    it('knowledge leaves it out and indexes the rest', async () => {
      const cwd = workspaceWith('notes.md', plant);
      const knowledge = createKnowledgeTool({ workspace: new Workspace({ cwd }) });
      const added = await knowledge.execute(
        { command: 'add', name: 'docs', value: 'sub' },
        testContext(),
      );
      expect(resultText(added)).toMatch(/1 file/);
      const found = await knowledge.execute({ command: 'search', query: 'needle' }, testContext());
      expect(resultText(found)).toContain('found.txt');
    });
  },
);

describe('notebook_edit on what is not a regular notebook file', () => {
  it.each([
    ['a FIFO', (file: string) => execFileSync('mkfifo', [file]), 'is not a regular file'],
    ['a folder', (file: string) => fs.mkdirSync(file), 'is a directory'],
  ])('%s: refused at once, naming it', async (_label, plant, why) => {
    const cwd = workspaceWith('book.ipynb', plant);
    const edit = createNotebookEditTool({ cwd });
    await expect(
      edit.execute(
        { path: 'sub/book.ipynb', edit_mode: 'replace', cell_index: 0, new_source: 'x' },
        testContext(),
      ),
    ).rejects.toThrow(`sub/book.ipynb ${why}`);
  });
});

describe('a FIFO named as the path of a tool that walks', () => {
  // `search { path: "pipe" }` opened the FIFO (ripgrep and the TypeScript engine alike) and
  // waited for a writer for ever. Refused at once now; a test here that hangs is the failure.
  const engines = ['typescript', ...(findRipgrep() === undefined ? [] : ['ripgrep'])] as const;
  it.each(engines)('search (%s engine) refuses it, naming it', async (engine) => {
    const cwd = workspaceWith('pipe', (file) => execFileSync('mkfifo', [file]));
    const search = createSearchTool({ cwd, engine: engine as 'typescript' | 'ripgrep' });
    for (const output_mode of ['content', 'files_with_matches', 'count'] as const) {
      await expect(
        search.execute({ pattern: 'needle', path: 'sub/pipe', output_mode }, testContext()),
      ).rejects.toThrow(/sub\/pipe is not a regular file or a directory/);
    }
    // Found through the directory it is in, the FIFO is passed over.
    const found = await search.execute({ pattern: 'needle', path: 'sub' }, testContext());
    expect(resultText(found)).toContain('found.txt');
  });

  it('glob and list_files refuse it as a directory to walk', async () => {
    const cwd = workspaceWith('pipe', (file) => execFileSync('mkfifo', [file]));
    await expect(
      createGlobTool({ cwd }).execute({ pattern: '*', path: 'sub/pipe' }, testContext()),
    ).rejects.toThrow();
    await expect(
      createListFilesTool({ cwd }).execute({ path: 'sub/pipe' }, testContext()),
    ).rejects.toThrow();
  });
});
