// The search, glob and list_files tools over real fixture trees, ripgrep and the TypeScript worker
// engine (~610 lines: the trees and the engine switch are shared by every describe).
import * as diagnosticsChannel from 'node:diagnostics_channel';
import * as fs from 'node:fs';
import * as fsPromises from 'node:fs/promises';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Worker } from 'node:worker_threads';
import { skipWithout } from '@agent/tooling-system-tools';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createGlobTool } from './glob.js';
import { createListFilesTool } from './list-files.js';
import { createSearchTool, type SearchArgs } from './search.js';
import {
  createTypeScriptEngine,
  findRipgrep,
  type TypeScriptEngineOptions,
} from './search-engines.js';
import {
  compareNamesFast,
  compileScanPatterns,
  type SearchWalkRequest,
  scanFileSync,
  walkFilesSync,
} from './search-worker.js';
import { makeTempDir, resultText, testContext } from './test-helpers.js';
import { walk } from './walk.js';
import { nodeFileSystem } from './workspace.js';

let dir: string;
const rg = findRipgrep();

function put(relative: string, content: string | Buffer) {
  const target = path.join(dir, relative);
  fs.mkdirSync(path.dirname(target), { recursive: true });
  fs.writeFileSync(target, content);
}

function put2(root: string, relative: string, content: string | Buffer) {
  fs.writeFileSync(path.join(root, relative), content);
}

beforeAll(() => {
  dir = makeTempDir();
  put('.gitignore', '*.log\nbuild/\n!keep.log\n');
  put(
    'src/app.ts',
    'import x from "y";\nconst needle = 1;\n// TODO: more\nexport const NEEDLE = needle;\n',
  );
  put(
    'src/util/helpers.ts',
    `${Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join('\n')}\nneedle at 31\nline 32\n`,
  );
  put('src/util/.gitignore', 'secret.ts\n');
  put('src/util/secret.ts', 'needle hidden by nested ignore\n');
  put('src/win.txt', 'first\r\nneedle in crlf\r\nlast\r\n');
  put('src/long.txt', `needle ${'z'.repeat(800)}\n`);
  put('src/unicode-ß.md', 'Ünïcödé needle ✓\n');
  put(
    'src/bad-utf8.txt',
    Buffer.concat([Buffer.from('needle '), Buffer.from([0xff, 0xfe]), Buffer.from(' tail\n')]),
  );
  put('src/dash.txt', '-v flag mentioned\n--needle\n');
  put('debug.log', 'needle in ignored log\n');
  put('keep.log', 'needle in re-included log\n');
  put('build/out.js', 'needle in ignored build\n');
  put('node_modules/pkg/index.js', 'needle in node_modules\n');
  put('.hidden/config', 'needle in hidden dir\n');
  put('bin/data.bin', Buffer.concat([Buffer.from('needle\0binary')]));
  put('a b/c.txt', 'needle with space in path\n');
  put('B/upper.txt', 'NEEDLE upper\n');
  fs.symlinkSync('/etc/hostname', path.join(dir, 'link-out.txt'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const queries: SearchArgs[] = [
  { pattern: 'needle' },
  { pattern: 'needle', case_sensitive: false },
  { pattern: 'needle', output_mode: 'files_with_matches' },
  { pattern: 'needle', output_mode: 'count', case_sensitive: false },
  { pattern: 'needle', context: 2 },
  { pattern: 'needle', include: '*.ts' },
  { pattern: 'needle', include: 'src/**/*.{ts,md}' },
  { pattern: 'needle', path: 'src/util' },
  { pattern: 'needle', path: 'src/app.ts' },
  { pattern: '-v' },
  { pattern: '--needle' },
  { pattern: '^line 3\\d$' },
  { pattern: 'needle', head_limit: 3 },
  { pattern: 'needle', head_limit: 3, offset: 3 },
  { pattern: 'no such thing anywhere' },
  { pattern: 'T[O]DO|NEEDLE' },
];

describe('search', () => {
  const typescript = () => createSearchTool({ cwd: dir, engine: 'typescript' });

  it('honours ignore files, skips binaries, heavy and symlinked entries, cuts long lines', async () => {
    const result = await typescript().execute(
      { pattern: 'needle', case_sensitive: false },
      testContext(),
    );
    const text = resultText(result);
    expect(text).toContain('src/app.ts:2:const needle = 1;');
    expect(text).toContain('keep.log:1:needle in re-included log');
    expect(text).toContain('.hidden/config:1:needle in hidden dir');
    expect(text).toContain('src/win.txt:2:needle in crlf');
    expect(text).not.toContain('\r');
    expect(text).toContain('src/bad-utf8.txt:1:needle \uFFFD\uFFFD tail');
    expect(text).toContain(`src/long.txt:1:needle ${'z'.repeat(493)}… [307 more characters]`);
    for (const hidden of [
      'debug.log',
      'build/',
      'node_modules',
      'secret.ts',
      'data.bin',
      'link-out',
    ])
      expect(text).not.toContain(hidden);
  });

  it('reports truncation and pages with offset', async () => {
    const first = await typescript().execute({ pattern: 'needle', head_limit: 2 }, testContext());
    expect(resultText(first)).toMatch(
      /\[Results truncated at head_limit 2; use offset 2 to see more\.\]$/,
    );
    expect(first.details?.truncated).toBe(true);
  });

  it('treats a pattern starting with "-" as a pattern, not an option', async () => {
    const result = await typescript().execute({ pattern: '--needle' }, testContext());
    expect(resultText(result)).toBe('src/dash.txt:2:--needle');
  });

  it('TypeScript engine: a file that is one huge line costs linear time, even read in small pieces', async () => {
    const huge = makeTempDir();
    try {
      fs.writeFileSync(
        path.join(huge, 'one-line.txt'),
        `${'z'.repeat(16 * 1024 * 1024)} needle\nnext\n`,
      );
      // Reads of at most 4 KiB: 4,096 reads for one line (joining all so far per read would copy ~32 GB).
      const open = (async (...args: Parameters<typeof fsPromises.open>) => {
        const handle = await fsPromises.open(...args);
        const read = handle.read.bind(handle) as (
          buffer: Buffer,
          offset: number,
          length: number,
          position: number,
        ) => Promise<{ bytesRead: number }>;
        return Object.assign(handle, {
          read: (buffer: Buffer, offset: number, length: number, position: number) =>
            read(buffer, offset, Math.min(length, 4096), position),
        });
      }) as typeof fsPromises.open;
      const search = createSearchTool({
        cwd: huge,
        engine: 'typescript',
        fs: { ...fsPromises, open },
      });
      const result = await search.execute({ pattern: 'needle|next' }, testContext());
      expect(resultText(result)).toBe(
        `one-line.txt:1:${'z'.repeat(500)}… [7 more characters]\none-line.txt:2:next`.replace(
          '7 more',
          `${16 * 1024 * 1024 + 7 - 500} more`,
        ),
      );
    } finally {
      fs.rmSync(huge, { recursive: true, force: true });
    }
  }, 60_000);

  it('TypeScript engine: a literal pattern skips blocks by their bytes, keeping line numbers and counts', async () => {
    const big = makeTempDir();
    try {
      // ~3.4 MB: several 1 MiB reads, with matches after blocks that are skipped without decoding.
      const lines = Array.from({ length: 200_000 }, (_, i) => `filler line ${i + 1} ✓`);
      lines[149_999] = 'here is the ünïcödé needle';
      lines[199_999] = 'ünïcödé needle again';
      fs.writeFileSync(path.join(big, 'big.txt'), `${lines.join('\n')}\n`);
      fs.writeFileSync(
        path.join(big, 'bad.txt'),
        Buffer.concat([Buffer.from([0xff, 0xfe, 0x0a]), Buffer.from('x ünïcödé needle\n')]),
      );
      const search = createSearchTool({ cwd: big, engine: 'typescript' });
      const content = await search.execute({ pattern: 'ünïcödé needle' }, testContext());
      expect(resultText(content)).toBe(
        'bad.txt:2:x ünïcödé needle\nbig.txt:150000:here is the ünïcödé needle\n--\nbig.txt:200000:ünïcödé needle again',
      );
      const count = await search.execute(
        { pattern: 'ünïcödé needle', output_mode: 'count' },
        testContext(),
      );
      expect(resultText(count)).toBe('bad.txt:1\nbig.txt:2');
      const files = await search.execute(
        { pattern: 'needle', output_mode: 'files_with_matches' },
        testContext(),
      );
      expect(resultText(files)).toBe('bad.txt\nbig.txt');
    } finally {
      fs.rmSync(big, { recursive: true, force: true });
    }
  }, 60_000);

  it('TypeScript engine: a literal file list finds a match across reads of a line longer than the buffer', async () => {
    const long = makeTempDir();
    try {
      const mib = 1024 * 1024;
      // 'needle' straddles the first 1 MiB read; the line goes on for 3 MiB.
      put2(long, 'across.txt', `${'a'.repeat(mib - 3)}needle${'b'.repeat(2 * mib)}\n`);
      put2(long, 'late.txt', `${'c'.repeat(3 * mib)}needle`);
      put2(long, 'none.txt', `${'d'.repeat(3 * mib)}\nneedl\n`);
      put2(
        long,
        'after-nul.txt',
        Buffer.concat([
          Buffer.from('x'.repeat(2 * mib)),
          Buffer.from([0]),
          Buffer.from('needle\n'),
        ]),
      );
      const search = createSearchTool({ cwd: long, engine: 'typescript' });
      const files = await search.execute(
        { pattern: 'needle', output_mode: 'files_with_matches' },
        testContext(),
      );
      expect(resultText(files)).toBe('across.txt\nlate.txt');
    } finally {
      fs.rmSync(long, { recursive: true, force: true });
    }
  }, 60_000);

  it('reports an invalid regular expression as invalid arguments', async () => {
    await expect(
      typescript().execute({ pattern: '(unclosed' }, testContext()),
    ).rejects.toMatchObject({
      kind: 'invalid-args',
    });
  });

  it('gives identical output with ripgrep and with the TypeScript engine', async (context) => {
    skipWithout('rg')(context);
    const ripgrep = createSearchTool({ cwd: dir, engine: 'ripgrep' });
    const ts = typescript();
    for (const query of queries) {
      const [a, b] = await Promise.all([
        ripgrep.execute(query, testContext()),
        ts.execute(query, testContext()),
      ]);
      expect(a.details?.engine).toBe('ripgrep');
      expect(b.details?.engine).toBe('typescript');
      expect({ query, text: resultText(b) }).toEqual({ query, text: resultText(a) });
    }
  });

  it('file lists come in the order rg --sort=path gives, though rg runs unsorted (all cores)', async (context) => {
    skipWithout('rg')(context);
    const tree = makeTempDir();
    for (const name of ['a-c.txt', 'a/b.txt', 'B.txt', 'a.b/c.txt', 'é.txt', 'z/y/x.txt', 'Z.txt'])
      fs.mkdirSync(path.dirname(path.join(tree, name)), { recursive: true });
    for (const name of ['a-c.txt', 'a/b.txt', 'B.txt', 'a.b/c.txt', 'é.txt', 'z/y/x.txt', 'Z.txt'])
      fs.writeFileSync(path.join(tree, name), 'needle\n');
    const { spawnSync } = await import('node:child_process');
    const sorted = spawnSync(
      rg as string,
      ['--no-config', '--sort=path', '--files-with-matches', 'needle', '.'],
      { cwd: tree, encoding: 'utf8' },
    )
      .stdout.trim()
      .split('\n')
      .map((line) => line.replace(/^\.\//, ''));
    const tool = createSearchTool({ cwd: tree, engine: 'ripgrep' });
    const listed = resultText(
      await tool.execute({ pattern: 'needle', output_mode: 'files_with_matches' }, testContext()),
    ).split('\n');
    expect(listed).toEqual(sorted);
    const counted = resultText(
      await tool.execute({ pattern: 'needle', output_mode: 'count' }, testContext()),
    )
      .split('\n')
      .map((line) => line.replace(/:\d+$/, ''));
    expect(counted).toEqual(sorted);
  });

  it('reports a ripgrep regex error as invalid arguments', async (context) => {
    skipWithout('rg')(context);
    const ripgrep = createSearchTool({ cwd: dir, engine: 'ripgrep' });
    await expect(ripgrep.execute({ pattern: '(unclosed' }, testContext())).rejects.toMatchObject({
      kind: 'invalid-args',
    });
  });

  it.for([
    ['a U+2028 in a matched line', 'var s = "a\u2028b"; // needle\n'],
    ['a U+2029 in a context line', 'x\u2029y\nneedle\n'],
    ['a lone CR in a matched line', 'needle\rmore\n'],
  ] as const)(
    '%s: ripgrep’s content search gives what the TypeScript engine gives',
    async ([, body], context) => {
      skipWithout('rg')(context);
      const tree = makeTempDir();
      fs.writeFileSync(path.join(tree, 'bundle.min.js'), body);
      fs.writeFileSync(path.join(tree, 'name\u2028odd.txt'), 'needle\n');
      const query = { pattern: 'needle', output_mode: 'content' as const, context: 1 };
      // Before: "Unterminated string in JSON" — readline ended ripgrep's JSON line at U+2028.
      const a = await createSearchTool({ cwd: tree, engine: 'ripgrep' }).execute(
        query,
        testContext(),
      );
      const b = await createSearchTool({ cwd: tree, engine: 'typescript' }).execute(
        query,
        testContext(),
      );
      expect(resultText(a)).toBe(resultText(b));
      expect(resultText(a)).toContain('needle');
    },
  );
});

describe('glob and list_files', () => {
  it('glob matches with ** across directories, sorted, honouring ignores', async () => {
    const glob = createGlobTool({ cwd: dir });
    expect(resultText(await glob.execute({ pattern: '**/*.ts' }, testContext()))).toBe(
      'src/app.ts\nsrc/util/helpers.ts',
    );
    expect(resultText(await glob.execute({ pattern: '*.log' }, testContext()))).toBe('keep.log');
    expect(resultText(await glob.execute({ pattern: 'src/*.txt' }, testContext()))).toBe(
      'src/bad-utf8.txt\nsrc/dash.txt\nsrc/long.txt\nsrc/win.txt',
    );
    const limited = await glob.execute({ pattern: '**/*', limit: 2 }, testContext());
    expect(resultText(limited)).toMatch(/more not shown/);
    await expect(glob.execute({ pattern: '../**/*' }, testContext())).rejects.toMatchObject({
      kind: 'denied',
    });
  });

  it('list_files shows a tree to a depth, filtered by a pattern', async () => {
    const list = createListFilesTool({ cwd: dir });
    const tree = resultText(await list.execute({ path: 'src', depth: 1 }, testContext()));
    expect(tree).toBe(
      'src/\n  app.ts\n  bad-utf8.txt\n  dash.txt\n  long.txt\n  unicode-ß.md\n  util/\n  win.txt',
    );
    const filtered = resultText(await list.execute({ depth: 5, pattern: '*.ts' }, testContext()));
    expect(filtered).toBe('./\n  src/\n    app.ts\n    util/\n      helpers.ts');
    const top = resultText(await list.execute({}, testContext()));
    expect(top).not.toContain('node_modules');
    expect(top).not.toContain('debug.log');
    expect(top).toContain('link-out.txt ->');
  });
});

describe('TypeScript engine with worker threads', () => {
  let tree: string;
  /** Files under `tree`, as the in-thread walk lists them for a search. */
  let walked: string[];
  const started: { exited: boolean }[] = [];
  const onWorker = ({ worker }: { worker: Worker }) => {
    const entry = { exited: false };
    started.push(entry);
    worker.once('exit', () => {
      entry.exited = true;
    });
  };

  beforeAll(async () => {
    diagnosticsChannel.subscribe('worker_threads', onWorker as (message: unknown) => void);
    tree = makeTempDir();
    const names = ['a', 'a-c', 'a b', 'a.b', 'B', 'é', 'z', 'Z', '\u{1F600}', '\uFF21'];
    let index = 0;
    const write = (relative: string, content: string | Buffer) => {
      fs.mkdirSync(path.dirname(path.join(tree, relative)), { recursive: true });
      fs.writeFileSync(path.join(tree, relative), content);
    };
    for (const top of names)
      for (const middle of names.slice(0, 6))
        for (let leaf = 0; leaf < 12; leaf++) {
          index++;
          const extension = ['ts', 'md', 'txt', 'log'][index % 4];
          const lines = Array.from({ length: 6 }, (_, line) =>
            (index + line) % 5 === 0 ? `Needle ${index} line ${line}` : `hay ${index} ${line}`,
          );
          write(`${top}/${middle}/f${leaf}.${extension}`, `${lines.join('\n')}\n`);
        }
    write('.gitignore', '*.log\nB/a/\n!a/a/f3.log\n');
    write('a/.ignore', 'f1.*\n');
    write('bin/data.bin', Buffer.from('Needle\0binary'));
    write('node_modules/pkg/index.js', 'Needle\n');
    fs.symlinkSync(path.join(tree, 'a/a/f0.md'), path.join(tree, 'a/link.md'));
    walked = [];
    for await (const entry of walk({ root: tree, fs: fsPromises, skip: ['node_modules'] }))
      if (!entry.isDirectory && !entry.isSymbolicLink) walked.push(entry.path);
  });
  afterAll(() => {
    diagnosticsChannel.unsubscribe('worker_threads', onWorker as (message: unknown) => void);
    fs.rmSync(tree, { recursive: true, force: true });
  });

  const tool = (options: Partial<TypeScriptEngineOptions> = {}) =>
    createSearchTool({
      cwd: tree,
      skip: ['node_modules'],
      maxOutputChars: Number.POSITIVE_INFINITY,
      engine: createTypeScriptEngine({ fs: nodeFileSystem, ...options }),
    });
  const many: SearchArgs[] = [
    { pattern: 'Needle', output_mode: 'files_with_matches', head_limit: 100_000 },
    { pattern: 'needle \\d+', case_sensitive: false, output_mode: 'count', head_limit: 100_000 },
    { pattern: 'Needle', context: 1, head_limit: 100_000 },
    { pattern: 'Needle', include: '*.ts', head_limit: 100_000 },
    { pattern: 'Needle 1\\d', include: 'a*/**/*.{md,log}', head_limit: 100_000 },
    { pattern: 'Needle', head_limit: 7, offset: 300 },
  ];

  it('walks as the in-thread walk does, also resuming after any file', () => {
    const list = (request: Partial<SearchWalkRequest> = {}) => {
      const files: string[] = [];
      walkFilesSync(
        {
          root: tree,
          skip: ['node_modules'],
          respectIgnoreFiles: true,
          include: undefined,
          after: undefined,
          ...request,
        },
        (file) => files.push(file) > 0,
      );
      return files;
    };
    expect(walked.length).toBeGreaterThan(500);
    expect(list()).toEqual(walked);
    for (let at = 0; at < walked.length; at += 37)
      expect(list({ after: walked[at] })).toEqual(walked.slice(at + 1));
    expect(list({ after: walked.at(-1) })).toEqual([]);
    expect(list({ include: '*.md' })).toEqual(walked.filter((file) => file.endsWith('.md')));
    const unignored = list({ respectIgnoreFiles: false });
    expect(unignored.length).toBeGreaterThan(walked.length);
    let stopAfter = 5;
    expect(list({ after: walked[3] }).slice(0, 5)).toEqual(
      (() => {
        const files: string[] = [];
        walkFilesSync(
          {
            root: tree,
            skip: ['node_modules'],
            respectIgnoreFiles: true,
            include: undefined,
            after: walked[3],
          },
          (file) => files.push(file) > 0 && --stopAfter > 0,
        );
        return files;
      })(),
    );
  });

  it('orders names by their UTF-8 bytes without encoding them', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'grapheme' }), (a, b) => {
        expect(Math.sign(compareNamesFast(a, b))).toBe(
          Math.sign(Buffer.compare(Buffer.from(a), Buffer.from(b))),
        );
      }),
    );
  });

  it('gives the in-thread results, in the same order, with workers from the start, alone or handed over to', async () => {
    const inThread = tool({ workers: 0 });
    const variants = [
      tool({ workers: 2, workerThreshold: 0 }),
      tool({ workers: 1, workerThreshold: 0 }),
      tool({ workers: 3, workerThreshold: 25 }),
    ];
    const before = started.length;
    for (const args of many) {
      const expected = resultText(await inThread.execute(args, testContext()));
      expect(expected).not.toBe('No matches found.');
      for (const variant of variants)
        expect({ args, text: resultText(await variant.execute(args, testContext())) }).toEqual({
          args,
          text: expected,
        });
    }
    // Workers were used, and none is left running.
    expect(started.length).toBeGreaterThanOrEqual(before + many.length * 3);
    expect(started.every((worker) => worker.exited)).toBe(true);
  }, 120_000);

  it('uses workers past the threshold, not for fewer files', async () => {
    const search = tool({ workerThreshold: 100 });
    let before = started.length;
    const all = await search.execute(
      { pattern: 'Needle', output_mode: 'files_with_matches', head_limit: 100_000 },
      testContext(),
    );
    expect(resultText(all)).toBe(
      resultText(
        await tool({ workers: 0 }).execute(
          { pattern: 'Needle', output_mode: 'files_with_matches', head_limit: 100_000 },
          testContext(),
        ),
      ),
    );
    expect(started.length).toBeGreaterThan(before);
    before = started.length;
    await search.execute({ pattern: 'Needle', path: 'a/a' }, testContext());
    expect(started.length).toBe(before);
  }, 60_000);

  it('stops the workers when the consumer stops early', async () => {
    const engine = createTypeScriptEngine({ fs: nodeFileSystem, workers: 2, workerThreshold: 0 });
    const query = {
      root: tree,
      pattern: 'hay',
      caseSensitive: true,
      context: 0,
      mode: 'files_with_matches' as const,
      skip: ['node_modules'],
    };
    const before = started.length;
    const first: string[] = [];
    for await (const result of engine.search(query, new AbortController().signal)) {
      first.push(result.path);
      if (first.length === 3) break;
    }
    expect(first).toEqual(
      walked.filter((file) => fs.readFileSync(file, 'utf8').includes('hay')).slice(0, 3),
    );
    expect(started.length).toBe(before + 2);
    expect(started.slice(before).every((worker) => worker.exited)).toBe(true);
  }, 60_000);

  it('an aborted signal stops the workers and cancels the search', async () => {
    const controller = new AbortController();
    const before = started.length;
    const search = tool({ workers: 2, workerThreshold: 0 }).execute(
      { pattern: 'hay', head_limit: 100_000 },
      testContext({ signal: controller.signal }),
    );
    await vi.waitFor(() => expect(started.length).toBeGreaterThan(before), { timeout: 20_000 });
    controller.abort();
    await expect(search).rejects.toMatchObject({ kind: 'cancelled' });
    expect(started.slice(before).every((worker) => worker.exited)).toBe(true);
  }, 60_000);

  it('skips files it cannot read', async () => {
    const buffer = Buffer.alloc(1024 * 1024);
    const patterns = compileScanPatterns('Needle', true, undefined);
    const query = { mode: 'content' as const, context: 0 };
    const file = walked.find((name) => fs.readFileSync(name, 'utf8').includes('Needle')) as string;
    expect(scanFileSync(file, buffer, patterns, query, () => false)?.count).toBeGreaterThan(0);
    expect(scanFileSync(file, buffer, patterns, query, () => true)).toBeUndefined();
    for (const unreadable of [
      path.join(tree, 'missing.txt'),
      path.join(tree, 'a/link.md'), // a symlink (not followed)
      path.join(tree, 'a'), // a directory
    ])
      expect(scanFileSync(unreadable, buffer, patterns, query, () => false)).toBeUndefined();
    // Without read permission (root reads it anyway).
    const locked = makeTempDir();
    try {
      fs.writeFileSync(path.join(locked, 'a.txt'), 'Needle\n');
      fs.writeFileSync(path.join(locked, 'b.txt'), 'Needle\n');
      fs.chmodSync(path.join(locked, 'a.txt'), 0);
      const search = createSearchTool({
        cwd: locked,
        engine: createTypeScriptEngine({ fs: nodeFileSystem, workers: 1, workerThreshold: 0 }),
      });
      const text = resultText(
        await search.execute(
          { pattern: 'Needle', output_mode: 'files_with_matches' },
          testContext(),
        ),
      );
      expect(text).toBe(process.getuid?.() === 0 ? 'a.txt\nb.txt' : 'b.txt');
    } finally {
      fs.rmSync(locked, { recursive: true, force: true });
    }
  }, 30_000);

  it('searches in this thread when the worker module is missing, fails to load or dies', async () => {
    const modules = makeTempDir();
    try {
      const write = (name: string, source: string) => {
        fs.writeFileSync(path.join(modules, name), source);
        return pathToFileURL(path.join(modules, name));
      };
      const prelude = "import { parentPort } from 'node:worker_threads';\n";
      const urls = [
        pathToFileURL(path.join(modules, 'missing.mjs')),
        write('throws.mjs', "throw new Error('cannot load');\n"),
        // Up, then dies when asked to walk (the walk goes on here after the hand-over point).
        write(
          'dies-walking.mjs',
          `${prelude}parentPort.postMessage({ type: 'ready' });\nparentPort.on('message', () => process.exit(3));\n`,
        ),
        // Walks part of the tree (40 files after the hand-over point), then dies; or dies when
        // asked to search.
        write(
          'dies-searching.mjs',
          `${prelude}const all = ${JSON.stringify(walked)};
parentPort.postMessage({ type: 'ready' });
parentPort.on('message', (m) => {
  if (m.type !== 'walk') process.exit(4);
  if (m.include === undefined) {
    const from = m.after === undefined ? 0 : all.indexOf(m.after) + 1;
    parentPort.postMessage({ type: 'files', files: all.slice(from, from + 40) });
  }
  setTimeout(() => process.exit(5), 50);
});
`,
        ),
      ];
      // Three kinds of search (names, context lines, an include glob) through each failure and
      // configuration: all six of `many` took over 120 s on a loaded CI machine.
      const kinds = [many[0], many[2], many[4]] as SearchArgs[];
      const expected = await Promise.all(
        kinds.map(async (args) =>
          resultText(await tool({ workers: 0 }).execute(args, testContext())),
        ),
      );
      for (const workerUrl of urls)
        for (const [threshold, workers] of [
          [0, 2],
          [0, 1],
          [10, 2],
        ] as const) {
          const search = tool({ workerUrl, workerThreshold: threshold, workers });
          for (const [index, args] of kinds.entries())
            expect({
              workerUrl: workerUrl.pathname,
              threshold,
              args,
              text: resultText(await search.execute(args, testContext())),
            }).toEqual({ workerUrl: workerUrl.pathname, threshold, args, text: expected[index] });
        }
    } finally {
      fs.rmSync(modules, { recursive: true, force: true });
    }
  }, 240_000);
});
