import * as fs from 'node:fs/promises';
import * as path from 'node:path';

/** Directories never searched for source files: dependencies, build output, caches, VCS. */
const skippedDirectories = new Set([
  'node_modules',
  'dist',
  'build',
  'out',
  'coverage',
  '__pycache__',
  'venv',
  'site-packages',
]);

/**
 * Up to `limit` files under `roots` whose extension is in `extensions`, breadth-first, sorted
 * within each directory; hidden directories and {@link skippedDirectories} are skipped.
 * `truncated` says whether more exist.
 */
export async function findSourceFiles(
  roots: readonly string[],
  extensions: readonly string[],
  limit: number,
): Promise<{ files: string[]; truncated: boolean }> {
  return findFiles(roots, (name) => extensions.includes(path.extname(name).toLowerCase()), limit);
}

/** Up to `limit` files under `roots` named one of `names` (project files: tsconfig.json…), as {@link findSourceFiles} walks. */
export async function findNamedFiles(
  roots: readonly string[],
  names: readonly string[],
  limit: number,
): Promise<{ files: string[]; truncated: boolean }> {
  return findFiles(roots, (name) => names.includes(name), limit);
}

async function findFiles(
  roots: readonly string[],
  wanted: (name: string) => boolean,
  limit: number,
): Promise<{ files: string[]; truncated: boolean }> {
  const files: string[] = [];
  const queue = [...roots];
  for (let directory = queue.shift(); directory !== undefined; directory = queue.shift()) {
    let entries: import('node:fs').Dirent[];
    try {
      entries = await fs.readdir(directory, { withFileTypes: true });
    } catch {
      continue;
    }
    entries.sort((a, b) => a.name.localeCompare(b.name));
    for (const entry of entries) {
      const full = path.join(directory, entry.name);
      if (entry.isDirectory()) {
        if (!entry.name.startsWith('.') && !skippedDirectories.has(entry.name)) queue.push(full);
      } else if (entry.isFile() && wanted(entry.name)) {
        if (files.length >= limit) return { files, truncated: true };
        files.push(full);
      }
    }
  }
  return { files, truncated: false };
}
