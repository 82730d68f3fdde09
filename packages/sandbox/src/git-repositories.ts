import * as fs from 'node:fs';
import * as path from 'node:path';
import { readRegularFileSync } from '@agent/core/regular-file';
import { ancestorIdentity } from './bound-paths.js';
import { isInside, outermostPaths, realPath } from './real-paths.js';

/**
 * How far the search for repositories below the writable roots goes (once, when the sandbox is
 * created): levels below a root, directories read in all, and wall time in ms.
 */
export interface RepositorySearchLimits {
  depth: number;
  directories: number;
  milliseconds: number;
}

/**
 * The defaults: a workspace of checkouts (`~/code/org/app/packages/lib/.git` is 4 levels down)
 * is covered whole; reading a directory costs ~40 µs (376 ms for 9,597 on a loaded 2-core
 * machine), so 10,000 directories fit in the time.
 */
export const repositorySearchLimits: Readonly<RepositorySearchLimits> = Object.freeze({
  depth: 8,
  directories: 10_000,
  milliseconds: 400,
});

/**
 * Directories the search does not enter: what package managers install there is theirs, never a
 * repository the user works in (npm, pnpm and yarn drop a git dependency's `.git`), and it is most
 * of a JavaScript tree — in this monorepo, 9,422 of 9,597 directories.
 */
export const unsearchedDirectories: readonly string[] = ['node_modules'];

/** What {@link findRepositories} found. */
export interface RepositorySearch {
  /**
   * Paths to keep read-only: `.git` directories and files, bare repositories, and the git
   * directories a `.git` file (a worktree, a submodule, `--separate-git-dir`) or a `.git` link
   * points to when they lie inside a root, with a worktree's `commondir`.
   */
  paths: string[];
  /** Why the search ended before reading every directory within the depth, else undefined. */
  incomplete?: string;
}

/**
 * The git repositories below `roots`, breadth first (the shallow ones, where people work, are
 * found before a limit can cut the search short). Symbolic links to directories are not followed
 * (their target is searched where it lies, if inside a root); unreadable directories are skipped
 * (a command cannot write there either, unless it runs as root).
 */
export function findRepositories(
  roots: readonly string[],
  limits: Readonly<RepositorySearchLimits> = repositorySearchLimits,
): RepositorySearch {
  const watch = watchRepositories(roots, limits);
  return {
    paths: watch.paths(),
    ...(watch.incomplete === undefined ? {} : { incomplete: watch.incomplete }),
  };
}

/** The repositories below some roots, as first found and as commands make new ones. */
export interface RepositoryWatch {
  /** Every repository path found so far (see {@link RepositorySearch.paths}), none inside another. */
  paths(): string[];
  /** Why the first search ended early, else undefined. */
  readonly incomplete: string | undefined;
  /**
   * The repository paths that appeared since the first search or the last check (a `git init`,
   * a `.git` file written, a bare repository's files, a tree moved in, or one put where a
   * protected one was after a directory above it was moved away), added to {@link paths}.
   * Only the directories whose status changed are read again: a change to a directory's entries
   * sets its ctime, which no process can set back. Within the same limits, anew for each check.
   */
  check(): string[];
  /**
   * Why the last {@link check} stopped before reading every directory that changed (a command
   * made more directories than the limits allow: a repository among them is not listed yet),
   * else undefined. The next check goes on where it stopped, before what changed since.
   */
  readonly checkIncomplete: string | undefined;
}

/** Searches `roots` once (as {@link findRepositories}) and keeps what it read, to {@link RepositoryWatch.check} later. */
export function watchRepositories(
  roots: readonly string[],
  limits: Readonly<RepositorySearchLimits> = repositorySearchLimits,
): RepositoryWatch {
  const found = new Set<string>();
  // Who the directories above each one found were: a repository at the same path under a
  // directory moved in since is another one (the mount moved away with the old directory).
  const above = new Map<string, string>();
  // Each directory read, with its depth below its root and its ctime when read.
  const read = new Map<string, { depth: number; changed: bigint }>();
  const changedAt = (directory: string) =>
    fs.statSync(directory, { bigint: true, throwIfNoEntry: false })?.ctimeNs;

  /** Reads `start` and what lies below, within the limits; returns the repository paths new to `found`. */
  const search = (start: readonly { directory: string; depth: number }[]) => {
    const started = performance.now();
    const added: string[] = [];
    const add = (entry: string) => {
      if (found.has(entry)) return;
      found.add(entry);
      above.set(entry, ancestorIdentity(entry, roots));
      added.push(entry);
    };
    let queue = [...start];
    let count = 0;
    let incomplete: string | undefined;
    // What a search cut short did not read: the rest of its level, and the next one so far.
    let remaining: typeof queue = [];
    while (queue.length > 0 && incomplete === undefined) {
      const next: typeof queue = [];
      for (const [index, { directory, depth }] of queue.entries()) {
        if (count >= limits.directories) {
          incomplete = `stopped after ${limits.directories} directories`;
        } else if (performance.now() - started > limits.milliseconds) {
          incomplete = `stopped after ${limits.milliseconds} ms (${count} directories read)`;
        }
        if (incomplete !== undefined) {
          remaining = [...queue.slice(index), ...next];
          break;
        }
        count++;
        // The ctime before the entries: a change made in between is seen by the next check.
        const changed = changedAt(directory);
        let entries: fs.Dirent[];
        try {
          entries = fs.readdirSync(directory, { withFileTypes: true });
        } catch {
          continue;
        }
        if (changed !== undefined) read.set(directory, { depth, changed });
        if (isBareRepository(entries)) {
          add(directory);
          continue;
        }
        for (const entry of entries) {
          const entryPath = path.join(directory, entry.name);
          if (entry.name === '.git') {
            for (const protectedPath of gitEntryPaths(entryPath, roots)) add(protectedPath);
          } else if (
            entry.isDirectory() &&
            depth < limits.depth &&
            !unsearchedDirectories.includes(entry.name) &&
            !read.has(entryPath)
          ) {
            next.push({ directory: entryPath, depth: depth + 1 });
          }
        }
      }
      queue = next;
    }
    return { added, incomplete, remaining };
  };

  const first = search(roots.map((root) => ({ directory: root, depth: 0 })));
  // Left by a check cut short (never by the first search: its limits are documented, and what
  // lay below them was there before any command ran).
  let pending: { directory: string; depth: number }[] = [];
  let checkIncomplete: string | undefined;
  return {
    paths: () => outermostPaths([...found]),
    incomplete: first.incomplete,
    get checkIncomplete() {
      return checkIncomplete;
    },
    check() {
      // One removed since (outside) and made again is new again; one under a directory put
      // in place of another is new (this is how a command replaces one: a mount point cannot
      // be renamed, a directory above it can).
      const replaced: string[] = [];
      for (const entry of found) {
        if (!fs.existsSync(entry)) {
          found.delete(entry);
          above.delete(entry);
        } else if (above.get(entry) !== ancestorIdentity(entry, roots)) {
          above.set(entry, ancestorIdentity(entry, roots));
          replaced.push(entry);
        }
      }
      const changed: { directory: string; depth: number }[] = [];
      for (const [directory, { depth, changed: before }] of read) {
        const now = changedAt(directory);
        if (now === before) continue;
        read.delete(directory);
        if (now !== undefined) changed.push({ directory, depth });
      }
      // A directory read again finds its new subdirectories unread, and searches them.
      const result = search([...pending, ...changed]);
      pending = result.remaining;
      checkIncomplete = result.incomplete;
      return [...replaced, ...result.added.filter((entry) => fs.existsSync(entry))];
    },
  };
}

/**
 * The paths that keep the repository of one `.git` entry as it is: the entry itself (a mount
 * point cannot be renamed, removed or rewritten), and what it points to inside the roots. For a
 * link, its target only: a mount lands on the target, the link itself stays replaceable.
 */
export function gitEntryPaths(entry: string, roots: readonly string[]): string[] {
  const stat = fs.lstatSync(entry, { throwIfNoEntry: false });
  if (stat === undefined) return [];
  if (stat.isDirectory()) return [entry];
  if (stat.isSymbolicLink()) {
    const target = realPath(entry);
    if (target === undefined || !roots.some((root) => isInside(root, target))) return [];
    const targetStat = fs.statSync(target, { throwIfNoEntry: false });
    if (targetStat?.isDirectory()) return [target, ...pointedTo(target, true, roots)];
    return targetStat?.isFile() ? [target, ...pointedTo(target, false, roots)] : [];
  }
  if (!stat.isFile()) return [];
  return [entry, ...pointedTo(entry, false, roots)];
}

/** The git directory a `.git` file names, and a worktree's common directory, inside the roots. */
function pointedTo(entry: string, directory: boolean, roots: readonly string[]): string[] {
  const inRoots = (candidate: string | undefined): candidate is string =>
    candidate !== undefined && roots.some((root) => isInside(root, candidate));
  let gitDirectory = entry;
  if (!directory) {
    const named = /^gitdir:\s*(.+?)\s*$/m.exec(readStart(entry))?.[1];
    if (named === undefined) return [];
    const target = realPath(path.resolve(path.dirname(entry), named));
    if (target === undefined) return [];
    gitDirectory = target;
  }
  const common = readStart(path.join(gitDirectory, 'commondir')).trim();
  const commonDirectory = common === '' ? undefined : realPath(path.resolve(gitDirectory, common));
  const paths = gitDirectory === entry ? [] : [gitDirectory];
  return [...paths, commonDirectory].filter(inRoots);
}

/** A directory git takes for a repository of its own: `HEAD`, `objects/` and `refs/` in it. */
function isBareRepository(entries: readonly fs.Dirent[]): boolean {
  const kinds = new Map(entries.map((entry) => [entry.name, entry]));
  return (
    kinds.get('HEAD')?.isFile() === true &&
    kinds.get('objects')?.isDirectory() === true &&
    kinds.get('refs')?.isDirectory() === true
  );
}

/** The first 4 KiB of a regular file, else '' (never blocks: a FIFO planted as `commondir`). */
function readStart(file: string): string {
  const outcome = readRegularFileSync(file, { maxBytes: 4096, larger: 'head' });
  return outcome.kind === 'read' ? outcome.bytes.toString('utf8') : '';
}
