import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { detectFileKind } from '@agent/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createReadFileTool } from './read-file.js';
import { makeTempDir, resultText, testContext } from './test-helpers.js';
import { type FileSystemOperations, nodeFileSystem } from './workspace.js';

const fixtures = path.join(import.meta.dirname, '__fixtures__');
let dir: string;

beforeEach(() => {
  dir = makeTempDir();
  for (const name of fs.readdirSync(fixtures))
    fs.copyFileSync(path.join(fixtures, name), path.join(dir, name));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const tool = (options: Partial<Parameters<typeof createReadFileTool>[0]> = {}) =>
  createReadFileTool({ cwd: dir, ...options });

describe('read_file', () => {
  it('returns numbered lines, the total and a continuation hint (offset is 1-based)', async () => {
    fs.writeFileSync(
      path.join(dir, 'f.txt'),
      Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join('\n'),
    );
    const result = await tool().execute({ path: 'f.txt', offset: 3, limit: 2 }, testContext());
    expect(resultText(result)).toBe(
      '     3\tline 3\n     4\tline 4\n[Lines 3-4 of 10; use offset 5 to continue]',
    );
    expect(result.details).toMatchObject({
      startLine: 3,
      endLine: 4,
      totalLines: 10,
      nextOffset: 5,
    });
    const last = await tool().execute({ path: 'f.txt', offset: 9 }, testContext());
    expect(resultText(last)).toBe('     9\tline 9\n    10\tline 10\n[Lines 9-10 of 10]');
  });

  it('strips CR and a BOM from what it shows, and cuts long lines', async () => {
    fs.writeFileSync(path.join(dir, 'crlf.txt'), `\uFEFFone\r\n${'x'.repeat(50)}\r\n`);
    const result = await tool({ maxLineChars: 10 }).execute({ path: 'crlf.txt' }, testContext());
    expect(resultText(result)).toBe(
      '     1\tone\n     2\txxxxxxxxxx… [line cut at 10 characters]\n[Lines 1-2 of 2]',
    );
    expect(result.details?.linesTruncated).toBe(true);
  });

  it('stops at the total output cap and says where to continue', async () => {
    fs.writeFileSync(path.join(dir, 'big.txt'), `${'y'.repeat(100)}\n`.repeat(100));
    const result = await tool({ maxOutputChars: 1000 }).execute({ path: 'big.txt' }, testContext());
    expect(result.details?.endLine).toBeLessThan(100);
    expect(resultText(result)).toContain(
      `use offset ${(result.details?.endLine ?? 0) + 1} to continue`,
    );
  });

  it('replaces invalid UTF-8 with U+FFFD instead of failing', async () => {
    fs.writeFileSync(path.join(dir, 'bad.txt'), Buffer.from([0x61, 0xff, 0xfe, 0x62, 0x0a, 0xc3]));
    const result = await tool().execute({ path: 'bad.txt' }, testContext());
    expect(resultText(result)).toBe('     1\ta\uFFFD\uFFFDb\n     2\t\uFFFD\n[Lines 1-2 of 2]');
  });

  it('returns a PNG as image content with its MIME type', async () => {
    const result = await tool().execute({ path: 'tiny.png' }, testContext());
    const image = result.content.find((part) => part.type === 'image');
    expect(image).toMatchObject({ type: 'image', mimeType: 'image/png' });
    expect(Buffer.from(image?.type === 'image' ? image.data : '', 'base64')).toEqual(
      fs.readFileSync(path.join(dir, 'tiny.png')),
    );
  });

  it.each([
    ['tiny.zip', /binary file \(ZIP archive/],
    ['tiny.pdf', /binary file \(PDF document/],
  ])('describes %s as binary without dumping it', async (name, description) => {
    const result = await tool().execute({ path: name }, testContext());
    const text = resultText(result);
    expect(text).toMatch(description);
    expect(text).not.toContain('Hello PDF');
    expect(text).not.toContain('hello from zip');
    expect(result.content.every((part) => part.type === 'text')).toBe(true);
  });

  it('detects magic numbers even without NUL bytes, and NUL bytes without magic', () => {
    expect(fs.readFileSync(path.join(dir, 'tiny.pdf')).includes(0)).toBe(false);
    expect(detectFileKind(Buffer.from('PK\x03\x04abcdefg', 'latin1')).type).toBe('binary');
    expect(detectFileKind(Buffer.from('hello\0world')).type).toBe('binary');
    expect(detectFileKind(Buffer.from('BMW is a car maker\n')).type).toBe('text');
    expect(detectFileKind(Buffer.from('plain text\n')).type).toBe('text');
  });

  it('reads line 500,000 of a large file by streaming, not loading it', async () => {
    const file = path.join(dir, 'large.txt');
    const stream = fs.createWriteStream(file);
    for (let block = 0; block < 100; block++) {
      let chunk = '';
      for (let i = 1; i <= 6000; i++) chunk += `row ${block * 6000 + i}\n`;
      stream.write(chunk);
    }
    await new Promise<void>((resolve) => stream.end(resolve));
    let readFileCalls = 0;
    const fsSpy = {
      ...fs.promises,
      readFile: (async (...args: Parameters<typeof fs.promises.readFile>) => {
        readFileCalls++;
        return fs.promises.readFile(...args);
      }) as typeof fs.promises.readFile,
    };
    const result = await tool({ fs: fsSpy }).execute(
      { path: 'large.txt', offset: 500_000, limit: 2 },
      testContext(),
    );
    expect(resultText(result)).toBe(
      '500000\trow 500000\n500001\trow 500001\n[Lines 500000-500001 of 600000; use offset 500002 to continue]',
    );
    expect(readFileCalls).toBe(0);
  });

  it('does not count the lines of more than 16 MiB past the lines returned', async () => {
    // 1,000,000 lines of 20 bytes: 20,000,000 bytes.
    const line = (n: number) => `${String(n).padStart(19, '0')}\n`;
    let text = '';
    for (let n = 1; n <= 1_000_000; n++) text += line(n);
    fs.writeFileSync(path.join(dir, 'huge.txt'), text);
    const early = await tool().execute({ path: 'huge.txt', offset: 10, limit: 1 }, testContext());
    expect(resultText(early)).toBe(
      `    10\t${line(10).trim()}\n[Lines 10-10; more follow: 19,999,800 bytes after line 10, not counted; use offset 11 to continue]`,
    );
    expect(early.details?.totalLines).toBeUndefined();
    expect(early.details?.nextOffset).toBe(11);
    // Within 16 MiB of the end the total is counted as before.
    const late = await tool().execute(
      { path: 'huge.txt', offset: 500_000, limit: 1 },
      testContext(),
    );
    expect(resultText(late)).toBe(
      `500000\t${line(500_000).trim()}\n[Lines 500000-500000 of 1000000; use offset 500001 to continue]`,
    );
    expect(late.details?.totalLines).toBe(1_000_000);
  });

  it('refuses a FIFO at once instead of blocking on it', async () => {
    const fifo = path.join(dir, 'pipe');
    execFileSync('mkfifo', [fifo]);
    try {
      await expect(tool().execute({ path: 'pipe' }, testContext())).rejects.toThrow(
        'pipe is not a regular file (a FIFO, socket or device); it is not read.',
      );
    } finally {
      // Were an open blocked on the FIFO, this would release it (it succeeds only with a reader).
      try {
        fs.closeSync(fs.openSync(fifo, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK));
      } catch {}
    }
  }, 3000);

  it('reports missing files, directories and offsets past the end', async () => {
    await expect(tool().execute({ path: 'nope.txt' }, testContext())).rejects.toThrow(
      'File not found: nope.txt',
    );
    fs.mkdirSync(path.join(dir, 'sub'));
    await expect(tool().execute({ path: 'sub' }, testContext())).rejects.toThrow(
      /is a directory; use list_files/,
    );
    fs.writeFileSync(path.join(dir, 'two.txt'), 'a\nb\n');
    await expect(tool().execute({ path: 'two.txt', offset: 5 }, testContext())).rejects.toThrow(
      'offset 5 is past the end of two.txt, which has 2 lines.',
    );
    fs.writeFileSync(path.join(dir, 'empty.txt'), '');
    expect(resultText(await tool().execute({ path: 'empty.txt' }, testContext()))).toBe(
      'empty.txt is empty.',
    );
  });
});

describe('a file another process keeps appending to', () => {
  it('is read as it was when opened: the count ends, however fast the writer', async () => {
    const log = path.join(dir, 'log.txt');
    fs.writeFileSync(log, 'line\n'.repeat(1_000));
    const line = Buffer.from('appended\n'.repeat(110_000)); // ~1 MiB, more than a chunk
    let reads = 0;
    // A writer faster than the reader (`yes >> log.txt` in the background): every read the tool
    // makes, the file grows by more than the read took.
    const appending: FileSystemOperations = {
      ...nodeFileSystem,
      open: (async (where: fs.PathLike, flags?: string | number, mode?: fs.Mode) => {
        const handle = await nodeFileSystem.open(where, flags, mode);
        if (String(where) !== log) return handle;
        const read = handle.read.bind(handle) as (
          buffer: Buffer,
          offset: number,
          length: number,
          position: number,
        ) => ReturnType<typeof handle.read>;
        return Object.assign(handle, {
          read: (buffer: Buffer, offset: number, length: number, position: number) => {
            reads++;
            // Bounded so that the old code ends too (after ~64 MiB), only much later.
            if (reads < 64) fs.appendFileSync(log, line);
            return read(buffer, offset, length, position);
          },
        });
      }) as FileSystemOperations['open'],
    };
    const result = await createReadFileTool({ cwd: dir, fs: appending }).execute(
      { path: 'log.txt', limit: 3 },
      testContext(),
    );
    // Before: it read on as the file grew — 240 reads, 64 MiB — and counted 7 million lines.
    expect(reads).toBeLessThan(5);
    expect(result.details).toMatchObject({ startLine: 1, endLine: 3, totalLines: 1_000 });
    expect(resultText(result)).toMatch(/\[Lines 1-3 of 1000; use offset 4 to continue\]$/);
  });

  it('stops when the call is aborted', async () => {
    fs.writeFileSync(path.join(dir, 'big.txt'), 'x\n'.repeat(100_000));
    const controller = new AbortController();
    controller.abort();
    await expect(
      tool().execute({ path: 'big.txt' }, testContext({ signal: controller.signal })),
    ).rejects.toThrow();
  });
});
