import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Agent, parallel, type ToolResultMessage } from '@agent/core';
import { createScriptedProvider } from '@agent/core/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createEditFileTool, createTextEditorTool } from './edit-file.js';
import { createNotebookEditTool } from './notebook.js';
import { makeTempDir, resultText, testContext } from './test-helpers.js';
import { type FileSystemOperations, nodeFileSystem } from './workspace.js';
import { createWriteFileTool } from './write-file.js';

let dir: string;
beforeEach(() => {
  dir = makeTempDir();
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const file = (name: string) => path.join(dir, name);
const edit = () => createEditFileTool({ cwd: dir });

describe('edit_file', () => {
  it('matches an LF old_string in a CRLF file and keeps every line ending byte for byte', async () => {
    fs.writeFileSync(file('crlf.txt'), 'one\r\ntwo\r\nthree\r\nfour\n');
    await edit().execute(
      { path: 'crlf.txt', old_string: 'two\nthree\n', new_string: 'TWO\nTHREE\nextra\n' },
      testContext(),
    );
    expect(fs.readFileSync(file('crlf.txt'), 'latin1')).toBe(
      'one\r\nTWO\r\nTHREE\r\nextra\r\nfour\n',
    );
  });

  it('keeps mixed endings, lone CRs and a BOM', async () => {
    const before = Buffer.from('\uFEFFa\r\nb\nc\rd\r\ne\n', 'utf8');
    fs.writeFileSync(file('mixed.txt'), before);
    await edit().execute(
      { path: 'mixed.txt', old_string: 'c\rd', new_string: 'C\rD' },
      testContext(),
    );
    expect(fs.readFileSync(file('mixed.txt'))).toEqual(
      Buffer.from('\uFEFFa\r\nb\nC\rD\r\ne\n', 'utf8'),
    );
    await edit().execute(
      { path: 'mixed.txt', old_string: 'a\nb', new_string: 'A\nB' },
      testContext(),
    );
    expect(fs.readFileSync(file('mixed.txt'))).toEqual(
      Buffer.from('\uFEFFA\r\nB\nC\rD\r\ne\n', 'utf8'),
    );
  });

  it('refuses overlapping matches with their line numbers and leaves the file unchanged', async () => {
    fs.writeFileSync(file('foo.txt'), 'foo\nfoo\nfoo\n');
    const call = edit().execute(
      { path: 'foo.txt', old_string: 'foo\nfoo\n', new_string: 'bar\n' },
      testContext(),
    );
    await expect(call).rejects.toThrow(/matches 2 times .*lines 1, 2\), some overlapping/);
    const all = edit().execute(
      { path: 'foo.txt', old_string: 'foo\nfoo\n', new_string: 'bar\n', replace_all: true },
      testContext(),
    );
    await expect(all).rejects.toThrow(/overlapping text .*lines 1, 2/);
    expect(fs.readFileSync(file('foo.txt'), 'utf8')).toBe('foo\nfoo\nfoo\n');
  });

  it('names the lines of several matches, and replace_all replaces them', async () => {
    fs.writeFileSync(file('x.txt'), 'a\nx = 1\nb\nx = 1\n');
    await expect(
      edit().execute({ path: 'x.txt', old_string: 'x = 1', new_string: 'x = 2' }, testContext()),
    ).rejects.toThrow(/matches 2 times in x.txt \(at lines 2, 4\)/);
    const result = await edit().execute(
      { path: 'x.txt', old_string: 'x = 1', new_string: 'x = 2', replace_all: true },
      testContext(),
    );
    expect(resultText(result)).toBe('Edited x.txt: replaced 2 occurrences (lines 2, 4).');
    expect(fs.readFileSync(file('x.txt'), 'utf8')).toBe('a\nx = 2\nb\nx = 2\n');
  });

  it('gives the closest lines when nothing matches, and refuses identical strings', async () => {
    fs.writeFileSync(file('code.ts'), 'function add(a, b) {\n  return a + b;\n}\n');
    await expect(
      edit().execute(
        { path: 'code.ts', old_string: 'return a - b;', new_string: 'x' },
        testContext(),
      ),
    ).rejects.toThrow(/not found in code.ts.*Closest lines.*\n\s+2\t {2}return a \+ b;/s);
    await expect(
      edit().execute(
        { path: 'code.ts', old_string: 'return  a + b;', new_string: 'x' },
        testContext(),
      ),
    ).rejects.toThrow(/matches when whitespace is ignored/);
    await expect(
      edit().execute({ path: 'code.ts', old_string: 'add', new_string: 'add' }, testContext()),
    ).rejects.toThrow(/identical/);
  });

  it('refuses a file larger than maxEditBytes before reading it, naming its size and the limit', async () => {
    const big = `${'line of text\n'.repeat(200)}needle\n`; // 2607 bytes
    fs.writeFileSync(file('big.txt'), big);
    let reads = 0;
    // Counts whole-file reads through the injected fs (real files; only the count is added).
    const counting: FileSystemOperations = {
      ...nodeFileSystem,
      open: async (...args: Parameters<FileSystemOperations['open']>) => {
        const handle = await nodeFileSystem.open(...args);
        const readFile = handle.readFile.bind(handle);
        handle.readFile = ((...rest: Parameters<typeof readFile>) => {
          reads++;
          return readFile(...rest);
        }) as typeof handle.readFile;
        return handle;
      },
    };
    const options = { cwd: dir, fs: counting, maxEditBytes: 1024 };
    for (const call of [
      () =>
        createEditFileTool(options).execute(
          { path: 'big.txt', old_string: 'needle', new_string: 'pin' },
          testContext(),
        ),
      () =>
        createTextEditorTool(options).execute(
          { command: 'append', path: 'big.txt', new_str: 'more' },
          testContext(),
        ),
    ]) {
      await expect(call()).rejects.toThrow(
        /big\.txt is 2\.5 KiB \(2,607 bytes\), larger than the 1\.0 KiB \(1,024 bytes\) limit for editing \(maxEditBytes\)/,
      );
    }
    expect(reads).toBe(0);
    expect(fs.readFileSync(file('big.txt'), 'utf8')).toBe(big);
    // Under the limit the same edit goes through.
    await createEditFileTool({ ...options, maxEditBytes: 4096 }).execute(
      { path: 'big.txt', old_string: 'needle', new_string: 'pin' },
      testContext(),
    );
    expect(reads).toBe(1);
    expect(fs.readFileSync(file('big.txt'), 'utf8').endsWith('pin\n')).toBe(true);
  });

  it('keeps the file mode and refuses binary or non-UTF-8 files', async () => {
    fs.writeFileSync(file('run.sh'), '#!/bin/sh\necho a\n', { mode: 0o751 });
    fs.chmodSync(file('run.sh'), 0o751);
    await edit().execute(
      { path: 'run.sh', old_string: 'echo a', new_string: 'echo b' },
      testContext(),
    );
    expect(fs.statSync(file('run.sh')).mode & 0o777).toBe(0o751);
    fs.writeFileSync(file('bad.txt'), Buffer.from([0x61, 0xff, 0x0a]));
    await expect(
      edit().execute({ path: 'bad.txt', old_string: 'a', new_string: 'b' }, testContext()),
    ).rejects.toThrow(/not valid UTF-8/);
    expect(fs.readFileSync(file('bad.txt'))).toEqual(Buffer.from([0x61, 0xff, 0x0a]));
  });

  it('replace_all replaces every occurrence, even more than 10,000, and lists lines briefly', async () => {
    fs.writeFileSync(file('many.txt'), 'x\n'.repeat(12_000));
    const result = await edit().execute(
      { path: 'many.txt', old_string: 'x', new_string: 'y', replace_all: true },
      testContext(),
    );
    expect(fs.readFileSync(file('many.txt'), 'utf8')).toBe('y\n'.repeat(12_000));
    expect(result.details?.lines).toHaveLength(12_000);
    expect(resultText(result)).toMatch(
      /^Edited many\.txt: replaced 12000 occurrences \(lines 1, 2, .*, 20 and 11980 more\)\.$/,
    );
  });

  it('stays linear with many matches on one long line (replacement with newlines)', async () => {
    // 400,000 matches on one 800 kB line: scanning to the line's end per match took over 9 s.
    fs.writeFileSync(file('long.txt'), `${'ab'.repeat(400_000)}\n`);
    await edit().execute(
      { path: 'long.txt', old_string: 'a', new_string: '\n', replace_all: true },
      testContext(),
    );
    expect(fs.readFileSync(file('long.txt'), 'utf8')).toBe(`${'\nb'.repeat(400_000)}\n`);
  }, 30_000); // generous on a loaded 2-core CI machine: a quadratic scan would take minutes

  it('edits and writes files whose names are near the 255-byte limit', async () => {
    const name = `${'n'.repeat(250)}.txt`;
    const written = await createWriteFileTool({ cwd: dir }).execute(
      { path: name, content: 'old\n' },
      testContext(),
    );
    expect(resultText(written)).toContain('Created');
    await edit().execute({ path: name, old_string: 'old', new_string: 'new' }, testContext());
    expect(fs.readFileSync(file(name), 'utf8')).toBe('new\n');
    expect(fs.readdirSync(dir)).toEqual([name]);
  });

  it('refuses a FIFO at once instead of blocking on it', async () => {
    execFileSync('mkfifo', [file('pipe')]);
    try {
      await expect(
        edit().execute({ path: 'pipe', old_string: 'a', new_string: 'b' }, testContext()),
      ).rejects.toThrow('pipe is not a regular file');
    } finally {
      try {
        fs.closeSync(fs.openSync(file('pipe'), fs.constants.O_WRONLY | fs.constants.O_NONBLOCK));
      } catch {}
    }
  }, 3000);

  it('applies 20 parallel edits of one file through the agent loop; none lost, no partial reads', async () => {
    const lines = Array.from({ length: 20 }, (_, i) => `slot-${i}: ${'.'.repeat(2000)}`);
    fs.writeFileSync(file('shared.txt'), `${lines.join('\n')}\n`);
    const size = fs.statSync(file('shared.txt')).size;
    const tool = edit();
    const provider = createScriptedProvider([
      {
        toolCalls: lines.map((_, i) => ({
          name: 'edit_file',
          arguments: { path: 'shared.txt', old_string: `slot-${i}:`, new_string: `done-${i}:` },
        })),
      },
      { text: 'all done' },
    ]);
    const agent = new Agent({
      provider,
      model: 'scripted',
      tools: [tool],
      toolExecution: parallel(),
    });
    let reading = true;
    let reads = 0;
    const reader = (async () => {
      while (reading) {
        const content = fs.readFileSync(file('shared.txt'), 'utf8');
        reads++;
        // Every read sees a whole file: same size, 20 complete lines.
        expect(content.length).toBe(size);
        expect(
          content.split('\n').filter((line) => /^(slot|done)-\d+: \.{2000}$/.test(line)),
        ).toHaveLength(20);
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    const outcome = await agent.run('edit').result;
    reading = false;
    await reader;
    expect(outcome.stopReason).toBe('completed');
    const results = outcome.messages.filter((m): m is ToolResultMessage => m.role === 'toolResult');
    expect(results).toHaveLength(20);
    expect(results.every((m) => !m.isError)).toBe(true);
    const final = fs.readFileSync(file('shared.txt'), 'utf8');
    for (let i = 0; i < 20; i++) expect(final).toContain(`done-${i}:`);
    expect(final).not.toContain('slot-');
    expect(reads).toBeGreaterThan(0);
  });

  it('keys edits and writes of one real file alike, whatever the path spelling', () => {
    fs.writeFileSync(file('a.txt'), 'x');
    fs.symlinkSync(file('a.txt'), file('link.txt'));
    const key = edit().policy?.resourceKey;
    const writeKey = createWriteFileTool({ cwd: dir }).policy?.resourceKey;
    expect(key?.({ path: 'a.txt', old_string: '', new_string: '' })).toBe(
      key?.({ path: './link.txt', old_string: '', new_string: '' }),
    );
    expect(writeKey?.({ path: `${dir}/a.txt`, content: '' })).toBe(
      key?.({ path: 'a.txt', old_string: '', new_string: '' }),
    );
    expect(key?.({ path: 'b.txt', old_string: '', new_string: '' })).not.toBe(
      key?.({ path: 'a.txt', old_string: '', new_string: '' }),
    );
  });
});

describe('write_file', () => {
  it('creates parents, reports created vs updated, keeps the mode, leaves no temp files', async () => {
    const write = createWriteFileTool({ cwd: dir });
    const first = await write.execute({ path: 'deep/er/new.txt', content: 'one' }, testContext());
    expect(resultText(first)).toBe('Created deep/er/new.txt (3 bytes).');
    fs.chmodSync(file('deep/er/new.txt'), 0o640);
    const second = await write.execute({ path: 'deep/er/new.txt', content: 'two' }, testContext());
    expect(resultText(second)).toBe('Updated deep/er/new.txt (3 bytes).');
    expect(fs.readFileSync(file('deep/er/new.txt'), 'utf8')).toBe('two');
    expect(fs.statSync(file('deep/er/new.txt')).mode & 0o777).toBe(0o640);
    expect(fs.readdirSync(file('deep/er'))).toEqual(['new.txt']);
  });

  // Root only: only root can give a file to another user. An agent in a container often is root.
  it.skipIf(process.getuid?.() !== 0)(
    'run as root, write_file, edit_file and text_editor keep a user’s file the user’s (owner, group, mode)',
    async () => {
      const owned = (name: string) => {
        fs.writeFileSync(file(name), 'alpha\n', { mode: 0o640 });
        fs.chownSync(file(name), 65534, 65533);
      };
      const kept = (name: string) => {
        const stats = fs.statSync(file(name));
        expect({ uid: stats.uid, gid: stats.gid, mode: stats.mode & 0o7777 }).toEqual({
          uid: 65534,
          gid: 65533,
          mode: 0o640,
        });
      };
      owned('w.txt');
      owned('e.txt');
      owned('t.txt');
      await createWriteFileTool({ cwd: dir }).execute(
        { path: 'w.txt', content: 'b' },
        testContext(),
      );
      await edit().execute(
        { path: 'e.txt', old_string: 'alpha', new_string: 'beta' },
        testContext(),
      );
      await createTextEditorTool({ cwd: dir }).execute(
        { command: 'append', path: 't.txt', new_str: 'gamma' },
        testContext(),
      );
      // Before: each came back owned by root (0:0).
      kept('w.txt');
      kept('e.txt');
      kept('t.txt');
      expect(fs.readFileSync(file('e.txt'), 'utf8')).toBe('beta\n');
      // A new file is the writer's own.
      await createWriteFileTool({ cwd: dir }).execute(
        { path: 'n.txt', content: 'x' },
        testContext(),
      );
      expect(fs.statSync(file('n.txt')).uid).toBe(0);
    },
  );
});

describe('text_editor (Kiro-style commands)', () => {
  it('creates, replaces, inserts and appends, keeping CRLF', async () => {
    const editor = createTextEditorTool({ cwd: dir });
    await editor.execute(
      { command: 'create', path: 't.txt', file_text: 'a\r\nb\r\n' },
      testContext(),
    );
    await editor.execute(
      { command: 'str_replace', path: 't.txt', old_str: 'b\n', new_str: 'B\n' },
      testContext(),
    );
    await editor.execute(
      { command: 'insert', path: 't.txt', insert_line: 1, new_str: 'between' },
      testContext(),
    );
    await editor.execute(
      { command: 'insert', path: 't.txt', insert_line: 0, new_str: 'first' },
      testContext(),
    );
    await editor.execute(
      { command: 'append', path: 't.txt', new_str: 'last\nlines' },
      testContext(),
    );
    expect(fs.readFileSync(file('t.txt'), 'latin1')).toBe(
      'first\r\na\r\nbetween\r\nB\r\nlast\r\nlines\r\n',
    );
    await expect(
      editor.execute(
        { command: 'insert', path: 't.txt', insert_line: 99, new_str: 'x' },
        testContext(),
      ),
    ).rejects.toThrow(/past the end/);
    expect(editor.validate?.({ command: 'str_replace', path: 't.txt' })).toMatchObject({
      ok: false,
    });
  });
});

describe('a file changed on disk while it is being edited', () => {
  // Another process (a background command, the user's editor) writes the file after the edit read
  // it and before the edit's rename: the edit must not put back the old content with its change
  // on top, losing the other write without a word. The other writer here is a real process, run
  // at that moment through the file-system operations (when the edit opens its temp file).
  function racedBy(target: string, line: string): FileSystemOperations {
    return {
      ...nodeFileSystem,
      open: (async (where: fs.PathLike, flags?: string | number, mode?: fs.Mode) => {
        if (flags === 'wx')
          execFileSync('sh', ['-c', `printf '%s\\n' "$1" >> "$2"`, 'sh', line, target]);
        return nodeFileSystem.open(where, flags, mode);
      }) as FileSystemOperations['open'],
    };
  }

  const notebook = `${JSON.stringify({ cells: [], metadata: {}, nbformat: 4, nbformat_minor: 4 }, null, 1)}\n`;
  it.each([
    ['edit_file', 'a.txt', 'one\ntwo\n', { old_string: 'one', new_string: 'ONE' }],
    [
      'edit_file replace_all',
      'a.txt',
      'one\none\n',
      { old_string: 'one', new_string: '1', replace_all: true },
    ],
    [
      'text_editor str_replace',
      'a.txt',
      'one\ntwo\n',
      { command: 'str_replace', old_str: 'two', new_str: 'TWO' },
    ],
    ['text_editor append', 'a.txt', 'one\n', { command: 'append', new_str: 'three' }],
    [
      'text_editor insert',
      'a.txt',
      'one\r\ntwo\r\n',
      { command: 'insert', insert_line: 1, new_str: 'x' },
    ],
    ['notebook_edit', 'n.ipynb', notebook, { edit_mode: 'insert', new_source: 'print(1)' }],
  ] as const)('%s refuses, and the other write is kept', async (label, name, content, args) => {
    fs.writeFileSync(file(name), content);
    const options = { cwd: dir, fs: racedBy(file(name), 'written meanwhile') };
    const tool = label.startsWith('text_editor')
      ? createTextEditorTool(options)
      : label.startsWith('notebook')
        ? createNotebookEditTool(options)
        : createEditFileTool(options);
    await expect(
      (tool.execute as (args: unknown, ctx: unknown) => Promise<unknown>)(
        { path: name, ...args },
        testContext(),
      ),
    ).rejects.toThrow(/changed on disk while it was being edited/);
    expect(fs.readFileSync(file(name), 'utf8')).toBe(`${content}written meanwhile\n`);
    expect(fs.readdirSync(dir).filter((entry) => entry.endsWith('.tmp'))).toEqual([]);
  });
});
