// Where paths lead, and which lies inside which: the checks every part of the sandbox makes.
import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * Whether `entry` is `root` or lies below it, by name (resolve links first where they matter).
 * Compared by segments: `/ws/..x` (a name that starts with two dots) lies inside `/ws`.
 */
export function isInside(root: string, entry: string): boolean {
  const relative = path.relative(root, entry);
  if (relative === '') return true;
  if (path.isAbsolute(relative)) return false;
  return relative !== '..' && !relative.startsWith(`..${path.sep}`);
}

/** The real path of `entry`, or undefined where it cannot be resolved (missing, a loop, no access). */
export function realPath(entry: string): string | undefined {
  try {
    return fs.realpathSync(entry);
  } catch {
    return undefined;
  }
}

/** The real path of `entry`, or `entry` made absolute where it cannot be resolved. */
export function realPathOrResolved(entry: string): string {
  return realPath(entry) ?? path.resolve(entry);
}

/**
 * `paths` without duplicates and without those inside another of them, shortest first (a
 * directory kept read-only, hidden or bound covers what it holds).
 */
export function outermostPaths(paths: readonly string[]): string[] {
  const kept: string[] = [];
  for (const candidate of [...new Set(paths)].sort((a, b) => a.length - b.length)) {
    if (!kept.some((outer) => isInside(outer, candidate))) kept.push(candidate);
  }
  return kept;
}
