import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** True when `child` is `parent` or lies below it, compared by path segments (not string prefix). */
export function isPathInside(parent: string, child: string): boolean {
  const relative = path.relative(parent, child);
  if (relative === '') return true;
  if (path.isAbsolute(relative)) return false;
  return relative.split(path.sep)[0] !== '..';
}

/**
 * The real path of `target`: symlinks followed; for a path that does not exist, its nearest
 * existing ancestor's real path joined with the rest (so a missing file is still confined).
 */
export async function realPathOf(target: string): Promise<string> {
  try {
    return await fs.realpath(target);
  } catch {
    const parent = path.dirname(target);
    if (parent === target) return target;
    return path.join(await realPathOf(parent), path.basename(target));
  }
}

/** `file://` URI of an absolute path. */
export function uriOf(file: string): string {
  return pathToFileURL(file).href;
}

/** The path of a `file://` URI, or undefined for another scheme. */
export function pathOfUri(uri: string): string | undefined {
  if (!uri.startsWith('file:')) return undefined;
  try {
    return fileURLToPath(uri);
  } catch {
    return undefined;
  }
}
