import * as fs from 'node:fs';
import * as path from 'node:path';
import { isInside, outermostPaths, realPath } from './real-paths.js';

/** Paths hidden by what they are called rather than where they are (`*.pem`, `**\/.env`). */
export interface HiddenPatterns {
  /**
   * The patterns, absolute (`*` matches any run of characters, `/` included): where they have a
   * folder before their first `*` outside the writable roots (`/srv/keys/*.pem`), that folder is
   * looked through too. Empty: nothing to look for.
   */
  patterns: readonly string[];
  /** Whether a real path is covered (a folder covered covers what is inside it). */
  matches(realPath: string): boolean;
}

/** How far one look goes; past it the command is refused, not run with a secret in view. */
export const patternSearchLimits = { directories: 100_000 };

/** A file hidden by name that has other names (hard links): its identity. */
export interface LinkedFile {
  dev: number;
  ino: number;
}

interface Listing {
  /** The directory's change time and inode when it was read: an entry made, renamed or removed changes the first. */
  stamp: string;
  entries: { name: string; directory: boolean; link: boolean }[];
  /** What the last look with the same patterns made of it (kept with the listing: most folders never change). */
  summary?: Summary;
}

/** One folder, looked at with some patterns. */
interface Summary {
  /** The patterns it was looked at with. */
  key: string;
  /** What they cover here: entries, and where a link here lands. */
  covered: string[];
  /** Folders to look through (not covered, not links, not kernel file systems). */
  folders: string[];
  /** Names of the other entries (for the other names of hidden files). */
  files: string[];
}

/** The summary of `directory` for `key`, made from its listing unless already made. */
function summaryOf(
  directory: string,
  listing: Listing,
  key: string,
  hidden: HiddenPatterns | undefined,
): Summary {
  if (listing.summary?.key === key) return listing.summary;
  const summary: Summary = { key, covered: [], folders: [], files: [] };
  const looking = hidden !== undefined && hidden.patterns.length > 0;
  for (const entry of listing.entries) {
    const full = path.join(directory, entry.name);
    if (looking && hidden.matches(full)) {
      summary.covered.push(full);
    } else if (entry.link) {
      // A link in the workspace to a covered file elsewhere: hidden where it lands. (Its target
      // is fixed when it is made: another one is a new link, which changes this folder.)
      const target = realPath(full);
      if (looking && target !== undefined && hidden.matches(target)) summary.covered.push(target);
    } else if (entry.directory) {
      if (!virtualFileSystems.some((root) => isInside(root, full))) summary.folders.push(full);
    } else summary.files.push(entry.name);
  }
  listing.summary = summary;
  return summary;
}

/**
 * Finds, per command, the paths under some folders that hidden patterns cover, and the other
 * names of hidden files with more than one. A bind mount needs a path that exists, so each file
 * is looked for before the command starts; a folder's listing is read again only when its change
 * time moved (one `lstat` per folder otherwise).
 */
export class PatternPaths {
  readonly #listings = new Map<string, Listing>();

  /**
   * The real paths under `roots` (and under the patterns' own folders) that `hidden` covers
   * (none inside another), and those with the identity of one of `linked` (its other names).
   * Throws when there are more folders than {@link patternSearchLimits}: the command must not run
   * with a covered file in view.
   */
  find(options: {
    roots: readonly string[];
    hidden: HiddenPatterns | undefined;
    linked: readonly LinkedFile[];
  }): string[] {
    const { hidden, linked } = options;
    const patterns = hidden?.patterns ?? [];
    if (patterns.length === 0 && linked.length === 0) return [];
    const found = new Set<string>();
    const starts = [...options.roots, ...(hidden === undefined ? [] : patternFolders(patterns))];
    const queue = outermostPaths(starts.filter((start) => isDirectory(start)));
    const identities = new Set(linked.map((file) => `${file.dev}:${file.ino}`));
    const key = patterns.join('\0');
    let directories = 0;
    for (let index = 0; index < queue.length; index++) {
      const directory = queue[index] ?? '';
      if (++directories > patternSearchLimits.directories) {
        throw new Error(
          `the sandbox cannot look through more than ${patternSearchLimits.directories} folders under ${starts.join(', ')} for what ${patterns.length > 0 ? `the rules ${patterns.map((pattern) => `"${pattern}"`).join(', ')} cover` : 'the other names of hidden files'}; not running the command with such a file in view (narrow the rule to a folder, e.g. "secrets/**")`,
        );
      }
      const listing = this.#list(directory);
      const summary = summaryOf(directory, listing, key, hidden);
      for (const entry of summary.covered) found.add(entry);
      queue.push(...summary.folders);
      if (identities.size === 0) continue;
      for (const name of summary.files) {
        const full = path.join(directory, name);
        const stat = fs.lstatSync(full, { throwIfNoEntry: false });
        if (stat !== undefined && identities.has(`${stat.dev}:${stat.ino}`)) found.add(full);
      }
    }
    return [...found];
  }

  /** The listing of `directory`, read again only when its change time moved. */
  #list(directory: string): Listing {
    let stamp: string;
    try {
      const stat = fs.lstatSync(directory, { bigint: true });
      stamp = `${stat.dev}:${stat.ino}:${stat.ctimeNs}:${stat.mtimeNs}`;
    } catch {
      this.#listings.delete(directory);
      return { stamp: '', entries: [] };
    }
    const known = this.#listings.get(directory);
    if (known?.stamp === stamp) return known;
    let entries: Listing['entries'];
    try {
      entries = fs.readdirSync(directory, { withFileTypes: true }).map((entry) => ({
        name: entry.name,
        directory: entry.isDirectory(),
        link: entry.isSymbolicLink(),
      }));
    } catch {
      // Unreadable to us: unreadable to the command as well.
      entries = [];
    }
    const listing: Listing = { stamp, entries };
    this.#listings.set(directory, listing);
    return listing;
  }
}

/** Kernel file systems a walk never enters (a writable root of `/` would reach them). */
const virtualFileSystems = ['/proc', '/sys', '/dev'];

/** The folder before each pattern's first `*`, when it is absolute and not `/` itself. */
function patternFolders(patterns: readonly string[]): string[] {
  const folders: string[] = [];
  for (const pattern of patterns) {
    const literal = pattern.split('*')[0] ?? '';
    const folder = literal.slice(0, literal.lastIndexOf('/'));
    if (folder.startsWith('/') && folder !== '') folders.push(realPath(folder) ?? folder);
  }
  return folders;
}

function isDirectory(entry: string): boolean {
  return fs.statSync(entry, { throwIfNoEntry: false })?.isDirectory() === true;
}
