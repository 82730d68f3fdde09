import type { spawn as nodeSpawn } from 'node:child_process';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Readable } from 'node:stream';
import { credentialFreeEnvironment, ToolError } from '@agent/core';
import { trustedProgram } from '@agent/sandbox';
import { decode } from './output-buffer.js';
import { defaultSearchWorkerUrl, SearchPool } from './search-pool.js';
import {
  compareNamesFast,
  compileScanPatterns,
  includeMatcher,
  readChunkBytes,
  type ScanPatterns,
  type ScanQuery,
  scanFile,
} from './search-worker.js';
import { walk } from './walk.js';
import { type FileSystemOperations, nodeFileSystem } from './workspace.js';

/** What search shows per file. */
export type SearchOutputMode = 'content' | 'files_with_matches' | 'count';

/** A search, as both engines receive it. */
export interface SearchQuery {
  /** Real path of the directory or file to search. */
  root: string;
  /** Regular expression (ripgrep's syntax; the TypeScript engine runs it on RE2's, the same but for a few escapes). */
  pattern: string;
  caseSensitive: boolean;
  /** Glob the file paths must match (e.g. `*.ts`, `src/**\/*.{ts,tsx}`). */
  include?: string;
  /** Lines of context around each match (content mode). */
  context: number;
  mode: SearchOutputMode;
  /** Entry names skipped below the root. */
  skip: readonly string[];
  /** Honour .gitignore/.ignore/.rgignore (the root's parents included) [true]. */
  respectIgnoreFiles?: boolean;
}

/** One line of a content-mode result. */
export interface SearchLine {
  /** 1-based line number. */
  line: number;
  /** The line without its terminator (`\n` or `\r\n`), decoded as UTF-8 with U+FFFD. */
  text: string;
  /** False for context lines. */
  match: boolean;
}

/** What an engine reports for one file with matches, files in walk (byte) order. */
export interface SearchFileResult {
  /** Absolute path. */
  path: string;
  /** Number of matching lines (count and content modes; at least 1 otherwise). */
  count: number;
  /** Matching and context lines, ascending (content mode only). */
  lines: SearchLine[];
}

/** A search engine; stop iterating to stop the search. */
export interface SearchEngine {
  readonly name: 'ripgrep' | 'typescript' | (string & {});
  search(query: SearchQuery, signal: AbortSignal): AsyncIterable<SearchFileResult>;
}

/**
 * Finds `rg` on PATH where no command can have put one of its own; undefined when absent. The
 * search tool runs it outside any sandbox, so a PATH entry inside `untrustedRoots` (the workspace:
 * an activated `.venv/bin`, direnv's `PATH_add bin`, the `node_modules/.bin` that `npx`/`pnpm
 * exec` put first) is skipped, as are relative entries, `node_modules` folders and folders others
 * may write — a sandboxed command wrote `<workspace>/.venv/bin/rg` and the next search ran it
 * unsandboxed.
 */
export function findRipgrep(
  envPath = process.env.PATH ?? '',
  untrustedRoots: readonly string[] = [],
): string | undefined {
  const found = trustedProgram('rg', { searchPath: envPath, untrustedRoots });
  return 'path' in found ? found.path : undefined;
}

/** Options of {@link createRipgrepEngine}. */
export interface RipgrepEngineOptions {
  /** Path of the `rg` binary. */
  rgPath: string;
  /** `child_process.spawn` [Node's]. */
  spawn?: typeof nodeSpawn;
}

/** The ripgrep arguments for a query; the pattern goes after `-e` and the path after `--`, so neither can pass for an option. */
export function ripgrepArguments(query: SearchQuery, target: string): string[] {
  const args = [
    '--no-config',
    '--hidden',
    '--no-require-git',
    '--no-ignore-global',
    '--no-ignore-exclude',
    '--no-messages',
    // Content is streamed in path order (a cap can stop it early); file lists are small, so rg
    // runs on all cores unsorted and the list is sorted here (--sort=path makes rg single-threaded).
    ...(query.mode === 'content' ? ['--sort=path'] : []),
    query.caseSensitive ? '--case-sensitive' : '--ignore-case',
  ];
  if (query.respectIgnoreFiles === false) args.push('--no-ignore');
  if (query.mode === 'content') {
    args.push('--json');
    if (query.context > 0) args.push(`--context=${query.context}`);
  } else if (query.mode === 'files_with_matches') {
    args.push('--files-with-matches', '--null');
  } else {
    args.push('--count', '--null');
  }
  // Not `--glob`: ripgrep lets a matching glob override ignore files. A file type filters
  // without that; includes with a `/` are filtered by the caller instead.
  if (query.include !== undefined && !query.include.includes('/')) {
    args.push(`--type-add=agentinclude:${query.include}`, '--type=agentinclude');
  }
  for (const name of query.skip) args.push(`--glob=!${name}`);
  args.push(`--regexp=${query.pattern}`, '--', target);
  return args;
}

interface RipgrepJsonText {
  text?: string;
  bytes?: string;
}

function jsonText(value: RipgrepJsonText | undefined): string {
  if (value === undefined) return '';
  if (value.text !== undefined) return value.text;
  return value.bytes === undefined ? '' : decode(Buffer.from(value.bytes, 'base64'));
}

function stripTerminator(text: string): string {
  if (text.endsWith('\r\n')) return text.slice(0, -2);
  if (text.endsWith('\n')) return text.slice(0, -1);
  return text;
}

/**
 * The lines of a stream split at `\n` only. Not node:readline, which also ends a line at a lone
 * `\r` and at U+2028/U+2029: JSON leaves those unescaped in strings, so a matched line of a
 * minified bundle holding one cut ripgrep's JSON message in two and failed the whole search.
 */
async function* newlineSeparated(stream: Readable): AsyncGenerator<string> {
  stream.setEncoding('utf8');
  let pending = '';
  for await (const chunk of stream as AsyncIterable<string>) {
    // Only the new chunk is searched: a line of megabytes arrives in many chunks.
    let end = chunk.indexOf('\n');
    if (end === -1) {
      pending += chunk;
      continue;
    }
    yield pending + chunk.slice(0, end);
    let start = end + 1;
    for (end = chunk.indexOf('\n', start); end !== -1; end = chunk.indexOf('\n', start)) {
      yield chunk.slice(start, end);
      start = end + 1;
    }
    pending = chunk.slice(start);
  }
  if (pending !== '') yield pending;
}

/** Runs `rg` (sorted by path, so output order is stable) and parses its output as it streams. */
export function createRipgrepEngine(options: RipgrepEngineOptions): SearchEngine {
  const spawnProcess = options.spawn ?? spawn;
  return {
    name: 'ripgrep',
    async *search(query, signal) {
      const isDirectory = fs.statSync(query.root).isDirectory();
      const cwd = isDirectory ? query.root : path.dirname(query.root);
      const target = isDirectory ? '.' : `./${path.basename(query.root)}`;
      const child = spawnProcess(options.rgPath, ripgrepArguments(query, target), {
        cwd,
        // None of the user's keys: rg's environ is readable by any process of the user for as
        // long as a search runs (an MCP or language server polling /proc).
        env: credentialFreeEnvironment(process.env),
        stdio: ['ignore', 'pipe', 'pipe'],
        signal,
      });
      let stderr = '';
      child.stderr?.setEncoding('utf8');
      child.stderr?.on('data', (chunk: string) => {
        if (stderr.length < 4000) stderr += chunk;
      });
      // How rg ended: its exit code, the signal that ended it, or why it could not start.
      const exited = new Promise<{ code: number | null; ended?: string }>((resolve) => {
        child.once('close', (code, ended) =>
          resolve(ended === null ? { code } : { code, ended: `ended by ${ended}` }),
        );
        child.once('error', (error) => resolve({ code: null, ended: `failed: ${error.message}` }));
      });
      const absolute = (shown: string) => path.join(cwd, shown.replace(/^\.\//, ''));
      const include = includeMatcher(query.include);
      const wanted = (file: string) =>
        include === undefined ||
        !isDirectory ||
        include(path.relative(query.root, file).split(path.sep).join('/'));
      try {
        const stdout = child.stdout;
        if (stdout === null) return;
        if (query.mode === 'content') {
          const lines = newlineSeparated(stdout);
          let current: SearchFileResult | undefined;
          for await (const line of lines) {
            if (line === '') continue;
            const message = JSON.parse(line) as {
              type: string;
              data: {
                path?: RipgrepJsonText;
                lines?: RipgrepJsonText;
                line_number?: number;
              };
            };
            if (message.type === 'begin') {
              current = { path: absolute(jsonText(message.data.path)), count: 0, lines: [] };
            } else if ((message.type === 'match' || message.type === 'context') && current) {
              // A multi-line `lines` cannot happen without --multiline; split defensively.
              const text = stripTerminator(jsonText(message.data.lines));
              const isMatch = message.type === 'match';
              text.split('\n').forEach((part, index) => {
                current?.lines.push({
                  line: (message.data.line_number ?? 0) + index,
                  text: part.endsWith('\r') ? part.slice(0, -1) : part,
                  match: isMatch,
                });
              });
              if (isMatch) current.count++;
            } else if (message.type === 'end' && current) {
              if (current.count > 0 && wanted(current.path)) yield current;
              current = undefined;
            }
          }
        } else {
          // `path\0` (files) or `path\0count\n` (count): NUL keeps odd file names unambiguous.
          // Collected, then yielded in the order --sort=path would have given.
          const found: SearchFileResult[] = [];
          let pending = '';
          stdout.setEncoding('utf8');
          for await (const chunk of stdout as AsyncIterable<string>) {
            pending += chunk;
            for (;;) {
              if (query.mode === 'files_with_matches') {
                const end = pending.indexOf('\0');
                if (end === -1) break;
                const file = absolute(pending.slice(0, end));
                pending = pending.slice(end + 1);
                if (wanted(file)) found.push({ path: file, count: 1, lines: [] });
              } else {
                const nul = pending.indexOf('\0');
                const newline = nul === -1 ? -1 : pending.indexOf('\n', nul);
                if (newline === -1) break;
                const file = absolute(pending.slice(0, nul));
                const count = Number(pending.slice(nul + 1, newline));
                pending = pending.slice(newline + 1);
                if (wanted(file)) found.push({ path: file, count, lines: [] });
              }
            }
          }
          found.sort((a, b) => comparePaths(a.path, b.path));
          yield* found;
        }
        const { code, ended } = await exited;
        // Killed (the OOM killer, a limit, someone's kill) or never started: what it printed is
        // not all there is, and "No matches found." would be a lie the model acts on.
        if (ended !== undefined && !signal.aborted)
          throw new ToolError(`Search failed: ripgrep ${ended}; its results are incomplete.`);
        // Exit code 2 also means "some file or directory could not be read" (EACCES, a vanished
        // file…): with --no-messages those print nothing and, like the TypeScript engine, are
        // skipped. What still prints (a bad pattern, a bad option) fails the search.
        const problems = stderr
          .split('\n')
          .filter((line) => line.trim() !== '' && !/\(os error \d+\)\s*$/.test(line));
        if (code === 2 && !signal.aborted && problems.length > 0) {
          throw new ToolError(`Search failed: ${stderr.trim()}`, {
            kind: 'invalid-args',
          });
        }
      } finally {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      }
    },
  };
}

/**
 * ripgrep's `--sort=path` order: component by component, each compared by its bytes (so `a/b`
 * comes before `a-c`, as a directory walk in name order gives).
 */
export function comparePaths(a: string, b: string): number {
  const left = a.split(path.sep);
  const right = b.split(path.sep);
  const length = Math.min(left.length, right.length);
  for (let index = 0; index < length; index++) {
    const x = left[index] as string;
    const y = right[index] as string;
    if (x === y) continue;
    return compareNamesFast(x, y);
  }
  return left.length - right.length;
}

/**
 * Compiles a search pattern for the TypeScript engine, on RE2's linear-time engine (see
 * {@link ScanPatterns}); a bad pattern, or one RE2 cannot run, is an `invalid-args` ToolError.
 */
export function compilePattern(pattern: string, caseSensitive: boolean): ScanPatterns {
  try {
    return compileScanPatterns(pattern, caseSensitive, literalBytes(pattern, caseSensitive));
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new ToolError(
      `Invalid regular expression ${JSON.stringify(pattern)}: ${reason}${
        /\(\?<?[=!]|\\[1-9]/.test(pattern)
          ? " (the syntax is ripgrep's: no lookaround or back-references)"
          : ''
      }`,
      { kind: 'invalid-args' },
    );
  }
}

/** Options of {@link createTypeScriptEngine}. */
export interface TypeScriptEngineOptions {
  fs: FileSystemOperations;
  /** Files read ahead in parallel in this thread while results stream in order [8]. */
  concurrency?: number;
  /**
   * Worker threads that search the files past the first `workerThreshold` ones, with synchronous
   * reads; 0 searches in this thread only. Used with Node's own file system only (`fs` is
   * {@link nodeFileSystem}). One worker walks the tree and searches what it finds; more search
   * batches of the walk alongside, ~10 MB each [2 with more than 2 cores, else 1].
   */
  workers?: number;
  /**
   * Files searched in this thread before workers are started (it goes on until they are up); a
   * worker's start costs about what searching a thousand files here does [2000].
   */
  workerThreshold?: number;
  /**
   * The worker module (`search-worker.js`); without one, or when it cannot be loaded, the search
   * stays in this thread [the one next to this module, when present].
   */
  workerUrl?: URL;
}

/**
 * A Node-only engine with ripgrep's defaults: ignore files, hidden files, binary files skipped,
 * symlinks not followed. Small searches run in this thread; past `workerThreshold` files, batches
 * of the walk go to worker threads (results still come in walk order).
 */
export function createTypeScriptEngine(options: TypeScriptEngineOptions): SearchEngine {
  const fsOps = options.fs;
  const concurrency = Math.max(1, options.concurrency ?? 8);
  const workerCount =
    fsOps === nodeFileSystem
      ? Math.max(0, options.workers ?? (os.availableParallelism() > 2 ? 2 : 1))
      : 0;
  const workerThreshold = Math.max(0, options.workerThreshold ?? 2000);
  const workerUrl = workerCount > 0 ? (options.workerUrl ?? defaultSearchWorkerUrl()) : undefined;
  return {
    name: 'typescript',
    async *search(query, signal) {
      const patterns = compilePattern(query.pattern, query.caseSensitive);
      const scanQuery: ScanQuery = { mode: query.mode, context: query.context };
      // One read buffer per file in flight, reused from file to file (allocating 1 MiB per file
      // cost more than the search).
      const buffers: Buffer[] = [];
      const include = includeMatcher(query.include);
      const rootInfo = await fsOps.stat(query.root);
      async function* files(): AsyncGenerator<string> {
        if (!rootInfo.isDirectory()) {
          yield query.root;
          return;
        }
        for await (const entry of walk({
          root: query.root,
          fs: fsOps,
          skip: query.skip,
          respectIgnoreFiles: query.respectIgnoreFiles ?? true,
          signal,
        })) {
          if (entry.isDirectory || entry.isSymbolicLink) continue;
          if (include !== undefined && !include(entry.relative)) continue;
          yield entry.path;
        }
      }
      const inThread = (file: string): Promise<SearchFileResult[]> =>
        searchFile(fsOps, file, patterns, scanQuery, signal, buffers).then(
          (result) => (result === undefined ? [] : [result]),
          () => [],
        );
      // A batch a worker could not search (it failed) is searched here.
      const batchInThread = async (batch: string[]): Promise<SearchFileResult[]> => {
        const found: SearchFileResult[] = [];
        for (let at = 0; at < batch.length && !signal.aborted; at += concurrency)
          for (const results of await Promise.all(batch.slice(at, at + concurrency).map(inThread)))
            found.push(...results);
        return found;
      };
      // Files searched here, read ahead `concurrency` at a time; results yielded in walk order.
      const queue: Promise<SearchFileResult[]>[] = [];
      let source = files();
      let exhausted = false;
      let taken = 0;
      /** The last file taken from the walk. */
      let last: string | undefined;
      /** Files up to this one were searched already (by workers that failed). */
      let resumeAfter: string | undefined;
      let pool: SearchPool | undefined;
      let poolReady = false;
      const canUseWorkers = workerUrl !== undefined && rootInfo.isDirectory();
      const startPool = (url: URL) => {
        const started = new SearchPool(url, workerCount, {
          pattern: query.pattern,
          caseSensitive: query.caseSensitive,
          literal: patterns.literal,
          query: scanQuery,
        });
        pool = started;
        void started.ready.then((ready) => {
          poolReady = ready;
        });
      };
      const fill = async () => {
        // Files are searched here until the workers are up (then they walk on from `last`).
        while (!exhausted && queue.length < concurrency && !poolReady) {
          const step = await source.next();
          if (step.done === true) {
            exhausted = true;
            break;
          }
          const file = step.value;
          if (resumeAfter !== undefined && comparePaths(file, resumeAfter) <= 0) continue;
          taken++;
          last = file;
          queue.push(inThread(file));
          if (taken === workerThreshold && canUseWorkers && pool === undefined)
            startPool(workerUrl);
        }
      };
      // Closed, not only told to stop: a batch in a worker's hands would hold the abort up.
      const onAbort = () => void pool?.close();
      signal.addEventListener('abort', onAbort, { once: true });
      try {
        if (workerThreshold === 0 && canUseWorkers) {
          startPool(workerUrl);
          await (pool as SearchPool | undefined)?.ready;
        }
        for (;;) {
          await fill();
          while (queue.length > 0) {
            if (signal.aborted) return;
            const results = (await queue.shift()) as SearchFileResult[];
            await fill();
            if (signal.aborted) return;
            yield* results;
          }
          const workers = pool as SearchPool | undefined;
          if (exhausted || workers === undefined || !poolReady) break;
          // The workers walk on after the last file taken here.
          await source.return(undefined);
          for await (const results of workers.search(
            {
              root: query.root,
              skip: query.skip,
              respectIgnoreFiles: query.respectIgnoreFiles ?? true,
              include: query.include,
              after: last,
            },
            batchInThread,
          )) {
            if (signal.aborted) return;
            yield* results;
          }
          if (signal.aborted || !workers.walkFailed) break;
          // The walker failed: walk on here from where it got.
          resumeAfter = workers.lastWalked ?? last;
          pool = undefined;
          poolReady = false;
          await workers.close();
          source = files();
          exhausted = false;
        }
      } finally {
        signal.removeEventListener('abort', onAbort);
        await Promise.all([source.return(undefined), (pool as SearchPool | undefined)?.close()]);
      }
    },
  };
}

const regexSyntax = /[\\^$.*+?()[\]{}|/\r\n\uFFFD]/;

/**
 * The UTF-8 bytes of a case-sensitive pattern without regex syntax: a block of the file that does
 * not contain them has no match, found without decoding it. (U+FFFD is left out: invalid bytes
 * decode to it.)
 */
export function literalBytes(pattern: string, caseSensitive: boolean): Buffer | undefined {
  if (!caseSensitive || pattern.length === 0 || regexSyntax.test(pattern)) return undefined;
  return Buffer.from(pattern, 'utf8');
}

async function searchFile(
  fsOps: FileSystemOperations,
  file: string,
  patterns: ScanPatterns,
  query: ScanQuery,
  signal: AbortSignal,
  buffers: Buffer[],
): Promise<SearchFileResult | undefined> {
  const handle = await fsOps.open(file, 'r');
  const buffer = buffers.pop() ?? Buffer.allocUnsafe(readChunkBytes);
  try {
    const scan = scanFile(file, buffer, patterns, query);
    let step = scan.next(0);
    while (step.done !== true) {
      if (signal.aborted) return undefined;
      const { offset, length, position } = step.value;
      const { bytesRead } = await handle.read(buffer, offset, length, position);
      step = scan.next(bytesRead);
    }
    return step.value;
  } finally {
    buffers.push(buffer);
    await handle.close();
  }
}
