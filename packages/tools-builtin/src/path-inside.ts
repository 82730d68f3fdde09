import * as path from 'node:path';

/** True when `child` is `parent` or lies below it, compared by path segments (not string prefix). */
export function isPathInside(parent: string, child: string): boolean {
  const relative = path.relative(parent, child);
  if (relative === '') return true;
  if (path.isAbsolute(relative)) return false;
  const first = relative.split(path.sep)[0];
  return first !== '..';
}
