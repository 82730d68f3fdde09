/**
 * A directory inside the workspace, opened so that what happens to its path afterwards does not
 * matter: for the CLI's own writes there (a `/rewind` putting files back), which run outside the
 * sandbox while sandboxed commands — background ones included — may still be changing the
 * workspace. A command can put a link where a folder was (`sub -> ~/.config`); a write through
 * the path would then land outside, with the user's rights. Walking one component at a time
 * through the previous one's descriptor (`/proc/self/fd/N/name`, opened `O_NOFOLLOW`) is the
 * `openat` walk Node lacks: no link is followed, and a swap after a step changes nothing.
 */
import { constants } from 'node:fs';
import { lstat, mkdir, open } from 'node:fs/promises';
import { join } from 'node:path';

/** An open directory of the workspace: {@link at} names an entry in it. */
export interface WorkspaceDirectory {
  /** A path for `name` in this directory that reaches the opened directory whatever its path is now. */
  at(name: string): string;
  close(): Promise<void>;
}

const directoryFlags = constants.O_RDONLY | constants.O_DIRECTORY | (constants.O_NOFOLLOW ?? 0);

function hasProcFd(): boolean {
  return process.platform === 'linux';
}

/**
 * Opens `root`/`parts…` (root a real path the user chose; parts below it, none `..`), creating
 * missing folders when `create`. Returns why not (a link or a file where a folder should be, a
 * folder missing) instead of throwing for those. Without `/proc` (not Linux) each component is
 * checked with `lstat` and the path used as it is: the same refusal of links, without the
 * guarantee against a swap after the check.
 */
export async function openWorkspaceDirectory(
  root: string,
  parts: readonly string[],
  options: { create: boolean },
): Promise<WorkspaceDirectory | string> {
  if (parts.some((part) => part === '' || part === '.' || part === '..' || part.includes('/')))
    return 'its folder is not a plain path below the workspace';
  if (!hasProcFd()) return checkedPath(root, parts, options);
  let handle = await open(root, directoryFlags);
  try {
    for (const part of parts) {
      const next = join(`/proc/self/fd/${handle.fd}`, part);
      let opened: Awaited<ReturnType<typeof open>> | string;
      try {
        opened = await open(next, directoryFlags);
      } catch (error) {
        opened = await refusalOrCreated(error, next, part, options);
      }
      if (typeof opened === 'string') {
        await handle.close();
        return opened;
      }
      await handle.close();
      handle = opened;
    }
  } catch (error) {
    await handle.close();
    throw error;
  }
  const fd = handle.fd;
  return { at: (name: string) => join(`/proc/self/fd/${fd}`, name), close: () => handle.close() };
}

/** After a failed open of a component: create it (then open it) or say why it cannot be used. */
async function refusalOrCreated(
  error: unknown,
  next: string,
  part: string,
  options: { create: boolean },
): Promise<Awaited<ReturnType<typeof open>> | string> {
  const code = (error as NodeJS.ErrnoException).code;
  // ELOOP / ENOTDIR: a link (or a file) where the folder was.
  if (code === 'ELOOP' || code === 'ENOTDIR') return `${part} is not a folder of the workspace now`;
  if (code !== 'ENOENT') throw error;
  if (!options.create) return `${part} no longer exists`;
  await mkdir(next).catch((made: NodeJS.ErrnoException) => {
    if (made.code !== 'EEXIST') throw made;
  });
  try {
    return await open(next, directoryFlags);
  } catch {
    return `${part} is not a folder of the workspace now`;
  }
}

async function checkedPath(
  root: string,
  parts: readonly string[],
  options: { create: boolean },
): Promise<WorkspaceDirectory | string> {
  let current = root;
  for (const part of parts) {
    current = join(current, part);
    const info = await lstat(current).catch(() => undefined);
    if (info === undefined) {
      if (!options.create) return `${part} no longer exists`;
      await mkdir(current);
    } else if (!info.isDirectory()) return `${part} is not a folder of the workspace now`;
  }
  const folder = current;
  return { at: (name: string) => join(folder, name), close: async () => undefined };
}
