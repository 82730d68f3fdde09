import { constants } from 'node:fs';
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

/**
 * The first `maxBytes` of `file` when it is a regular file, else undefined. For the repository's
 * files this process reads itself (a `.bin` script, a `package.json`, a file a tool names): a FIFO
 * there blocked the read for ever — at the session's start, before anything was asked — and a
 * link to `/dev/zero` read 700 MB. Opened without blocking, judged on the opened file.
 */
export async function readRegularFile(file: string, maxBytes: number): Promise<string | undefined> {
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(file, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch {
    return undefined;
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) return undefined;
    const buffer = Buffer.alloc(Math.min(info.size, maxBytes));
    let filled = 0;
    while (filled < buffer.length) {
      const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return buffer.subarray(0, filled).toString('utf8');
  } catch {
    return undefined;
  } finally {
    await handle.close();
  }
}

/**
 * The text of `file` when it is a regular file inside one of `roots` (real paths), else
 * undefined. A language server (the repository's own, run sandboxed) names files the tools then
 * read outside the sandbox — the line beside a location, a rename's targets, a document to send
 * back to it: neither a path it names outside the workspace nor a workspace file swapped for a
 * link out may have them read. The check is made on the opened file (`/proc/self/fd/N` on Linux),
 * so a swap after it changes nothing; a FIFO cannot block the read.
 */
export async function readFileInside(
  file: string,
  roots: readonly string[],
): Promise<string | undefined> {
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(file, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch {
    return undefined;
  }
  try {
    if (!(await handle.stat()).isFile()) return undefined;
    const real = await fs.readlink(`/proc/self/fd/${handle.fd}`).catch(() => realPathOf(file));
    if (!roots.some((root) => isPathInside(root, real))) return undefined;
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}
