import * as fs from 'node:fs';
import { type FileSystemOperations, Workspace } from './workspace.js';

export { errorCode, fileSystemError } from './fs-errors.js';

/**
 * Opens and closes `real` (a file or directory already known to be one) so that an unreadable
 * one fails loudly (EACCES) instead of a walk or search silently finding nothing in it.
 */
export async function probeReadable(fsOps: FileSystemOperations, real: string): Promise<void> {
  const handle = await fsOps.open(real, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
  await handle.close();
}

/** Options every file tool takes: where it works and which directories it may touch. */
export interface FileToolOptions {
  /** Directory relative paths are resolved against. */
  cwd: string;
  /** Directories the tool may touch [`[cwd]`]; paths are compared by real path. */
  roots?: readonly string[];
  /** Extra directories read-only tools may read (not write). */
  readOnlyRoots?: readonly string[];
  /** File-system operations [node:fs/promises]. */
  fs?: FileSystemOperations;
  /** A workspace to share between tools; when given, `cwd`, `roots`, `readOnlyRoots` and `fs` are taken from it. */
  workspace?: Workspace;
}

/** The workspace a file tool works in. */
export function workspaceOf(options: FileToolOptions): Workspace {
  if (options.workspace !== undefined) return options.workspace;
  return new Workspace({
    cwd: options.cwd,
    ...(options.roots === undefined ? {} : { roots: options.roots }),
    ...(options.readOnlyRoots === undefined ? {} : { readOnlyRoots: options.readOnlyRoots }),
    ...(options.fs === undefined ? {} : { fs: options.fs }),
  });
}
