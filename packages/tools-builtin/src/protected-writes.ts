import * as os from 'node:os';
import * as path from 'node:path';
import type { PermissionSubjectsResult } from '@agent/core';
import {
  currentHooksDirectories,
  homeStartupFiles,
  includedConfigFiles,
  lefthookExtendedFiles,
  missingIncludedConfigFiles,
  workspaceAutoRunFiles,
} from '@agent/sandbox';
import { isPathInside } from './path-inside.js';
import type { FileSystemOperations } from './workspace.js';

/**
 * Places in a workspace the user's own programs run from later, outside any sandbox: a
 * repository's git directory (a `core.fsmonitor` added to `.git/config`, a hook, a `commondir`
 * run with the user's next `git status` — a shell prompt runs one), what editors and tools run
 * without asking at the workspace's top (`.vscode`, `.idea`, `.devcontainer`, `.claude`, git hooks
 * in the tree: `workspaceAutoRunFiles`) and, when the workspace holds
 * the home directory, its startup files (`.bashrc`, `.gitconfig`, `~/.local/bin`…). bash's sandbox
 * keeps them read-only; the file tools write from the agent's own process, so a write there
 * needs the `full-access` tier instead of `workspace-write` (asked in `workspace-write` mode).
 */
export interface ProtectedWrites {
  /** A repository's git directory (`.git`, a bare repository) [true]. */
  git?: boolean;
  /** The home directory's startup files ({@link homeStartupFiles}) [true]. */
  startupFiles?: boolean;
  /**
   * What editors and tools run later without asking, at a root's top (`workspaceAutoRunFiles`
   * of `@agent/sandbox`: `.vscode`, `.idea`, `.devcontainer`, …), and a hooks directory
   * `core.hooksPath` puts in the workspace [true].
   */
  autoRunFiles?: boolean;
  /** The home directory [os.homedir()]. */
  home?: string;
}

async function exists(fsOps: FileSystemOperations, entry: string): Promise<boolean> {
  try {
    await fsOps.lstat(entry);
    return true;
  } catch {
    return false;
  }
}

/** Whether `directory` looks like a git directory to git (bare: HEAD beside objects, refs or commondir). */
async function isGitDirectory(fsOps: FileSystemOperations, directory: string): Promise<boolean> {
  if (!(await exists(fsOps, path.join(directory, 'HEAD')))) return false;
  for (const marker of ['objects', 'refs', 'commondir'])
    if (await exists(fsOps, path.join(directory, marker))) return true;
  return false;
}

/**
 * Why writing `real` (a real path inside one of `roots`) would plant something run later outside
 * the sandbox, or undefined when it would not.
 */
export async function protectedWriteReason(
  real: string,
  roots: readonly string[],
  options: ProtectedWrites & { fs: FileSystemOperations },
): Promise<string | undefined> {
  const root = roots.find((candidate) => isPathInside(candidate, real));
  if (root === undefined) return undefined;
  if (options.git !== false) {
    // The path itself and each folder above it, up to the root: `.git` by name (a folder, or the
    // `gitdir:` file of a worktree or submodule), or a folder git takes for a git directory.
    for (let entry = real; isPathInside(root, entry); entry = path.dirname(entry)) {
      if (path.basename(entry) === '.git' || (await isGitDirectory(options.fs, entry)))
        return `${entry} is a repository's git directory: git runs what is planted there (a hook, core.fsmonitor in its config) with your next git command, outside the sandbox`;
      if (entry === root) break;
    }
    // A file a repository's config includes (`include.path = ../shared.gitconfig`) runs commands
    // as the config does: the repositories of the folders above it, up to the root.
    for (
      let folder = path.dirname(real);
      isPathInside(root, folder);
      folder = path.dirname(folder)
    ) {
      const gitDirectory = path.join(folder, '.git');
      // One not made yet too: git skips a missing include, and runs it once made.
      if (
        includedConfigFiles(gitDirectory, roots).includes(real) ||
        missingIncludedConfigFiles(gitDirectory, roots).includes(real)
      )
        return `${real} is included by ${path.join(gitDirectory, 'config')}: git runs what is planted there (core.fsmonitor, an alias) with your next git command, outside the sandbox`;
      if (folder === root) break;
    }
  }
  if (options.autoRunFiles !== false) {
    const relative = path.relative(root, real);
    const named = workspaceAutoRunFiles.find(
      (file) => relative === file.name || relative.startsWith(`${file.name}${path.sep}`),
    );
    if (named !== undefined)
      return `${path.join(root, named.name)} is run later without asking by ${named.runBy.split(':')[0]}, outside the sandbox`;
    // What a lefthook configuration there extends, by where lefthook looks for it.
    const extended = lefthookExtendedFiles(root).find((file) => path.resolve(file) === real);
    if (extended !== undefined)
      return `${extended} is extended by the lefthook configuration: git runs its jobs with your next commit, outside the sandbox`;
    // Looked up per call (a stat of git's configuration files): a core.hooksPath set meanwhile counts.
    const hooks = currentHooksDirectories(root).find((directory) => isPathInside(directory, real));
    if (hooks !== undefined)
      return `${hooks} holds git hooks (core.hooksPath): git runs them with your next commit or checkout, outside the sandbox`;
  }
  if (options.startupFiles !== false) {
    const home = options.home ?? os.homedir();
    const relative = path.relative(home, real);
    // By segments: `~/..x` is inside the home, whatever its name starts with.
    if (relative !== '' && isPathInside(home, real)) {
      const startup = homeStartupFiles.find(
        (name) => relative === name || relative.startsWith(`${name}${path.sep}`),
      );
      if (startup !== undefined)
        return `${path.join(home, startup)} is a startup file of your home: what is written there runs in your next shell or login, outside the sandbox`;
    }
  }
  return undefined;
}

/**
 * A file tool's permission subjects for writing `real`: the path, with the `full-access` tier
 * when {@link protectedWriteReason} finds one (the reason is said in the question's subject list
 * by the path itself).
 */
export async function writeSubjects(
  real: string,
  roots: readonly string[],
  options: ProtectedWrites & { fs: FileSystemOperations },
): Promise<PermissionSubjectsResult> {
  const reason = await protectedWriteReason(real, roots, options);
  return reason === undefined ? [real] : { subjects: [real], tier: 'full-access' };
}
