import { execFileSync, spawn } from 'node:child_process';
import {
  appendFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import * as fsPromises from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type RegularFileRead,
  type RegularFileReadOptions,
  type RegularFileSystem,
  readRegularFile,
  readRegularFileSync,
  utf8Text,
} from './read-regular-file.js';

// Real files, FIFOs, devices and sockets in a temp folder; nothing is mocked.

let dir: string;
let openDescriptors: number;
const descriptorCount = () => readdirSync('/proc/self/fd').length;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'regular-file-'));
  openDescriptors = descriptorCount();
});
afterEach(() => {
  // Every outcome closes what it opened (a leak here is a leak per read in a long session).
  expect(descriptorCount()).toBe(openDescriptors);
  rmSync(dir, { recursive: true, force: true });
});

const file = (name: string, content: string | Buffer) => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};
const link = (name: string, target: string) => {
  const path = join(dir, name);
  symlinkSync(target, path);
  return path;
};
const fifo = (name: string) => {
  const path = join(dir, name);
  execFileSync('mkfifo', [path]);
  return path;
};
/** A check that does `action` to the file between its open and its read, and lets it be read. */
const during = (action: () => void) => () => {
  action();
  return undefined;
};
const text = (outcome: RegularFileRead) =>
  outcome.kind === 'read' ? outcome.bytes.toString('utf8') : outcome.kind;

const readers = [
  ['readRegularFile', readRegularFile],
  [
    'readRegularFileSync',
    async (path: string, options: RegularFileReadOptions) => readRegularFileSync(path, options),
  ],
] as const;

describe.each(readers)('%s', (_name, read) => {
  describe('a regular file', () => {
    it('is read whole when it is at most maxBytes', async () => {
      const path = file('a.txt', 'hello\nworld\n');
      const outcome = await read(path, { maxBytes: 12 });
      expect(outcome).toMatchObject({ kind: 'read', truncated: false, realPath: undefined });
      expect(text(outcome)).toBe('hello\nworld\n');
    });

    it('is read through a symlink that is followed', async () => {
      const target = file('target.txt', 'through the link');
      expect(text(await read(link('via', target), { maxBytes: 100 }))).toBe('through the link');
    });

    it('reads an empty file, also with a cap of 0', async () => {
      const path = file('empty', '');
      expect(text(await read(path, { maxBytes: 0 }))).toBe('');
      expect(text(await read(path, { maxBytes: 10 }))).toBe('');
    });

    it('keeps a byte-order mark in the bytes; utf8Text drops it', async () => {
      const path = file('bom.json', Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d]));
      const outcome = await read(path, { maxBytes: 10 });
      if (outcome.kind !== 'read') throw new Error(`read gave ${outcome.kind}`);
      expect([...outcome.bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
      expect(utf8Text(outcome.bytes)).toBe('{}');
      expect(JSON.parse(utf8Text(outcome.bytes))).toEqual({});
      // Only a leading one: a mark inside the text is the text's.
      expect(utf8Text(Buffer.from('a\uFEFFb'))).toBe('a\uFEFFb');
      expect(utf8Text(Buffer.from('\uFEFF\uFEFFx'))).toBe('\uFEFFx');
    });

    it('reads to the end, not to the size fstat gave: a /proc file says 0 and holds text', async () => {
      const outcome = await read('/proc/self/status', { maxBytes: 64 * 1024 });
      expect(outcome).toMatchObject({ kind: 'read', truncated: false });
      if (outcome.kind === 'read') expect(outcome.stats.size).toBe(0);
      expect(text(outcome)).toMatch(/^Name:\t/);
    });

    it('gives the real path of the opened file when asked', async () => {
      const target = file('real.txt', 'x');
      const outcome = await read(link('alias', target), { maxBytes: 1, realPath: true });
      expect(outcome).toMatchObject({ kind: 'read', realPath: target });
    });
  });

  describe('a file over maxBytes', () => {
    it.each([
      [9, 10, 'read'],
      [10, 10, 'read'],
      [11, 10, 'too-large'],
      [1, 0, 'too-large'],
    ] as const)('of %i bytes, cap %i: %s', async (size, maxBytes, kind) => {
      const path = file('sized', 'x'.repeat(size));
      const outcome = await read(path, { maxBytes });
      expect(outcome.kind).toBe(kind);
      if (outcome.kind === 'too-large') expect(outcome.size).toBe(size);
    });

    it('gives its first maxBytes with larger: head, marked truncated', async () => {
      const path = file('long', 'abcdefghij');
      expect(await read(path, { maxBytes: 4, larger: 'head' })).toMatchObject({
        kind: 'read',
        truncated: true,
      });
      expect(text(await read(path, { maxBytes: 4, larger: 'head' }))).toBe('abcd');
      expect(await read(path, { maxBytes: 10, larger: 'head' })).toMatchObject({
        truncated: false,
      });
    });

    it('refuses a sparse 3 GiB file by its size, without reading it', async () => {
      const path = file('sparse', '');
      truncateSync(path, 3 * 1024 ** 3);
      expect(await read(path, { maxBytes: 1024 * 1024 })).toMatchObject({
        kind: 'too-large',
        size: 3 * 1024 ** 3,
      });
      const head = await read(path, { maxBytes: 8, larger: 'head' });
      expect(head).toMatchObject({ kind: 'read', truncated: true });
      if (head.kind === 'read') expect([...head.bytes]).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    });
  });

  describe('what is not a regular file', () => {
    it('a FIFO with no writer: not-regular at once (no hang), also through a link', async () => {
      const pipe = fifo('pipe');
      expect(await read(pipe, { maxBytes: 10 })).toEqual({ kind: 'not-regular', type: 'fifo' });
      expect(await read(link('to-pipe', pipe), { maxBytes: 10 })).toEqual({
        kind: 'not-regular',
        type: 'fifo',
      });
    });

    it('/dev/zero and /dev/null: character devices, also through a link', async () => {
      for (const device of ['/dev/zero', '/dev/null', '/dev/urandom']) {
        expect(await read(device, { maxBytes: 10, larger: 'head' })).toEqual({
          kind: 'not-regular',
          type: 'character-device',
        });
        expect(await read(link(`to-${device.slice(5)}`, device), { maxBytes: 10 })).toEqual({
          kind: 'not-regular',
          type: 'character-device',
        });
      }
    });

    it('a directory, also through a link', async () => {
      const folder = join(dir, 'folder');
      mkdirSync(folder);
      expect(await read(folder, { maxBytes: 10 })).toEqual({
        kind: 'not-regular',
        type: 'directory',
      });
      expect(await read(link('to-folder', folder), { maxBytes: 10 })).toEqual({
        kind: 'not-regular',
        type: 'directory',
      });
    });

    it('a listening Unix socket, also through a link', async () => {
      const path = join(dir, 'socket');
      await using server = await listening(path);
      expect(server.listening).toBe(true);
      expect(await read(path, { maxBytes: 10 })).toEqual({ kind: 'not-regular', type: 'socket' });
      expect(await read(link('to-socket', path), { maxBytes: 10 })).toEqual({
        kind: 'not-regular',
        type: 'socket',
      });
    });

    it.each([
      ['a file', () => file('plain', 'x')],
      ['a FIFO', () => fifo('pipe')],
      ['/dev/zero', () => '/dev/zero'],
      ['a missing target', () => join(dir, 'nothing')],
    ])('a link to %s is not followed with followSymlinks: false', async (_what, target) => {
      const path = link('the-link', target());
      expect(await read(path, { maxBytes: 10, followSymlinks: false })).toEqual({
        kind: 'not-regular',
        type: 'symlink',
      });
    });

    it('a link in an earlier component is still followed with followSymlinks: false', async () => {
      mkdirSync(join(dir, 'real'));
      file('real/inner.txt', 'inner');
      link('alias', join(dir, 'real'));
      expect(
        text(await read(join(dir, 'alias', 'inner.txt'), { maxBytes: 10, followSymlinks: false })),
      ).toBe('inner');
    });
  });

  describe('what cannot be read', () => {
    it('missing: ENOENT, a dangling link, and a path through a file (ENOTDIR)', async () => {
      expect(await read(join(dir, 'none'), { maxBytes: 10 })).toMatchObject({
        kind: 'missing',
        code: 'ENOENT',
      });
      expect(await read(link('dangling', join(dir, 'gone')), { maxBytes: 10 })).toMatchObject({
        kind: 'missing',
        code: 'ENOENT',
      });
      const plain = file('plain', 'x');
      expect(await read(join(plain, 'below'), { maxBytes: 10 })).toMatchObject({
        kind: 'missing',
        code: 'ENOTDIR',
      });
    });

    it('a link loop is unreadable (ELOOP), naming the code', async () => {
      link('loop-a', join(dir, 'loop-b'));
      link('loop-b', join(dir, 'loop-a'));
      const outcome = await read(join(dir, 'loop-a'), { maxBytes: 10 });
      expect(outcome).toMatchObject({ kind: 'unreadable', code: 'ELOOP' });
      if (outcome.kind === 'unreadable') expect(outcome.error).toBeInstanceOf(Error);
    });

    it('a cap that is not a whole number of bytes is a RangeError', async () => {
      const path = file('a', 'x');
      for (const maxBytes of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])
        await expect(read(path, { maxBytes })).rejects.toThrow(RangeError);
    });
  });

  describe('check', () => {
    it('sees the opened file and its real path; a reason refuses it, nothing read', async () => {
      const target = file('secret', 'do not read');
      const seen: string[] = [];
      const outcome = await read(link('innocent', target), {
        maxBytes: 100,
        realPath: true,
        check: ({ stats, realPath }) => {
          seen.push(`${stats.size} ${realPath}`);
          return realPath === target ? 'it leads to the secret' : undefined;
        },
      });
      expect(seen).toEqual([`11 ${target}`]);
      expect(outcome).toMatchObject({
        kind: 'refused',
        reason: 'it leads to the secret',
        realPath: target,
      });
    });

    it('is asked before the size is judged', async () => {
      const path = file('big', 'x'.repeat(100));
      expect(await read(path, { maxBytes: 10, check: () => 'no' })).toMatchObject({
        kind: 'refused',
      });
    });

    it('is not asked for what is not a regular file', async () => {
      let asked = false;
      await read(fifo('pipe'), {
        maxBytes: 10,
        check: () => {
          asked = true;
          return undefined;
        },
      });
      expect(asked).toBe(false);
    });

    it('an error it throws propagates (and the file is closed: see afterEach)', async () => {
      const path = file('a', 'x');
      await expect(
        read(path, {
          maxBytes: 10,
          check: () => {
            throw new Error('the check failed');
          },
        }),
      ).rejects.toThrow('the check failed');
    });
  });

  // The check runs between open and read: what it does to the file is what happens while it is read.
  describe('a file that changes while it is read', () => {
    it('grows within the cap: the growth is read', async () => {
      const path = file('growing', '0123456789');
      const outcome = await read(path, {
        maxBytes: 100,
        check: during(() => appendFileSync(path, 'x'.repeat(20))),
      });
      expect(text(outcome)).toBe(`0123456789${'x'.repeat(20)}`);
    });

    it('grows past the cap: too-large, not followed (or its head with larger: head)', async () => {
      const path = file('growing', '0123456789');
      const grow = during(() => appendFileSync(path, 'x'.repeat(200_000)));
      expect(await read(path, { maxBytes: 100, check: grow })).toEqual(
        expect.objectContaining({ kind: 'too-large', size: 101 }),
      );
      const head = await read(path, { maxBytes: 100_000, larger: 'head', check: grow });
      expect(head).toMatchObject({ kind: 'read', truncated: true });
      if (head.kind === 'read') expect(head.bytes.length).toBe(100_000);
    });

    it('shrinks: what is left is read', async () => {
      const path = file('shrinking', '0123456789');
      expect(
        text(await read(path, { maxBytes: 100, check: during(() => truncateSync(path, 3)) })),
      ).toBe('012');
    });

    it('is replaced (renamed over): the opened file is read, not the new one', async () => {
      const path = file('replaced', 'the old content');
      const replacement = file('replacement', 'the new content, longer than the old one');
      expect(
        text(
          await read(path, { maxBytes: 100, check: during(() => renameSync(replacement, path)) }),
        ),
      ).toBe('the old content');
      expect(text(await read(path, { maxBytes: 100 }))).toBe(
        'the new content, longer than the old one',
      );
    });

    it('is removed: the opened file is still read whole', async () => {
      const path = file('removed', 'still here');
      expect(text(await read(path, { maxBytes: 100, check: during(() => rmSync(path)) }))).toBe(
        'still here',
      );
    });
  });
});

describe('readRegularFile with a fileSystem of its caller', () => {
  it('makes every call through it', async () => {
    const path = file('counted.txt', 'counted');
    const calls: string[] = [];
    const count = <T extends (...args: never[]) => unknown>(name: string, call: T): T =>
      ((...args: Parameters<T>) => {
        calls.push(name);
        return call(...args);
      }) as T;
    const counted: RegularFileSystem = {
      stat: count('stat', fsPromises.stat),
      lstat: count('lstat', fsPromises.lstat),
      open: count('open', fsPromises.open),
      readlink: count('readlink', fsPromises.readlink),
      realpath: count('realpath', fsPromises.realpath),
    };
    const outcome = await readRegularFile(path, {
      maxBytes: 100,
      realPath: true,
      fileSystem: counted,
    });
    expect(text(outcome)).toBe('counted');
    expect(calls).toEqual(['stat', 'open', 'readlink']);
    await readRegularFile(path, { maxBytes: 100, followSymlinks: false, fileSystem: counted });
    expect(calls.slice(3)).toEqual(['lstat', 'open']);
  });

  it('a failure it reports is an outcome (EACCES: unreadable)', async () => {
    const path = file('denied.txt', 'x');
    const denied = Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' });
    const outcome = await readRegularFile(path, {
      maxBytes: 100,
      fileSystem: { ...fsPromises, open: () => Promise.reject(denied) },
    });
    expect(outcome).toEqual({ kind: 'unreadable', code: 'EACCES', error: denied });
  });
});

describe('a link swapped between a file, a FIFO and /dev/zero while it is read', () => {
  it('gives the file or not-regular, never blocks or reads the device', async () => {
    const regular = file('regular', 'regular content');
    const pipe = fifo('pipe');
    const path = join(dir, 'swapped');
    symlinkSync(regular, path);
    // Another process swaps the link atomically (a new link renamed over it) as fast as it can,
    // so some reads judge the path as one thing and open another.
    const swapper = spawn(
      process.execPath,
      [
        '-e',
        `const fs = require('node:fs');
         const [path, ...targets] = process.argv.slice(1);
         for (let i = 0; ; i++) {
           const next = path + '.next';
           fs.rmSync(next, { force: true });
           fs.symlinkSync(targets[i % targets.length], next);
           fs.renameSync(next, path);
           if (i === 3) fs.writeSync(1, 'swapping\\n');
         }`,
        path,
        regular,
        pipe,
        '/dev/zero',
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      await new Promise((resolve, reject) => {
        swapper.stdout.once('data', resolve);
        swapper.once('exit', (code) => reject(new Error(`the swapper exited (${code})`)));
      });
      const kinds = new Map<string, number>();
      for (let round = 0; round < 3000; round++) {
        const outcome =
          round % 2 === 0
            ? readRegularFileSync(path, { maxBytes: 1000 })
            : await readRegularFile(path, { maxBytes: 1000 });
        const key =
          outcome.kind === 'not-regular'
            ? outcome.type
            : outcome.kind === 'read'
              ? outcome.bytes.toString('utf8')
              : outcome.kind;
        kinds.set(key, (kinds.get(key) ?? 0) + 1);
      }
      const allowed = ['regular content', 'fifo', 'character-device'];
      expect([...kinds.keys()].filter((key) => !allowed.includes(key))).toEqual([]);
    } finally {
      const closed = new Promise((resolve) => swapper.once('close', resolve));
      swapper.kill('SIGKILL');
      await closed;
    }
  });
});

async function listening(path: string): Promise<Server & AsyncDisposable> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(path, resolve));
  return Object.assign(server, {
    [Symbol.asyncDispose]: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}
