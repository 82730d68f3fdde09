import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/**
 * Where bash saves output that does not fit, unless told: one directory per user in the
 * system's temporary directory (`agent-tools-builtin-<uid>`; without uids, `agent-tools-builtin`).
 */
export function defaultSpillDir(): string {
  const uid = process.getuid?.();
  return path.join(
    os.tmpdir(),
    uid === undefined ? 'agent-tools-builtin' : `agent-tools-builtin-${uid}`,
  );
}

/**
 * Why `dir`, in a temporary directory other users can write to, is not safe to save output in:
 * a symbolic link or a directory of another user (both can be planted in advance). Undefined
 * when it is ours; its mode is then narrowed to 0700 if it was wider.
 */
export function sharedDirProblem(dir: string): string | undefined {
  const stat = fs.lstatSync(dir);
  if (stat.isSymbolicLink()) return `${dir} is a symbolic link`;
  if (!stat.isDirectory()) return `${dir} is not a directory`;
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid) {
    return `${dir} belongs to another user (uid ${stat.uid})`;
  }
  if ((stat.mode & 0o077) !== 0) fs.chmodSync(dir, 0o700);
  return undefined;
}

/**
 * Creates the spill directory (0700) when missing. The default one, in the shared temporary
 * directory, must also pass {@link sharedDirProblem}; a directory the caller chose is trusted.
 */
export function prepareSpillDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (path.resolve(dir) !== defaultSpillDir()) return;
  const problem = sharedDirProblem(dir);
  if (problem !== undefined) {
    throw new Error(`refusing to save output there: ${problem} (set spillDir)`);
  }
}
