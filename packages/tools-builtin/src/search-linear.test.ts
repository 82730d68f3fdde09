/**
 * The TypeScript search engine (the fallback when ripgrep is missing) runs the model's pattern
 * over a repository's files. On JavaScript's backtracking engine each of these hostile lines froze
 * the process (main thread or worker) for minutes to hours, abort and timeout included; on RE2
 * they take milliseconds. A test here that hangs is the failure.
 */
import * as diagnosticsChannel from 'node:diagnostics_channel';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Worker } from 'node:worker_threads';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSearchTool, type SearchArgs } from './search.js';
import {
  createRipgrepEngine,
  createTypeScriptEngine,
  findRipgrep,
  type SearchEngine,
  type TypeScriptEngineOptions,
} from './search-engines.js';
import { makeTempDir, resultText, testContext } from './test-helpers.js';
import { nodeFileSystem } from './workspace.js';

/** A pattern, a line that sends a backtracking engine into a spin, and a line it matches. */
const hostile = [
  // > 60 s on V8 (polynomial: every split of the digits between the two \d+).
  { pattern: '\\d+\\.?\\d+x', spin: '1'.repeat(30_000), match: 'version 12x' },
  // Exponential: 2^40 ways to split the a's.
  { pattern: '(a+)+$', spin: `${'a'.repeat(40)}!`, match: 'aaaa' },
  // Exponential: each digit is both a \w and a \d.
  { pattern: '(\\w|\\d)+@', spin: `${'1'.repeat(40)}!`, match: 'user1@example' },
  // C(40, 12) ways to place the twelve a's.
  { pattern: '(.*a){12}z', spin: 'a'.repeat(40), match: `${'a'.repeat(12)}z` },
  // Quadratic: 5.8 s on V8 for this minified-looking line.
  { pattern: '[a-z]+$', spin: `${'a'.repeat(100_000)}!`, match: 'const x = abc' },
  // Quadratic, case-insensitive, in the middle of a long line.
  {
    pattern: '(?i)import\\s.*from\\s.*;z',
    spin: `${'import from '.repeat(10_000)}`,
    match: 'IMPORT a FROM b;Z',
  },
];

describe('TypeScript engine on hostile lines', () => {
  let tree: string;
  beforeAll(() => {
    tree = makeTempDir();
    hostile.forEach(({ spin, match }, index) => {
      // The spinning line inside ordinary code, and a file with a match after one.
      fs.writeFileSync(path.join(tree, `spin-${index}.js`), `let a = 1;\n${spin}\nlet b = 2;\n`);
      fs.writeFileSync(path.join(tree, `tail-${index}.js`), `${spin}\n${match}\n`);
    });
  });

  const search = (options: Partial<TypeScriptEngineOptions>) =>
    createSearchTool({
      cwd: tree,
      maxOutputChars: Number.POSITIVE_INFINITY,
      engine: createTypeScriptEngine({ fs: nodeFileSystem, ...options }),
    });

  describe.each([
    { where: 'in this thread', options: { workers: 0 } },
    { where: 'in a worker', options: { workers: 1, workerThreshold: 0 } },
  ])('$where', ({ options }) => {
    it.each(hostile.map((entry, index) => ({ ...entry, index })))(
      '$pattern finds its match',
      async ({ pattern, match, index }) => {
        const tool = search(options);
        const run = async (args: Partial<SearchArgs>) =>
          resultText(await tool.execute({ pattern, head_limit: 100_000, ...args }, testContext()));
        const lineOf = `tail-${index}.js:2:${match}`;
        // Every spinning line is in the files; only this pattern's own match line shows.
        expect((await run({})).split('\n')).toContain(lineOf);
        expect(await run({ output_mode: 'files_with_matches' })).toContain(`tail-${index}.js`);
        expect(await run({ output_mode: 'count' })).toContain(`tail-${index}.js:1`);
        expect(await run({ case_sensitive: false, output_mode: 'count' })).toContain(
          `tail-${index}.js:1`,
        );
        expect(await run({ context: 1 })).toContain(lineOf);
      },
      60_000,
    );
  });
});

describe('TypeScript engine on hostile lines, beside ripgrep', () => {
  it.for(hostile.map(({ pattern }) => pattern))(
    '%s gives what ripgrep gives',
    { timeout: 60_000 },
    async (pattern, context) => {
      skipWithout('rg')(context);
      const dir = makeTempDir();
      hostile.forEach(({ spin, match }, index) => {
        fs.writeFileSync(path.join(dir, `f${index}.js`), `let a = 1;\n${spin}\n${match}\n`);
      });
      const run = async (engine: SearchEngine, args: Partial<SearchArgs>) =>
        resultText(
          await createSearchTool({
            cwd: dir,
            maxOutputChars: Number.POSITIVE_INFINITY,
            engine,
          }).execute({ pattern, head_limit: 100_000, ...args }, testContext()),
        );
      const ripgrep = createRipgrepEngine({ rgPath: findRipgrep() as string });
      const typescript = createTypeScriptEngine({ fs: nodeFileSystem, workers: 0 });
      for (const args of [{}, { case_sensitive: false }, { output_mode: 'count' as const }])
        expect(await run(typescript, args)).toBe(await run(ripgrep, args));
    },
  );
});

describe('TypeScript engine: what RE2 cannot run', () => {
  it.each([
    ['foo(?=bar)', 'lookaround'],
    ['(?<!x)y', 'lookaround'],
    ['(a)\\1', 'back-references'],
  ])('%s is refused as invalid arguments, naming %s', async (pattern, named) => {
    const dir = makeTempDir();
    fs.writeFileSync(path.join(dir, 'a.txt'), 'foobar\n');
    const tool = createSearchTool({
      cwd: dir,
      engine: createTypeScriptEngine({ fs: nodeFileSystem, workers: 0 }),
    });
    const error = await tool.execute({ pattern }, testContext()).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toMatchObject({ kind: 'invalid-args' });
    expect(String((error as Error).message)).toContain(named);
  });

  it.each([
    ['\\Afoo', 'foo 1\nfoo 2\nbar\n', 'a.txt:1:foo 1\na.txt:2:foo 2'],
    ['o \\d\\z', 'foo 1\nfoo 2\nbar\n', 'a.txt:1:foo 1\na.txt:2:foo 2'],
    ['(?-m:^)foo', 'foo 1\nfoo 2\nbar\n', 'a.txt:1:foo 1\na.txt:2:foo 2'],
  ])(
    '%s holds on every line, not only at the start or end of a block',
    async (pattern, text, expected) => {
      const dir = makeTempDir();
      fs.writeFileSync(path.join(dir, 'a.txt'), text);
      const tool = createSearchTool({
        cwd: dir,
        engine: createTypeScriptEngine({ fs: nodeFileSystem, workers: 0 }),
      });
      expect(resultText(await tool.execute({ pattern }, testContext()))).toBe(expected);
    },
  );
});

describe('TypeScript engine: an abort while a worker is busy', () => {
  const started: { exited: boolean }[] = [];
  const onWorker = ({ worker }: { worker: Worker }) => {
    const entry = { exited: false };
    started.push(entry);
    worker.once('exit', () => {
      entry.exited = true;
    });
  };
  beforeAll(() =>
    diagnosticsChannel.subscribe('worker_threads', onWorker as (message: unknown) => void),
  );
  afterAll(() =>
    diagnosticsChannel.unsubscribe('worker_threads', onWorker as (message: unknown) => void),
  );

  it('cancels the search at once and terminates the worker', async () => {
    const dir = makeTempDir();
    for (let index = 0; index < 5; index++)
      fs.writeFileSync(path.join(dir, `f${index}.txt`), 'hay\n');
    // A worker that never answers once it has work, as one deep in a file would not; it says
    // so with a file first.
    const modules = makeTempDir();
    const busy = path.join(modules, 'busy.mjs');
    fs.writeFileSync(
      busy,
      `import { writeFileSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
parentPort.postMessage({ type: 'ready' });
parentPort.on('message', () => {
  writeFileSync(${JSON.stringify(path.join(modules, 'spinning'))}, '');
  for (;;) {}
});
`,
    );
    const spinning = new Promise<void>((resolve) => {
      const watcher = fs.watch(modules, (_event, name) => {
        if (name !== 'spinning') return;
        watcher.close();
        resolve();
      });
    });
    const tool = createSearchTool({
      cwd: dir,
      engine: createTypeScriptEngine({
        fs: nodeFileSystem,
        workers: 1,
        workerThreshold: 0,
        workerUrl: pathToFileURL(busy),
      }),
    });
    const controller = new AbortController();
    const before = started.length;
    const running = tool.execute({ pattern: 'hay' }, testContext({ signal: controller.signal }));
    await spinning;
    controller.abort();
    await expect(running).rejects.toMatchObject({ kind: 'cancelled' });
    expect(started.slice(before).every((worker) => worker.exited)).toBe(true);
  }, 60_000);
});
