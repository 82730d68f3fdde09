import { ToolError } from '@agent/core';

/** `Error.code` of a Node system error, if any. */
export function errorCode(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** Plain words for the file-system error codes a file tool may meet. */
const errorExplanations: Readonly<Record<string, string>> = {
  ELOOP: 'too many levels of symbolic links (a symlink loop?)',
  ENAMETOOLONG: 'the path, or one of its names, is too long',
  EACCES: 'permission denied by the file system',
  EPERM: 'operation not permitted by the file system',
  ENOENT: 'no such file or directory',
  ENOTDIR: 'a component of the path is not a directory',
  EISDIR: 'it is a directory',
  EEXIST: 'it already exists',
  EROFS: 'the file system is read-only',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'the disk quota is exceeded',
  EFBIG: 'the file is too large',
  EMFILE: 'too many open files in this process',
  ENFILE: 'too many open files in the system',
  EIO: 'an input/output error',
  EBUSY: 'the file or device is busy',
  ETXTBSY: 'the file is a running executable',
  EXDEV: 'it is on another file system',
};

/**
 * A readable `ToolError` for a failed file-system operation, naming the path and what was being
 * done (`Cannot read a.txt: permission denied by the file system (EACCES)`). A `ToolError` is
 * returned as it is; the original error is kept as `cause`.
 */
export function fileSystemError(
  error: unknown,
  action: string,
  shown: string,
  toolName?: string,
): ToolError {
  if (ToolError.isInstance(error)) return error;
  const code = errorCode(error);
  const explanation =
    code !== undefined && Object.hasOwn(errorExplanations, code)
      ? errorExplanations[code]
      : undefined;
  const reason =
    explanation !== undefined
      ? `${explanation} (${code})`
      : error instanceof Error
        ? error.message
        : String(error);
  return new ToolError(`Cannot ${action} ${shown}: ${reason}`, {
    cause: error,
    ...(toolName === undefined ? {} : { toolName }),
  });
}
