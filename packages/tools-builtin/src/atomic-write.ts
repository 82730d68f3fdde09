import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
import { errorCode } from './file-tool-options.js';
import type { FileSystemOperations } from './workspace.js';

/** Bytes of the target's name kept in the temp file's name (`.<stem>.<12 hex>.tmp` ≤ 255). */
const maxStemBytes = 200;

/**
 * Gives the temp file the replaced file's owner and group, as far as this process may: an agent
 * running as root edited a user's file into root's, which the user could then no longer write.
 * Without the right (EPERM), the file is written with this process's owner, as before.
 */
async function keepOwner(
  handle: {
    stat(): Promise<{ uid: number; gid: number }>;
    chown(uid: number, gid: number): Promise<void>;
  },
  owner: { uid: number; gid: number },
): Promise<void> {
  const current = await handle.stat();
  if (current.uid === owner.uid && current.gid === owner.gid) return;
  try {
    await handle.chown(owner.uid, owner.gid);
  } catch (error) {
    const code = errorCode(error);
    if (code !== 'EPERM' && code !== 'EINVAL' && code !== 'ENOSYS') throw error;
  }
}

/** The checks a caller makes on an {@link atomicWrite}'s temp file (see `Workspace.writeGuard`). */
export interface AtomicWriteGuard {
  /** Called with the temp file's descriptor before anything is written; throw to give up (the temp file is removed). */
  verify?: (fd: number) => Promise<void>;
  /** The error thrown when the temp file at `where` was replaced by another between its close and the rename. */
  raced?: (where: string) => Error;
}

/** What {@link atomicWrite} did. */
export interface AtomicWriteResult {
  /** True when the file did not exist before. */
  created: boolean;
  /** The mode the file was written with. */
  mode: number;
}

/**
 * Writes `data` to `target` so that readers see the old or the new file, never a partial one:
 * a temp file in the same directory, flushed, then renamed over the target. Parents are created;
 * an existing file keeps its permission bits and, where this process may set them, its owner and
 * group.
 */
export async function atomicWrite(
  fsOps: FileSystemOperations,
  target: string,
  data: string | Uint8Array,
  options: AtomicWriteGuard & {
    /**
     * What the target held when it was read for this write (an edit): just before the rename the
     * target is read again and, if it differs, the write is given up with an `ESTALE` error — a
     * change another process made meanwhile would otherwise be lost without a word.
     */
    unchanged?: Uint8Array;
  } = {},
): Promise<AtomicWriteResult> {
  const directory = path.dirname(target);
  let mode = 0o666 & ~process.umask();
  let created = true;
  let owner: { uid: number; gid: number } | undefined;
  try {
    const stats = await fsOps.stat(target);
    if (stats.isDirectory())
      throw Object.assign(new Error(`${target} is a directory`), { code: 'EISDIR' });
    mode = stats.mode & 0o7777;
    owner = { uid: stats.uid, gid: stats.gid };
    created = false;
  } catch (error) {
    if (errorCode(error) !== 'ENOENT') throw error;
    await fsOps.mkdir(directory, { recursive: true });
  }
  // Keep the temp name within NAME_MAX (255 bytes) however long the target's name is.
  let stem = path.basename(target);
  while (Buffer.byteLength(stem) > maxStemBytes) stem = stem.slice(0, -1);
  const temp = path.join(directory, `.${stem}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await fsOps.open(temp, 'wx', mode);
  try {
    try {
      await options.verify?.(handle.fd);
      if (owner !== undefined) await keepOwner(handle, owner);
      await handle.writeFile(data);
      // open() applies the umask; set the exact bits the old file had. Through the descriptor: by
      // name, a link put in the temp file's place (the folder is the workspace's) was followed.
      await handle.chmod(mode);
      await handle.sync();
      // Compared while the file is still open: once closed and replaced, its inode number is
      // free, and the link put in its place may get it.
      const written = await handle.stat();
      const now = await fsOps.lstat(temp);
      if (now.dev !== written.dev || now.ino !== written.ino)
        throw options.raced?.(temp) ?? new Error(`${temp} was replaced while it was being written`);
    } finally {
      await handle.close();
    }
    if (options.unchanged !== undefined) {
      const now = await fsOps.readFile(target).catch(() => undefined);
      if (now === undefined || !Buffer.from(options.unchanged).equals(now))
        throw Object.assign(new Error(`${target} changed while it was being edited`), {
          code: 'ESTALE',
        });
    }
    await fsOps.rename(temp, target);
  } catch (error) {
    await fsOps.unlink(temp).catch(() => {});
    throw error;
  }
  return { created, mode };
}
