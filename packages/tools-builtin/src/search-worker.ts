/**
 * The TypeScript search engine's per-file matching, and the worker thread that runs it over
 * batches of files with synchronous reads, and walks the tree for them (see `search-pool.ts`). This
 * module imports no other module of this package, so a worker can load it as it is (from dist, or
 * from source with Node's type stripping).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { readRegularFileSync } from '@agent/core/regular-file';
import ignore, { type Ignore } from 'ignore';
import picomatch from 'picomatch';
import { RE2JS } from 're2js';
import type { SearchFileResult, SearchLine, SearchOutputMode } from './search-engines.js';
import { maxIgnoreFileBytes } from './walk.js';

/**
 * The compiled pattern of a search, on RE2's engine (`re2js`): time linear in the text, whatever
 * the pattern. The pattern comes from the model and the files from any repository; on JavaScript's
 * backtracking engine `\d+\.?\d+x` over a line of 30,000 digits runs for minutes, and a minified
 * line of a megabyte for hours, on the thread that must notice an abort or a timeout.
 */
export interface ScanPatterns {
  /** Tested on each line. */
  line: RE2JS;
  /**
   * The pattern in multi-line mode, tested on a block of lines before splitting it (every line
   * with a match is then in a block with one); undefined when that does not hold (`\A`, `\z`,
   * a flag turned off inside the pattern), and each line is tested.
   */
  block: RE2JS | undefined;
  /** The pattern's UTF-8 bytes when it is a case-sensitive literal (see `literalBytes`). */
  literal: Buffer | undefined;
}

// Text anchors, or flags turned off inside the pattern (`(?-m)`), can match a line alone but not
// the same line inside a block. (A false alarm, e.g. `\\A`, only costs the block test.)
const blockUnsafe = /\\[Az]|\(\?[a-zA-Z]*-/;

/**
 * Compiles a search pattern (RE2 syntax, as ripgrep's default engine reads it: no lookaround, no
 * back-references). Throws an `Error` saying what is wrong with it.
 */
export function compileScanPatterns(
  pattern: string,
  caseSensitive: boolean,
  literal: Uint8Array | undefined,
): ScanPatterns {
  const flags = caseSensitive ? 0 : RE2JS.CASE_INSENSITIVE;
  return {
    line: RE2JS.compile(pattern, flags),
    block: blockUnsafe.test(pattern) ? undefined : RE2JS.compile(pattern, flags | RE2JS.MULTILINE),
    literal: literal === undefined ? undefined : Buffer.from(literal),
  };
}

/** What a scan needs of the query. */
export interface ScanQuery {
  mode: SearchOutputMode;
  context: number;
}

/** A read the scan asks for: into its buffer at `offset`, at most `length` bytes, from file `position`. */
export interface ScanRead {
  offset: number;
  length: number;
  position: number;
}

/** Bytes of the read buffer (one per file in flight, reused). */
export const readChunkBytes = 1024 * 1024;
const binaryProbeBytes = 64 * 1024;

function decode(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
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

/**
 * Searches one file, whatever reads it: yields each read it needs into `buffer` and is resumed
 * with the bytes read (0 at the end), so the same matching runs with promise-based reads in this
 * thread and with synchronous reads in a worker. Returns the result, or undefined without matches
 * (and for binary files).
 */
export function* scanFile(
  file: string,
  buffer: Buffer,
  patterns: ScanPatterns,
  query: ScanQuery,
): Generator<ScanRead, SearchFileResult | undefined, number> {
  const { line: lineRegex, block: blockRegex, literal } = patterns;
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
    const isMatch = lineRegex.test(raw);
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
    const bytesRead = yield { offset: filled, length: buffer.length - filled, position };
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
      const quiet = afterLeft === 0 && blockRegex !== undefined && !blockRegex.test(text);
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
}

/** The `include` glob as ripgrep reads it: without a `/` it matches the file name at any depth. */
export function includeMatcher(
  include: string | undefined,
): ((relative: string) => boolean) | undefined {
  if (include === undefined) return undefined;
  return globMatcher(include, { basename: !include.includes('/') });
}

// What picomatch's expression checks with lookaround, which RE2 cannot run: that no segment is
// `.` or `..` and that a segment is not empty. Walked relative paths hold neither.
const segmentGuards = ['(?!(?:^|\\/)\\.{1,2}(?:\\/|$))', '(?!\\.{1,2}(?:\\/|$))', '(?=.)'];

/**
 * A glob's matcher (picomatch's syntax, dotfiles included) run on RE2 (`re2js`): time linear in
 * the path. The glob comes from the model; on JavaScript's engine `*a*a*a*a*a*a*a*a*b` took 86 s
 * against one 60-character file name. With `basename`, the path's last segment is matched. A
 * leading `!` negates. Throws an `Error` for a glob RE2 cannot run (the `!(…)` extglob).
 */
export function globMatcher(
  glob: string,
  options: { basename?: boolean } = {},
): (path: string) => boolean {
  let body = glob;
  let negated = false;
  while (body.startsWith('!') && !body.startsWith('!(')) {
    negated = !negated;
    body = body.slice(1);
  }
  let source = picomatch.makeRe(body, { dot: true }).source;
  for (const guard of segmentGuards) source = source.split(guard).join('');
  let compiled: RE2JS;
  try {
    // DOTALL: a name may hold a newline, and `**` (picomatch writes it with `.`) must cross it.
    compiled = RE2JS.compile(source, RE2JS.DOTALL);
  } catch {
    throw new Error(`the glob ${JSON.stringify(glob)} is not supported (no !(…) patterns)`);
  }
  const last = (path: string) => path.slice(path.lastIndexOf('/') + 1);
  return options.basename === true
    ? (path) => compiled.test(last(path)) !== negated
    : (path) => compiled.test(path) !== negated;
}

/**
 * Byte-wise order of two names' UTF-8 (ripgrep's `--sort=path`), without encoding them: UTF-16
 * code units compare as code points do, except surrogates, which stand for code points above
 * all the others.
 */
export function compareNamesFast(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let index = 0; index < length; index++) {
    let x = a.charCodeAt(index);
    let y = b.charCodeAt(index);
    if (x === y) continue;
    if (x >= 0xd800 && x <= 0xdfff) x += 0x10000;
    if (y >= 0xd800 && y <= 0xdfff) y += 0x10000;
    return x - y;
  }
  return a.length - b.length;
}

/** Ignore files honoured, lowest precedence first (the ripgrep set, as `walk.ts`). */
const ignoreFileNames = ['.gitignore', '.ignore', '.rgignore'] as const;

interface IgnoreContext {
  /** Length of the rules' directory with its trailing separator (its paths are relative to it). */
  prefix: number;
  rules: Ignore;
}

function loadIgnoreContexts(directory: string): IgnoreContext[] {
  const contexts: IgnoreContext[] = [];
  const prefix = directory.endsWith(path.sep) ? directory.length : directory.length + 1;
  for (const name of ignoreFileNames) {
    // The repository's file: a FIFO in its place blocked this worker for ever (see walk.ts).
    const outcome = readRegularFileSync(path.join(directory, name), {
      maxBytes: maxIgnoreFileBytes,
    });
    if (outcome.kind !== 'read') continue;
    const text = outcome.bytes.toString('utf8');
    contexts.push({ prefix, rules: ignore({ allowRelativePaths: true }).add(text) });
  }
  return contexts;
}

function isIgnored(
  contexts: readonly IgnoreContext[],
  absolute: string,
  isDirectory: boolean,
): boolean {
  let ignored = false;
  for (const context of contexts) {
    // Every context's directory is one of the path's parents.
    let relative = absolute.slice(context.prefix);
    if (path.sep !== '/') relative = relative.split(path.sep).join('/');
    const result = context.rules.test(isDirectory ? `${relative}/` : relative);
    if (result.ignored) ignored = true;
    else if (result.unignored) ignored = false;
  }
  return ignored;
}

/** A walk for files to search, as the engine's own walk (`walk.ts`) would list them. */
export interface SearchWalkRequest {
  /** Real path of the directory. */
  root: string;
  skip: readonly string[];
  respectIgnoreFiles: boolean;
  include: string | undefined;
  /** Start after this file (already searched): files up to it in walk order are left out. */
  after: string | undefined;
}

/**
 * `walk.ts`'s walk, synchronous and lighter (for a worker): files only (no directories or
 * symlinks), in the same order, with the same ignore files, skipped names and `include` glob.
 * `onFile` returns false to stop.
 */
export function walkFilesSync(request: SearchWalkRequest, onFile: (file: string) => boolean): void {
  const { root } = request;
  const skip = new Set(request.skip);
  const respect = request.respectIgnoreFiles;
  const include = includeMatcher(request.include);
  const rootPrefix = root.endsWith(path.sep) ? root.length : root.length + 1;
  // The path of `after` below the root, by component: directories before it are not read.
  const after =
    request.after === undefined ? undefined : path.relative(root, request.after).split(path.sep);
  let inherited: IgnoreContext[] = [];
  if (respect && root !== path.dirname(root)) {
    const parents: string[] = [];
    for (let dir = path.dirname(root); ; dir = path.dirname(dir)) {
      parents.unshift(dir);
      if (path.dirname(dir) === dir) break;
    }
    for (const parent of parents) inherited = inherited.concat(loadIgnoreContexts(parent));
  }
  let stopped = false;
  // `resuming`: this directory is on the way to `after` (at `depth` components below the root).
  const visit = (
    directory: string,
    depth: number,
    contexts: IgnoreContext[],
    resuming: boolean,
  ) => {
    const own = respect ? contexts.concat(loadIgnoreContexts(directory)) : contexts;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(directory, { withFileTypes: true });
    } catch {
      return;
    }
    entries.sort((a, b) => compareNamesFast(a.name, b.name));
    const mark = resuming && after !== undefined ? after[depth] : undefined;
    const last = after !== undefined && depth === after.length - 1;
    for (const entry of entries) {
      if (stopped) return;
      const name = entry.name;
      let onTheWay = false;
      if (mark !== undefined) {
        const order = compareNamesFast(name, mark);
        if (order < 0 || (order === 0 && last)) continue;
        onTheWay = order === 0;
      }
      if (skip.has(name)) continue;
      const isDirectory = entry.isDirectory();
      if (!isDirectory && !entry.isFile()) continue; // symlinks, sockets, devices…
      const absolute = directory.endsWith(path.sep)
        ? directory + name
        : directory + path.sep + name;
      if (respect && isIgnored(own, absolute, isDirectory)) continue;
      if (isDirectory) {
        visit(absolute, depth + 1, own, onTheWay);
        continue;
      }
      if (include !== undefined) {
        let relative = absolute.slice(rootPrefix);
        if (path.sep !== '/') relative = relative.split(path.sep).join('/');
        if (!include(relative)) continue;
      }
      if (!onFile(absolute)) {
        stopped = true;
        return;
      }
    }
  };
  visit(root, 0, inherited, after !== undefined);
}

/** Marks the worker data of a search worker (so loading this module elsewhere does nothing). */
export const searchWorkerMarker = '@agent/tools-builtin search worker';

/** What a search worker is started with. */
export interface SearchWorkerData {
  marker: typeof searchWorkerMarker;
  /** The search's pattern (see {@link compileScanPatterns}). */
  pattern: string;
  caseSensitive: boolean;
  /** The literal's bytes, when there is one. */
  literal: Uint8Array | undefined;
  query: ScanQuery;
  /** Int32s shared with the engine, see {@link SearchControl}. */
  control: SharedArrayBuffer;
}

/** Indexes into the shared Int32Array of a search. */
export const SearchControl = {
  /** Set to 1 to stop (checked between files, reads and directories). */
  stop: 0,
  /** Batches of files the engine has taken from the walker; the walker waits when far ahead. */
  consumed: 1,
} as const;

/** Messages to a worker. */
export type SearchWorkerRequest =
  /** Search a batch of files, in order. */
  | { type: 'search'; id: number; files: string[] }
  /**
   * Walk, posting batches of `batchFiles` files, at most `ahead` batches past those consumed;
   * with `search`, each batch is searched here and posted with what was found.
   */
  | ({ type: 'walk'; batchFiles: number; ahead: number; search: boolean } & SearchWalkRequest);

/** Messages from a worker. */
export type SearchWorkerReply =
  | { type: 'ready' }
  /** The files of a batch with matches, ascending. */
  | { type: 'found'; id: number; found: SearchFileResult[] }
  /** The next files of the walk (and those with matches, when the walker searched them). */
  | { type: 'files'; files: string[]; found?: SearchFileResult[] }
  | { type: 'walked' };

// O_NOFOLLOW: a walked file swapped for a symlink since is not followed (0 where unsupported);
// O_NONBLOCK: nor does one swapped for a FIFO block the worker in open (it is then not searched).
const openFlags =
  fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0) | (fs.constants.O_NONBLOCK ?? 0);

/** Searches a file with synchronous reads; undefined without matches or when it cannot be read. */
export function scanFileSync(
  file: string,
  buffer: Buffer,
  patterns: ScanPatterns,
  query: ScanQuery,
  stopped: () => boolean,
): SearchFileResult | undefined {
  let fd: number;
  try {
    fd = fs.openSync(file, openFlags);
  } catch {
    return undefined;
  }
  try {
    if (!fs.fstatSync(fd).isFile()) return undefined;
    const scan = scanFile(file, buffer, patterns, query);
    let step = scan.next(0);
    while (step.done !== true) {
      if (stopped()) return undefined;
      const { offset, length, position } = step.value;
      step = scan.next(fs.readSync(fd, buffer, offset, length, position));
    }
    return step.value;
  } catch {
    return undefined;
  } finally {
    fs.closeSync(fd);
  }
}

function runWorker(data: SearchWorkerData): void {
  const port = parentPort;
  if (port === null) return;
  // Compiled by the engine first: a pattern that reaches a worker compiles.
  const patterns = compileScanPatterns(data.pattern, data.caseSensitive, data.literal);
  const control = new Int32Array(data.control);
  const stopped = () => Atomics.load(control, SearchControl.stop) !== 0;
  const buffer = Buffer.allocUnsafe(readChunkBytes);
  const post = (reply: SearchWorkerReply) => port.postMessage(reply);
  const searchFiles = (files: string[]) => {
    const found: SearchFileResult[] = [];
    for (const file of files) {
      if (stopped()) break;
      const result = scanFileSync(file, buffer, patterns, data.query, stopped);
      if (result !== undefined) found.push(result);
    }
    return found;
  };
  const postFiles = (files: string[], search: boolean) =>
    post(search ? { type: 'files', files, found: searchFiles(files) } : { type: 'files', files });
  const walkFiles = (request: SearchWorkerRequest & { type: 'walk' }) => {
    let batch: string[] = [];
    let posted = 0;
    const flush = () => {
      postFiles(batch, request.search);
      batch = [];
      posted++;
      // Far enough ahead of what the engine has taken: wait for it (or for a stop).
      for (;;) {
        if (stopped()) return false;
        const consumed = Atomics.load(control, SearchControl.consumed);
        if (posted - consumed < request.ahead) return true;
        Atomics.wait(control, SearchControl.consumed, consumed, 100);
      }
    };
    walkFilesSync(request, (file) => {
      if (stopped()) return false;
      batch.push(file);
      return batch.length < request.batchFiles || flush();
    });
    if (batch.length > 0 && !stopped()) postFiles(batch, request.search);
    post({ type: 'walked' });
  };
  port.on('message', (request: SearchWorkerRequest) => {
    if (request.type === 'walk') {
      walkFiles(request);
      return;
    }
    post({ type: 'found', id: request.id, found: searchFiles(request.files) });
  });
  post({ type: 'ready' });
}

if (!isMainThread && (workerData as SearchWorkerData | undefined)?.marker === searchWorkerMarker)
  runWorker(workerData as SearchWorkerData);
