/**
 * The project a workspace belongs to, as Claude Code and Codex find it: the git root (the nearest
 * folder with a `.git` directory or file, so worktrees and submodules count), else the nearest
 * folder with an `.agent/` folder, else the workspace itself. Settings files, hooks, AGENTS.md,
 * `.mcp.json`, skills and sub-agents are read from there, and workspace trust is judged for it;
 * what the tools may touch stays the workspace the user gave.
 */
import { lstatSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, parse, relative, resolve, sep } from 'node:path';
import { realFolder } from '@agent/workspace-trust';

/** How the project root was found. */
export type ProjectRootKind = 'git' | 'agent-folder' | 'workspace';

/** A workspace's project root (a real path) and how it was found. */
export interface ProjectRoot {
  root: string;
  kind: ProjectRootKind;
  /**
   * Markers above the workspace that were not believed, each with why: another user's `.git` or
   * `.agent` (for a notice).
   */
  ignored?: string[];
}

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Why a marker above the workspace is not believed, or undefined: it, or the folder holding it,
 * belongs to another user (not you, not root). As git's `safe.directory` (CVE-2022-24765): in a
 * shared folder — /tmp, /srv — another user's `/tmp/.git` or `/tmp/.agent` made /tmp the project
 * of every workspace below it, its AGENTS.md the project's instructions, its agents and skills the
 * session's.
 */
function foreignOwner(marker: string): string | undefined {
  const uid = process.getuid?.();
  if (uid === undefined) return undefined;
  for (const path of [marker, dirname(marker)]) {
    let owner: number;
    try {
      owner = lstatSync(path).uid;
    } catch {
      continue;
    }
    if (owner !== uid && owner !== 0) return `${path} belongs to another user (uid ${owner})`;
  }
  return undefined;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** The folder and each of its parents up to the file-system root, nearest first. */
function ancestors(folder: string): string[] {
  const found = [folder];
  for (let current = folder; dirname(current) !== current; current = dirname(current))
    found.push(dirname(current));
  return found;
}

/**
 * Finds the project root of `cwd` (by real path, as git does). The user's own `.agent` folders —
 * `~/.agent` and `$AGENT_HOME` — hold the user's settings, not a project's, so they do not mark one.
 */
export function findProjectRoot(
  cwd: string,
  options: { home?: string; agentHome?: string } = {},
): ProjectRoot {
  const start = realFolder(resolve(cwd));
  const folders = ancestors(start);
  const ignored: string[] = [];
  // A marker in the workspace itself is the folder the user chose; one above it must be theirs.
  const believed = (folder: string, marker: string) => {
    if (folder === start) return true;
    const why = foreignOwner(join(folder, marker));
    if (why !== undefined) ignored.push(`${join(folder, marker)} is not used: ${why}`);
    return why === undefined;
  };
  const found = (root: string, kind: ProjectRootKind): ProjectRoot =>
    ignored.length === 0 ? { root, kind } : { root, kind, ignored };
  const git = folders.find((folder) => exists(join(folder, '.git')) && believed(folder, '.git'));
  if (git !== undefined) return found(git, 'git');
  const userFolders = new Set(
    [join(options.home ?? homedir(), '.agent'), options.agentHome]
      .filter((path): path is string => path !== undefined)
      .map((path) => realFolder(path)),
  );
  const marked = folders.find((folder) => {
    const candidate = join(folder, '.agent');
    return (
      isDirectory(candidate) &&
      !userFolders.has(realFolder(candidate)) &&
      believed(folder, '.agent')
    );
  });
  if (marked !== undefined) return found(marked, 'agent-folder');
  return found(start, 'workspace');
}

/**
 * The folders from `root` down to `cwd`, root first (just `root` when `cwd` is not below it):
 * where AGENTS.md files are looked for.
 */
export function foldersDownTo(root: string, cwd: string): string[] {
  const target = realFolder(resolve(cwd));
  const path = relative(root, target);
  if (path === '' || path === '..' || path.startsWith(`..${sep}`) || resolve(root, path) !== target)
    return [root];
  const folders = [root];
  let current = root;
  for (const part of path.split(sep)) {
    current = join(current, part);
    folders.push(current);
  }
  return folders;
}

/**
 * The line that tells the user where the configuration came from, when that is not the
 * workspace itself (started in a subfolder of a repository); `undefined` otherwise.
 */
export function projectRootNotice(folders: {
  cwd: string;
  projectRoot: string;
}): string | undefined {
  if (realFolder(resolve(folders.cwd)) === folders.projectRoot) return undefined;
  return `project: ${folders.projectRoot} (its settings, hooks, AGENTS.md, .mcp.json, skills and agents apply; tools work in ${resolve(folders.cwd)})`;
}

/**
 * A warning when the workspace is the file-system root or the home directory: the tools are
 * confined to the workspace and bash writes only there, so started by habit in `~` or `/` they
 * reach everything (Claude Code warns about the home directory the same way). `undefined` otherwise.
 */
export function wideWorkspaceNotice(cwd: string, home = homedir()): string | undefined {
  const real = realFolder(resolve(cwd));
  const how = 'Start agent in a project folder (cd into it, or --cwd <dir>)';
  if (real === parse(real).root)
    return `warning: the workspace is ${real}, the whole file system: the file tools reach every file you can read and bash may write wherever you can. ${how}.`;
  if (real === realFolder(home))
    return `warning: the workspace is your home directory (${real}): the file tools reach all of it but your credential stores and the agent's own state, and bash may write anywhere in it but .git and your startup files. ${how}.`;
  return undefined;
}
