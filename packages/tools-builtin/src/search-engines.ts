import type { spawn as nodeSpawn } from 'node:child_process';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import { ToolError } from '@agent/core';
import picomatch from 'picomatch';
import { decode } from './output-buffer.js';
import { walk } from './walk.js';
import type { FileSystemOperations } from './workspace.js';

/** What search shows per file. */
export type SearchOutputMode = 'content' | 'files_with_matches' | 'count';

/** A search, as both engines receive it. */
export interface SearchQuery {
  /** Real path of the directory or file to search. */
  root: string;
  /** Regular expression (ripgrep syntax; the TypeScript engine uses JavaScript's). */
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

/** Finds `rg` on PATH; undefined when absent. */
export function findRipgrep(envPath = process.env.PATH ?? ''): string | undefined {
  for (const directory of envPath.split(path.delimiter)) {
    if (directory === '') continue;
    const candidate = path.join(directory, 'rg');
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      if (fs.statSync(candidate).isFile()) return candidate;
    } catch {
      // Not here.
    }
  }
  return undefined;
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
        stdio: ['ignore', 'pipe', 'pipe'],
        signal,
      });
      let stderr = '';
      child.stderr?.setEncoding('utf8');
      child.stderr?.on('data', (chunk: string) => {
        if (stderr.length < 4000) stderr += chunk;
      });
      const exited = new Promise<number | null>((resolve) => {
        child.once('close', (code) => resolve(code));
        child.once('error', () => resolve(null));
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
          const lines = createInterface({ input: stdout, crlfDelay: Number.POSITIVE_INFINITY });
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
        const code = await exited;
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
    return Buffer.compare(Buffer.from(x), Buffer.from(y));
  }
  return left.length - right.length;
}

/** The `include` glob as ripgrep reads it: without a `/` it matches the file name at any depth. */
function includeMatcher(include: string | undefined): ((relative: string) => boolean) | undefined {
  if (include === undefined) return undefined;
  return picomatch(include, { dot: true, basename: !include.includes('/') });
}

/** Compiles a search pattern for the TypeScript engine; a bad pattern is an `invalid-args` ToolError. */
export function compilePattern(pattern: string, caseSensitive: boolean): RegExp {
  const flags = caseSensitive ? '' : 'i';
  try {
    return new RegExp(pattern, `${flags}u`);
  } catch {
    try {
      return new RegExp(pattern, flags);
    } catch (error) {
      throw new ToolError(
        `Invalid regular expression ${JSON.stringify(pattern)}: ${String(error)}`,
        {
          kind: 'invalid-args',
        },
      );
    }
  }
}

/** Options of {@link createTypeScriptEngine}. */
export interface TypeScriptEngineOptions {
  fs: FileSystemOperations;
  /** Files read ahead in parallel while results stream in order [8]. */
  concurrency?: number;
}

const readChunkBytes = 1024 * 1024;
const binaryProbeBytes = 64 * 1024;

/** A Node-only engine with ripgrep's defaults: ignore files, hidden files, binary files skipped, symlinks not followed. */
export function createTypeScriptEngine(options: TypeScriptEngineOptions): SearchEngine {
  const fsOps = options.fs;
  const concurrency = Math.max(1, options.concurrency ?? 8);
  return {
    name: 'typescript',
    async *search(query, signal) {
      const regex = compilePattern(query.pattern, query.caseSensitive);
      // For skipping whole blocks: with `m`, every line-level match is also a block-level match.
      const prefilter = new RegExp(regex.source, `${regex.flags}m`);
      const literal = literalBytes(query.pattern, query.caseSensitive);
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
      // Read ahead `concurrency` files; yield results in walk order.
      const queue: Promise<SearchFileResult | undefined>[] = [];
      const source = files();
      let exhausted = false;
      const fill = async () => {
        while (!exhausted && queue.length < concurrency) {
          const next = await source.next();
          if (next.done === true) {
            exhausted = true;
            break;
          }
          queue.push(
            searchFile(
              fsOps,
              next.value,
              { regex, prefilter, literal },
              query,
              signal,
              buffers,
            ).catch(() => undefined),
          );
        }
      };
      try {
        await fill();
        while (queue.length > 0) {
          if (signal.aborted) return;
          const result = await queue.shift();
          await fill();
          if (result !== undefined) yield result;
        }
      } finally {
        await source.return(undefined);
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
  patterns: { regex: RegExp; prefilter: RegExp; literal: Buffer | undefined },
  query: SearchQuery,
  signal: AbortSignal,
  buffers: Buffer[],
): Promise<SearchFileResult | undefined> {
  const { regex, prefilter, literal } = patterns;
  const handle = await fsOps.open(file, 'r');
  const buffer = buffers.pop() ?? Buffer.allocUnsafe(readChunkBytes);
  try {
    const result: SearchFileResult = { path: file, count: 0, lines: [] };
    const before: SearchLine[] = [];
    let afterLeft = 0;
    let lineNumber = 1;
    // The unfinished line: parts joined only once its newline (or the end) arrives, so a file
    // that is one huge line costs linear time, not a copy of everything so far per read.
    let carry: Buffer[] = [];
    let carryBytes = 0;
    let position = 0;
    let first = true;
    const onLine = (raw: string) => {
      const isMatch = regex.test(raw);
      const text = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
      if (isMatch) {
        result.count++;
        if (query.mode === 'content') {
          result.lines.push(...before.splice(0));
          result.lines.push({ line: lineNumber, text, match: true });
          afterLeft = query.context;
        }
      } else if (query.mode === 'content' && query.context > 0) {
        if (afterLeft > 0) {
          result.lines.push({ line: lineNumber, text, match: false });
          afterLeft--;
        } else {
          before.push({ line: lineNumber, text, match: false });
          if (before.length > query.context) before.shift();
        }
      }
      lineNumber++;
    };
    // The buffer holds [begin, filled): the start of an unfinished line (moved to the front after
    // each block) and what was just read after it; a file shorter than the buffer is read into it
    // without copying. Only a line longer than the buffer moves to `carry`.
    let begin = 0;
    let filled = 0;
    const literalFiles = query.mode === 'files_with_matches' ? literal : undefined;
    let pendingHit = false;
    for (;;) {
      if (signal.aborted) return undefined;
      const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, position);
      const end = bytesRead === 0;
      position += bytesRead;
      const fresh = buffer.subarray(filled, filled + bytesRead);
      if (first) {
        first = false;
        if (fresh.subarray(0, binaryProbeBytes).includes(0)) return undefined;
        if (fresh[0] === 0xef && fresh[1] === 0xbb && fresh[2] === 0xbf) begin = 3;
      } else if (fresh.includes(0)) {
        break; // Binary from here on: stop, keeping what was found (as ripgrep does).
      }
      const freshAt = filled;
      filled += bytesRead;
      if (literalFiles !== undefined) {
        // A literal in a file list: a line has a match exactly when its bytes contain the
        // literal's (it has no newline, and its bytes cannot straddle an invalid sequence), so
        // lines are neither decoded nor kept whole; a line longer than the buffer is looked
        // through as it comes, keeping only its last bytes for a match across two reads.
        const lastNewline = fresh.lastIndexOf(10);
        if (lastNewline !== -1 || end) {
          const cut = end ? filled : freshAt + lastNewline + 1;
          if (pendingHit || buffer.subarray(begin, cut).includes(literalFiles)) {
            result.count = 1;
            break;
          }
          if (end) break;
          buffer.copyWithin(0, cut, filled);
          filled -= cut;
          begin = 0;
          continue;
        }
        if (filled < buffer.length) continue;
        if (buffer.subarray(begin, filled).includes(literalFiles)) pendingHit = true;
        const kept = Math.min(literalFiles.length - 1, filled - begin);
        buffer.copyWithin(0, filled - kept, filled);
        filled = kept;
        begin = 0;
        continue;
      }
      const lastNewline = fresh.lastIndexOf(10);
      if (!end && lastNewline === -1) {
        if (filled < buffer.length) continue; // room left: read on into the same buffer
        carry.push(Buffer.from(buffer.subarray(begin, filled)));
        carryBytes += filled - begin;
        begin = 0;
        filled = 0;
        continue;
      }
      const cut = end ? filled : freshAt + lastNewline + 1;
      const complete =
        carryBytes > 0
          ? Buffer.concat([...carry, buffer.subarray(begin, cut)], carryBytes + cut - begin)
          : buffer.subarray(begin, cut);
      carry = [];
      carryBytes = 0;
      if (
        complete.length > 0 &&
        literal !== undefined &&
        afterLeft === 0 &&
        (query.mode !== 'content' || query.context === 0) &&
        !complete.includes(literal)
      ) {
        // No match in this block, seen in its bytes: only content mode needs its line count.
        if (query.mode === 'content') lineNumber += countLines(complete);
      } else if (complete.length > 0) {
        let text = decode(complete);
        if (text.endsWith('\n')) text = text.slice(0, -1);
        const quiet = afterLeft === 0 && !prefilter.test(text);
        if (quiet && (query.mode !== 'content' || query.context === 0)) {
          // No match in this block: count its lines without splitting them.
          lineNumber += countLines(complete);
        } else {
          for (const line of text.split('\n')) onLine(line);
        }
        if (query.mode === 'files_with_matches' && result.count > 0) break;
      }
      if (end) break;
      buffer.copyWithin(0, cut, filled);
      filled -= cut;
      begin = 0;
    }
    return result.count > 0 ? result : undefined;
  } finally {
    buffers.push(buffer);
    await handle.close();
  }
}

/** Lines in a block of whole lines (a trailing newline does not start another). */
function countLines(block: Buffer): number {
  let count = 1;
  for (
    let at = block.indexOf(10);
    at !== -1 && at < block.length - 1;
    at = block.indexOf(10, at + 1)
  )
    count++;
  return count;
}
