import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as regularFile from '@agent/core/regular-file';
import { maxServerMessageBytes } from './message-size-guard.js';

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
  const outcome = await regularFile.readRegularFile(file, { maxBytes, larger: 'head' });
  return outcome.kind === 'read' ? outcome.bytes.toString('utf8') : undefined;
}

/**
 * Largest file {@link readFileInside} reads (bytes): what it reads goes to the language server in
 * one message, which may not be larger.
 */
const maxDocumentBytes = maxServerMessageBytes;

/**
 * The text of `file` when it is a regular file inside one of `roots` (real paths), else
 * undefined. A language server (the repository's own, run sandboxed) names files the tools then
 * read outside the sandbox — the line beside a location, a rename's targets, a document to send
 * back to it: neither a path it names outside the workspace nor a workspace file swapped for a
 * link out may have them read. The check is made on the opened file (`/proc/self/fd/N` on Linux),
 * so a swap after it changes nothing; a FIFO cannot block the read. A file over 64 MiB (the
 * largest message a server may send) is not read.
 */
export async function readFileInside(
  file: string,
  roots: readonly string[],
): Promise<string | undefined> {
  const outcome = await regularFile.readRegularFile(file, {
    maxBytes: maxDocumentBytes,
    realPath: true,
    check: ({ realPath = file }) =>
      roots.some((root) => isPathInside(root, realPath)) ? undefined : 'outside the roots',
  });
  return outcome.kind === 'read' ? outcome.bytes.toString('utf8') : undefined;
}
