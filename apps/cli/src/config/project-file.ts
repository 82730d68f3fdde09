/**
 * Reading a file a project ships for the model's context (AGENTS.md, an agent definition): the
 * CLI reads it itself, outside the sandbox, so it must not become a way to the user's files. A
 * repository can hold `AGENTS.md -> ~/.ssh/id_rsa` (git stores symlinks), and a sandboxed command
 * can put such a link in the workspace before a later read; either would send the target to the
 * model. Only a regular file whose real path lies inside the project is read.
 */
import { constants } from 'node:fs';
import { open, readlink, realpath } from 'node:fs/promises';
import { isAbsolute, relative } from 'node:path';

/** What {@link readProjectFile} found. */
export type ProjectFileRead =
  | { kind: 'read'; text: string }
  | { kind: 'missing' }
  /** It exists but was not read; `reason` names why, for a notice. */
  | { kind: 'refused'; reason: string };

function inside(root: string, path: string): boolean {
  const rest = relative(root, path);
  return rest === '' || (!rest.startsWith('..') && !isAbsolute(rest));
}

/**
 * Reads `path` when it is a regular file whose real path lies inside `root` (a real path).
 * The check is made on the opened file (`/proc/self/fd/N` on Linux, the real path elsewhere), so
 * a link swapped in after a check changes nothing; a FIFO cannot block the read (`O_NONBLOCK`).
 */
export async function readProjectFile(path: string, root: string): Promise<ProjectFileRead> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { kind: 'missing' };
    return { kind: 'refused', reason: `it cannot be opened (${code ?? String(error)})` };
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) return { kind: 'refused', reason: 'it is not a regular file' };
    const real = await readlink(`/proc/self/fd/${handle.fd}`).catch(() => realpath(path));
    if (!inside(root, real))
      return { kind: 'refused', reason: `it leads outside the project (to ${real})` };
    return { kind: 'read', text: await handle.readFile('utf8') };
  } finally {
    await handle.close();
  }
}
