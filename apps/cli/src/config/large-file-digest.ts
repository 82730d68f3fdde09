// The pin of a project file too large to read whole into memory (a program a trusted hook runs:
// `.venv/bin/ruff`, `node_modules/.bin/esbuild`, a vendored tool). It was its size alone, and a
// sandboxed command replaced such a program with a two-line script padded to the same size: the
// pin held, and the hook ran the script as the user, outside the sandbox. Now its content is
// hashed too, in chunks; past a bound, its identity and change time (which no process can set).
import { createHash } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';

/** Files up to this size are hashed whole (bytes); larger ones are pinned by identity. */
const maxStreamedBytes = 256 * 1024 * 1024;
const chunkBytes = 1024 * 1024;
/** A change closer than this to a look may share its change time with the next (ms). */
const racyMs = 3000;

/** Digests already taken, by identity, size and times: a file is hashed again only once changed. */
const taken = new Map<string, string>();

/**
 * `sha256:<hex>` of the regular file at `path` (`stats`: what it was when found large), read in
 * chunks; `changed:…` (device, inode, size, change time) past {@link maxStreamedBytes};
 * undefined when it cannot be read or is no longer a regular file.
 */
export function largeFileDigest(path: string, stats: Stats): string | undefined {
  const key = `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeMs}:${stats.ctimeMs}`;
  if (stats.size > maxStreamedBytes) return `changed:${key}`;
  const known = taken.get(key);
  if (known !== undefined) return known;
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch {
    return undefined;
  }
  try {
    const opened = fstatSync(fd);
    if (!opened.isFile() || opened.ino !== stats.ino || opened.dev !== stats.dev) return undefined;
    const hash = createHash('sha256');
    const buffer = Buffer.allocUnsafe(chunkBytes);
    for (let read = readSync(fd, buffer); read > 0; read = readSync(fd, buffer))
      hash.update(buffer.subarray(0, read));
    const digest = `sha256:${hash.digest('hex')}`;
    // Kept only when the file's last change is older than a clock tick could hide.
    if (Date.now() - opened.ctimeMs > racyMs && opened.ctimeMs === stats.ctimeMs)
      taken.set(key, digest);
    return digest;
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}
