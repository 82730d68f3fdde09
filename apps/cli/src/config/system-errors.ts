// Errors from the machine rather than from the CLI: a folder the user cannot write, a full disk,
// a read-only file system, Ctrl-C at a readline question. They are the user's to fix (or the
// user's own doing), so they are said in a sentence with the next step, never as a stack.
import { isAbsolute, relative, sep } from 'node:path';
import { agentHome } from './agent-home.js';

const reasons: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'the file system is read-only',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'the disk quota is exhausted',
  ENOTDIR: 'a part of the path is not a folder',
  EISDIR: 'it is a folder',
  ENAMETOOLONG: 'the name is too long',
  EMFILE: 'too many open files',
  EIO: 'an input/output error',
  EFBIG: 'the file is too large',
};

/**
 * The sentence for a file-system error Node raised (`EACCES`, `EROFS`, `ENOSPC`, …) with a path,
 * saying what to do next; `undefined` for any other error. A path under `$AGENT_HOME` (the CLI's
 * own state) names the variable that moves it.
 */
export function fileSystemProblem(error: unknown, home = agentHome()): string | undefined {
  if (error === null || typeof error !== 'object') return undefined;
  const { code, path, syscall } = error as { code?: unknown; path?: unknown; syscall?: unknown };
  // The shell's folder was removed under it (`rm -rf` of the folder one stands in).
  if (syscall === 'uv_cwd')
    return 'the current folder no longer exists (deleted or moved while the shell stood in it). cd to a folder that exists, or pass --cwd <dir>.';
  if (typeof code !== 'string' || typeof path !== 'string') return undefined;
  // Node's recursive mkdir says ENOENT where the real cause (a read-only file system, a folder
  // it may not enter) was lost on the way up.
  const reason =
    code === 'ENOENT' && syscall === 'mkdir'
      ? 'it could not be created (a read-only file system, or a folder above it that is missing or not writable)'
      : reasons[code];
  if (reason === undefined) return undefined;
  const action =
    typeof syscall === 'string' && /^(open|read|stat|scandir)/.test(syscall)
      ? 'cannot read'
      : 'cannot write';
  const inHome = isInside(path, home);
  const next = inHome
    ? `Make ${home} writable, or set AGENT_HOME to a folder you can write (export AGENT_HOME=/path/to/folder): agent keeps its settings, sessions and trusted folders there`
    : code === 'ENOSPC' || code === 'EDQUOT'
      ? 'Free some space and run it again'
      : `Check the path and its permissions (ls -ld '${path}')`;
  return `${action} ${path}: ${reason} (${code}). ${next}.`;
}

/** The plain-words reason of a file-system error's code (`EACCES` → `permission denied`), if it has one. */
export function fileSystemReason(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? reasons[code] : undefined;
}

/**
 * The sentence for stdout that cannot be written (`agent -p … > answer.txt` on a full disk, an
 * I/O error): what happened and the next step, the error's code kept for a search.
 */
export function outputProblem(error: NodeJS.ErrnoException): string {
  const code = typeof error.code === 'string' ? error.code : 'unknown';
  const reason = reasons[code] ?? errorText(error);
  const next =
    code === 'ENOSPC' || code === 'EDQUOT' || code === 'EFBIG'
      ? 'Free some space, or send the output elsewhere'
      : 'Send the output elsewhere';
  return `cannot write the output (stdout): ${reason} (${code}), so agent stopped. ${next}; a session's conversation is kept (agent --continue goes on with it).`;
}

function errorText(error: Error): string {
  return error.message.split('\n')[0] ?? 'it failed';
}

/** Whether the error is readline's answer to Ctrl-C at a question (`AbortError: Aborted with Ctrl+C`). */
export function isInterrupt(error: unknown): boolean {
  return (
    error instanceof Error &&
    (error.name === 'AbortError' || (error as { code?: unknown }).code === 'ABORT_ERR')
  );
}

function isInside(path: string, folder: string): boolean {
  const fromFolder = relative(folder, path);
  return (
    fromFolder === '' ||
    (!fromFolder.startsWith(`..${sep}`) && fromFolder !== '..' && !isAbsolute(fromFolder))
  );
}
