import type { Dirent } from 'node:fs';
import * as path from 'node:path';
import { readRegularFile } from '@agent/core/regular-file';
import ignore, { type Ignore } from 'ignore';
import type { FileSystemOperations } from './workspace.js';

/**
 * Largest ignore file read (bytes); a larger one is left out. An ignore file is the repository's:
 * a FIFO named `.gitignore` held every walk (list_files, glob, search) for ever, a link to
 * `/dev/zero` read until memory ran out.
 */
export const maxIgnoreFileBytes = 1024 * 1024;

/** Directories skipped by list_files, glob and search unless they are the path asked for. */
export const defaultSkippedDirectories: readonly string[] = [
  '.git',
  '.hg',
  '.svn',
  'node_modules',
  'bower_components',
  '__pycache__',
  '.venv',
  '.tox',
  '.mypy_cache',
  '.pytest_cache',
  '.next',
  '.turbo',
  '.gradle',
];

/** Ignore files honoured, lowest precedence first (the ripgrep set). */
const ignoreFileNames = ['.gitignore', '.ignore', '.rgignore'] as const;

/** One entry found by {@link walk}. */
export interface WalkEntry {
  /** Absolute path. */
  path: string;
  /** Path relative to the walk root, with `/` separators. */
  relative: string;
  isDirectory: boolean;
  /** A symlink (never followed; not a directory here even if it points to one). */
  isSymbolicLink: boolean;
  /** 1 for the root's children. */
  depth: number;
}

/** Options of {@link walk}. */
export interface WalkOptions {
  /** Real path of the directory to walk. */
  root: string;
  fs: FileSystemOperations;
  /** Entry names never entered or listed (below the root) [defaultSkippedDirectories]. */
  skip?: readonly string[];
  /** Honour .gitignore/.ignore/.rgignore in the root, its parents and below [true]. */
  respectIgnoreFiles?: boolean;
  /** Deepest level to list (1 = the root's children) [unlimited]. */
  maxDepth?: number;
  /** Entries left out: neither yielded nor, for a directory, entered [none]. */
  exclude?: (entry: WalkEntry) => boolean;
  signal?: AbortSignal;
}

interface IgnoreContext {
  /** Directory the rules are relative to. */
  base: string;
  rules: Ignore;
}

async function loadIgnoreContexts(
  fsOps: FileSystemOperations,
  directory: string,
): Promise<IgnoreContext[]> {
  const contexts: IgnoreContext[] = [];
  for (const name of ignoreFileNames) {
    const outcome = await readRegularFile(path.join(directory, name), {
      maxBytes: maxIgnoreFileBytes,
      fileSystem: fsOps,
    });
    if (outcome.kind !== 'read') continue;
    const text = outcome.bytes.toString('utf8');
    contexts.push({ base: directory, rules: ignore({ allowRelativePaths: true }).add(text) });
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
    const relative = path.relative(context.base, absolute).split(path.sep).join('/');
    if (relative === '' || relative.startsWith('../')) continue;
    const result = context.rules.test(isDirectory ? `${relative}/` : relative);
    if (result.ignored) ignored = true;
    else if (result.unignored) ignored = false;
  }
  return ignored;
}

/** Byte-wise comparison of names, the order ripgrep's `--sort path` uses. */
export function compareNames(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

/**
 * Depth-first walk in byte order of names, each directory's entries sorted, a directory listed
 * before its contents. Honours ignore files (parents of the root included), skips heavy
 * directories, and does not follow symlinks to directories.
 */
export async function* walk(options: WalkOptions): AsyncGenerator<WalkEntry> {
  const fsOps = options.fs;
  const skip = new Set(options.skip ?? defaultSkippedDirectories);
  const respect = options.respectIgnoreFiles ?? true;
  const maxDepth = options.maxDepth ?? Number.POSITIVE_INFINITY;
  let inherited: IgnoreContext[] = [];
  if (respect) {
    const parents: string[] = [];
    for (let dir = path.dirname(options.root); ; dir = path.dirname(dir)) {
      parents.unshift(dir);
      if (path.dirname(dir) === dir) break;
    }
    if (options.root === path.dirname(options.root)) parents.length = 0;
    for (const parent of parents)
      inherited = inherited.concat(await loadIgnoreContexts(fsOps, parent));
  }

  async function* visit(
    directory: string,
    depth: number,
    contexts: IgnoreContext[],
  ): AsyncGenerator<WalkEntry> {
    if (options.signal?.aborted) return;
    const own = respect ? contexts.concat(await loadIgnoreContexts(fsOps, directory)) : contexts;
    let entries: Dirent[];
    try {
      entries = await fsOps.readdir(directory, { withFileTypes: true });
    } catch {
      return;
    }
    entries.sort((a, b) => compareNames(a.name, b.name));
    for (const entry of entries) {
      if (options.signal?.aborted) return;
      const name = entry.name;
      if (skip.has(name)) continue;
      const absolute = path.join(directory, name);
      const isDirectory = entry.isDirectory();
      const isSymbolicLink = entry.isSymbolicLink();
      if (!isDirectory && !isSymbolicLink && !entry.isFile()) continue;
      if (respect && isIgnored(own, absolute, isDirectory)) continue;
      const relative = path.relative(options.root, absolute).split(path.sep).join('/');
      const found: WalkEntry = { path: absolute, relative, isDirectory, isSymbolicLink, depth };
      if (options.exclude?.(found) === true) continue;
      yield found;
      if (isDirectory && depth < maxDepth) yield* visit(absolute, depth + 1, own);
    }
  }

  yield* visit(options.root, 1, inherited);
}
