import * as fs from 'node:fs';
import * as fsPromises from 'node:fs/promises';
import * as path from 'node:path';
import { type PermissionSubjectsResult, ToolError } from '@agent/core';
import type { AtomicWriteGuard } from './atomic-write.js';
import { fileSystemError } from './fs-errors.js';
import { insideAny, isPathInside } from './path-inside.js';
import { type ProtectedWrites, protectedWriteReason, writeSubjects } from './protected-writes.js';
import { shownPath } from './shown-path.js';

/**
 * The file-system operations the file tools use, a subset of `node:fs/promises`. Inject a
 * different implementation (e.g. to count calls or simulate failures); defaults to Node's.
 */
export type FileSystemOperations = Pick<
  typeof fsPromises,
  | 'lstat'
  | 'stat'
  | 'realpath'
  | 'readlink'
  | 'readdir'
  | 'open'
  | 'mkdir'
  | 'rename'
  | 'unlink'
  | 'chmod'
  | 'readFile'
  | 'writeFile'
>;

/** Node's own `fs/promises`, the default {@link FileSystemOperations}. */
export const nodeFileSystem: FileSystemOperations = fsPromises;

const maxSymlinkHops = 40;

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/**
 * The real path of `target` (absolute): symlinks followed, including dangling ones and the
 * parents of a file that does not exist yet, so a path can be confined before it is created.
 */
export async function resolveRealPath(
  target: string,
  fsOps: FileSystemOperations = nodeFileSystem,
  hops = 0,
): Promise<string> {
  if (hops > maxSymlinkHops) throw new ToolError(`Too many levels of symbolic links: ${target}`);
  try {
    return await fsOps.realpath(target);
  } catch (error) {
    if (!isMissing(error)) throw error;
  }
  let linkTarget: string | undefined;
  try {
    const info = await fsOps.lstat(target);
    if (info.isSymbolicLink()) linkTarget = await fsOps.readlink(target);
  } catch (error) {
    if (!isMissing(error)) throw error;
  }
  const parent = path.dirname(target);
  if (linkTarget !== undefined) {
    // A dangling link: where a write would land is where the link points.
    return resolveRealPath(path.resolve(parent, linkTarget), fsOps, hops + 1);
  }
  if (parent === target) return target;
  const realParent = await resolveRealPath(parent, fsOps, hops + 1);
  return path.join(realParent, path.basename(target));
}

/** Synchronous {@link resolveRealPath} with Node's `fs`, for `resourceKey` (which must be sync). */
export function resolveRealPathSync(target: string, hops = 0): string {
  if (hops > maxSymlinkHops) return target;
  try {
    return fs.realpathSync(target);
  } catch (error) {
    if (!isMissing(error)) return target;
  }
  let linkTarget: string | undefined;
  try {
    const info = fs.lstatSync(target);
    if (info.isSymbolicLink()) linkTarget = fs.readlinkSync(target);
  } catch {
    // Missing: resolve through the parent below.
  }
  const parent = path.dirname(target);
  if (linkTarget !== undefined)
    return resolveRealPathSync(path.resolve(parent, linkTarget), hops + 1);
  if (parent === target) return target;
  return path.join(resolveRealPathSync(parent, hops + 1), path.basename(target));
}

/** Options of a {@link Workspace}. */
export interface WorkspaceOptions {
  /** Directory relative paths are resolved against. */
  cwd: string;
  /** Directories the file tools may touch [`[cwd]`]. Symlinks in them are resolved once, lazily. */
  roots?: readonly string[];
  /** Extra directories read-only tools (read_file, list_files, glob, search) may read, e.g. where bash saves large output. */
  readOnlyRoots?: readonly string[];
  /**
   * Directories no file tool may read, write or list even inside a root, except the read-only
   * roots inside them: e.g. the per-user directory holding every session's spill files, of which
   * only this session's own is a read-only root [none].
   */
  hiddenRoots?: readonly string[];
  /** File-system operations [node:fs/promises]. */
  fs?: FileSystemOperations;
  /**
   * Writes that need the `full-access` tier: into a repository's git directory, into the home's
   * startup files [both; see protected-writes.ts].
   */
  protectedWrites?: ProtectedWrites;
}

/** Whether a path is resolved to be read or written: writes are confined to `roots` only. */
export type PathAccess = 'read' | 'write';

/**
 * The directories file tools are confined to. Every path is resolved to its real path
 * (symlinks followed) and must lie inside one of the roots' real paths.
 */
export class Workspace {
  /** Directory relative paths are resolved against (absolute). */
  readonly cwd: string;
  /** The configured roots, absolute but not yet resolved. */
  readonly roots: readonly string[];
  /** Extra directories read-only tools may read, absolute. */
  readonly readOnlyRoots: readonly string[];
  /** Directories no file tool may touch or list (read-only roots inside them excepted), absolute. */
  readonly hiddenRoots: readonly string[];
  /** File-system operations in use. */
  readonly fs: FileSystemOperations;
  #realRoots: Promise<string[]> | undefined;
  #realReadRoots: Promise<string[]> | undefined;
  #realRootsSync: string[] | undefined;
  #realCwd: string | undefined;
  #realHidden:
    | { inHidden: (real: string) => boolean; inExcepted: (real: string) => boolean }
    | undefined;
  readonly #protectedWrites: ProtectedWrites;
  /** The real path each call's arguments were judged to write (a protected path is written only then). */
  readonly #judged = new WeakMap<object, string>();

  constructor(options: WorkspaceOptions) {
    this.#protectedWrites = options.protectedWrites ?? {};
    this.cwd = path.resolve(options.cwd);
    this.roots = (options.roots ?? [this.cwd]).map((root) => path.resolve(this.cwd, root));
    this.readOnlyRoots = (options.readOnlyRoots ?? []).map((root) => path.resolve(this.cwd, root));
    this.hiddenRoots = (options.hiddenRoots ?? []).map((root) => path.resolve(this.cwd, root));
    this.fs = options.fs ?? nodeFileSystem;
  }

  /** The real paths of the roots (for `write`) or of the roots and read-only roots (for `read`). */
  realRoots(access: PathAccess = 'write'): Promise<string[]> {
    this.#realRoots ??= Promise.all(this.roots.map((root) => resolveRealPath(root, this.fs)));
    if (access === 'write' || this.readOnlyRoots.length === 0) return this.#realRoots;
    this.#realReadRoots ??= Promise.all([
      this.#realRoots,
      ...this.readOnlyRoots.map(async (root) => [await resolveRealPath(root, this.fs)]),
    ]).then((lists) => lists.flat());
    return this.#realReadRoots;
  }

  /** The absolute path `input` names (not resolved through symlinks); `~` is not expanded ({@link resolve} refuses it). */
  absolute(input: string): string {
    return path.resolve(this.cwd, input);
  }

  /**
   * A writing tool's permission subjects for `input`: its real path, with the `full-access` tier
   * when the write would plant something run later outside the sandbox (a repository's git
   * directory, a startup file of the home). `args` (the call's arguments) remembers the path judged.
   */
  async writeSubjects(
    input: string,
    toolName: string,
    args: object,
  ): Promise<PermissionSubjectsResult> {
    const real = await this.resolve(input, 'write', toolName);
    this.#judged.set(args, real);
    return writeSubjects(real, await this.realRoots('write'), {
      ...this.#protectedWrites,
      fs: this.fs,
    });
  }

  /**
   * Before a write to `real`: throws when it is a protected place (see {@link writeSubjects}) the
   * permission gate judged another path for — a link swapped in between the question and the
   * write (a background command can make one) must not carry the write into `.git`.
   */
  async checkProtectedWrite(real: string, toolName: string, args: object): Promise<void> {
    const judged = this.#judged.get(args);
    if (judged === undefined || judged === real) return;
    const reason = await protectedWriteReason(real, await this.realRoots('write'), {
      ...this.#protectedWrites,
      fs: this.fs,
    });
    if (reason !== undefined)
      throw new ToolError(
        `Permission denied: the path now leads elsewhere than when it was judged: ${reason}`,
        {
          kind: 'denied',
          toolName,
        },
      );
  }

  /**
   * The real path of `input`, or a `denied` ToolError when it lies outside every root
   * (for `read`, read-only roots count too). `toolName` is used in the error.
   */
  async resolve(input: string, access: PathAccess, toolName?: string): Promise<string> {
    if (input.includes('\0')) {
      throw new ToolError('Path contains a NUL byte', {
        kind: 'invalid-args',
        ...(toolName === undefined ? {} : { toolName }),
      });
    }
    if (input === '~' || input.startsWith('~/')) {
      // Resolved literally it would name a directory called `~` in cwd: never what was meant.
      throw new ToolError(
        `Path ${input} starts with ~, which is not expanded: give it relative to the working directory (${this.cwd}) or absolute`,
        { kind: 'invalid-args', ...(toolName === undefined ? {} : { toolName }) },
      );
    }
    let real: string;
    try {
      real = await resolveRealPath(this.absolute(input), this.fs);
    } catch (error) {
      // ELOOP, ENAMETOOLONG, EACCES…: a readable error naming the path, not a raw Node one.
      throw fileSystemError(error, 'resolve the path', input, toolName);
    }
    let roots: string[];
    try {
      roots = await this.realRoots(access);
    } catch (error) {
      throw fileSystemError(error, 'resolve the workspace roots of', input, toolName);
    }
    if (!roots.some((root) => isPathInside(root, real))) {
      throw new ToolError(
        `Permission denied: ${input} resolves to ${real}, outside the workspace (${roots.join(', ')})`,
        { kind: 'denied', ...(toolName === undefined ? {} : { toolName }) },
      );
    }
    if (this.isHidden(real)) throw this.#hiddenError(input, real, toolName);
    return real;
  }

  /**
   * True when `real` (already resolved) lies in a hidden root and not in a read-only root inside
   * it: no file tool may touch it, and walks leave it out. Roots resolved synchronously, once.
   */
  isHidden(real: string): boolean {
    if (this.hiddenRoots.length === 0) return false;
    // Asked of every entry a walk meets: the roots are compared by prefix (insideAny), not by
    // path.relative per root.
    this.#realHidden ??= {
      inHidden: insideAny(this.hiddenRoots.map((root) => resolveRealPathSync(root))),
      inExcepted: insideAny(this.readOnlyRoots.map((root) => resolveRealPathSync(root))),
    };
    const { inHidden, inExcepted } = this.#realHidden;
    return inHidden(real) && !inExcepted(real);
  }

  #hiddenError(input: string, real: string, toolName: string | undefined): ToolError {
    return new ToolError(
      `Permission denied: ${input} resolves to ${real}, in a directory the file tools may not touch (credentials, the agent's own state, or another session's private files)`,
      { kind: 'denied', ...(toolName === undefined ? {} : { toolName }) },
    );
  }

  /**
   * Opens the already resolved `real` for reading without trusting that nothing changed since
   * {@link resolve}: the last component is not followed (`O_NOFOLLOW`), a FIFO cannot block the
   * open (`O_NONBLOCK`), and on Linux the opened file's own path (`/proc/self/fd/N`) is checked
   * against the roots again, so a symlink swapped into the path after the check is refused
   * (`denied`). Callers still check the file type (`stat`).
   */
  async openForRead(
    real: string,
    access: PathAccess,
    toolName?: string,
  ): Promise<fsPromises.FileHandle> {
    const flags =
      fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0) | (fs.constants.O_NONBLOCK ?? 0);
    let handle: fsPromises.FileHandle;
    try {
      handle = await this.fs.open(real, flags);
    } catch (error) {
      if ((error as NodeJS.ErrnoException | undefined)?.code === 'ELOOP')
        throw this.#raced(real, toolName);
      throw error;
    }
    try {
      await this.verifyOpened(handle.fd, access, toolName);
    } catch (error) {
      await handle.close();
      throw error;
    }
    return handle;
  }

  /**
   * Linux: throws `denied` when the file open as `fd` no longer lies inside the roots (a path
   * component was swapped for a symlink between check and open). A no-op without `/proc`.
   */
  async verifyOpened(fd: number, access: PathAccess, toolName?: string): Promise<void> {
    let actual: string;
    try {
      actual = await this.fs.readlink(`/proc/self/fd/${fd}`);
    } catch {
      return;
    }
    if (!path.isAbsolute(actual)) return; // `pipe:[…]`, `anon_inode:…`: not a path
    actual = actual.replace(/ \(deleted\)$/, '');
    const roots = await this.realRoots(access);
    if (!roots.some((root) => isPathInside(root, actual)) || this.isHidden(actual))
      throw this.#raced(actual, toolName);
  }

  /**
   * The checks of an atomic write of `real` (already judged and checked): the temp file it opens
   * must lie inside the roots and, when it landed in another folder than `real`'s (a parent
   * swapped for a link after the checks — a background command can make one), not in a protected
   * place (see {@link writeSubjects}); a temp file replaced before its rename is refused.
   */
  writeGuard(real: string, toolName: string): AtomicWriteGuard {
    return {
      verify: async (fd) => {
        await this.verifyOpened(fd, 'write', toolName);
        let actual: string;
        try {
          actual = (await this.fs.readlink(`/proc/self/fd/${fd}`)).replace(/ \(deleted\)$/, '');
        } catch {
          return;
        }
        const landed = path.join(path.dirname(actual), path.basename(real));
        if (!path.isAbsolute(actual) || landed === real) return;
        const reason = await protectedWriteReason(landed, await this.realRoots('write'), {
          ...this.#protectedWrites,
          fs: this.fs,
        });
        if (reason !== undefined)
          throw new ToolError(`Permission denied: ${real} changed while being written: ${reason}`, {
            kind: 'denied',
            toolName,
          });
      },
      raced: (where) => this.#raced(where, toolName),
    };
  }

  #raced(where: string, toolName: string | undefined): ToolError {
    return new ToolError(
      `Permission denied: ${where} changed while being opened (a symlink now leads outside the workspace)`,
      { kind: 'denied', ...(toolName === undefined ? {} : { toolName }) },
    );
  }

  /** Synchronous best-effort real path of `input` (for resource keys); never throws. */
  resolveSync(input: string): string {
    return resolveRealPathSync(this.absolute(input));
  }

  /** True when `real` (already resolved) lies inside a root; uses roots resolved synchronously. */
  containsSync(real: string): boolean {
    this.#realRootsSync ??= this.roots.map((root) => resolveRealPathSync(root));
    return this.#realRootsSync.some((root) => isPathInside(root, real));
  }

  /**
   * `real` relative to cwd when inside it, else absolute: how tools show paths to the model. A
   * path with a newline, a control or a bidirectional character is shown quoted (see shownPath).
   */
  display(real: string): string {
    this.#realCwd ??= resolveRealPathSync(this.cwd);
    if (!isPathInside(this.#realCwd, real)) return shownPath(real);
    return shownPath(path.relative(this.#realCwd, real) || '.');
  }
}
