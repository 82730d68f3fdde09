import * as fs from 'node:fs';
import * as path from 'node:path';
import { isInside, outermostPaths } from './real-paths.js';

/**
 * The writable roots to bind, none inside another. A root inside another is writable already;
 * binding it again would make it a target a command can swap: move a directory above it away,
 * put a link to `/etc` (relative, so it resolves inside bubblewrap's new root) in its place, and
 * the next sandbox's `--bind` follows the link and makes `/etc` writable.
 */
export function outermostRoots(roots: readonly string[]): string[] {
  return outermostPaths(roots);
}

/**
 * Throws unless every root still resolves to itself: a `--bind` follows links, so a root that
 * became a link (or has one above it) would make its target writable. Fail closed: the roots'
 * parents lie outside the writable roots, so only something outside the sandbox can cause this.
 */
export function assertRootsUnmoved(roots: readonly string[]): void {
  for (const root of roots) {
    let real: string;
    try {
      real = fs.realpathSync(root);
    } catch (error) {
      throw new Error(
        `sandbox: the writable root ${root} cannot be bound: ${(error as Error).message}`,
      );
    }
    if (real !== root) {
      throw new Error(
        `sandbox: the writable root ${root} now resolves to ${real} (a link was put in its path); not binding it writable`,
      );
    }
  }
}

/**
 * Who the directories between the outermost root holding `entry` and `entry` are (device and
 * inode, outermost last), '' when none. A protected path is a mount point inside — it cannot be
 * renamed, removed or rewritten — but a directory above it can be moved, taking the mount along,
 * and a new directory with an unprotected `.git` or startup file of the command's making put in
 * its place, at the same path. This changes then, and nothing else a command can do changes it.
 */
export function ancestorIdentity(entry: string, roots: readonly string[]): string {
  const root = roots
    .filter((candidate) => candidate !== entry && isInside(candidate, entry))
    .sort((a, b) => a.length - b.length)[0];
  if (root === undefined) return '';
  const parts: string[] = [];
  for (let directory = path.dirname(entry); directory !== root; ) {
    const stat = fs.lstatSync(directory, { bigint: true, throwIfNoEntry: false });
    parts.push(stat === undefined ? '-' : `${stat.dev}:${stat.ino}`);
    const parent = path.dirname(directory);
    if (parent === directory) break;
    directory = parent;
  }
  return parts.join('/');
}

/** Device and inode of each path (what a host compares to know its mounts still cover them). */
export function identities(paths: readonly string[]): string[] {
  return paths.map((entry) => {
    const stat = fs.lstatSync(entry, { bigint: true, throwIfNoEntry: false });
    return stat === undefined ? '-' : `${stat.dev}:${stat.ino}`;
  });
}

/**
 * The directories strictly between the outermost root holding each of `paths` and that path,
 * outer ones first — those a command could rename to carry a protected or hidden path away from
 * where the next sandbox looks for it (then bound over themselves, pinned, so that it cannot).
 * Only real directories: a link is not followed (the path below it is not there to carry).
 */
export function directoriesAbove(paths: readonly string[], roots: readonly string[]): string[] {
  const found = new Set<string>();
  for (const entry of paths) {
    const root = roots
      .filter((candidate) => candidate !== entry && isInside(candidate, entry))
      .sort((a, b) => a.length - b.length)[0];
    if (root === undefined) continue;
    for (let directory = path.dirname(entry); directory !== root; ) {
      found.add(directory);
      const parent = path.dirname(directory);
      if (parent === directory) break;
      directory = parent;
    }
  }
  return [...found]
    .filter((directory) => {
      const stat = fs.lstatSync(directory, { throwIfNoEntry: false });
      return stat?.isDirectory() === true;
    })
    .sort((a, b) => a.split(path.sep).length - b.split(path.sep).length || a.localeCompare(b));
}
