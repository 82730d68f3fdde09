// Files in a workspace that programs on the user's machine run later without asking — an
// editor's tasks and settings, a dev container's commands, another agent's hooks, git's hooks
// where `core.hooksPath` puts them — kept read-only inside the sandbox, also before they exist.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isInside } from './real-paths.js';
import { existingTargetsInside } from './startup-files.js';

/** One entry of {@link workspaceAutoRunFiles}. */
export interface AutoRunFile {
  /** Its name at the top of a writable root. */
  name: string;
  /**
   * Whether a command may not create it either: an empty directory is made in its place when it
   * does not exist (git does not list one) and bound read-only, then removed when the sandbox
   * closes. False where a new one runs nothing until the user sets something up that the sandbox
   * already protects (a hook in `.git/hooks`).
   */
  evenNew: boolean;
  /** Who runs what is written there. */
  runBy: string;
}

/**
 * What is kept read-only at the top of each writable root, and why (`protectAutoRunFiles`).
 * Left writable on purpose: `.envrc` (direnv asks again whenever it changes), `.gitattributes`
 * (a filter or diff driver runs only when git's configuration defines it, and that is
 * protected), `.gitmodules` (git refuses `update = !command` from it), `.editorconfig` (no
 * commands), `.exrc`/`.nvim.lua` (Neovim asks through its trust list; Vim runs them only with
 * `set exrc`, the user's own choice), `.dir-locals.el` (Emacs asks for unsafe values), mise's
 * configuration (mise asks to trust it), and build files and `package.json` scripts (the
 * project's code, run when the user runs it).
 */
export const workspaceAutoRunFiles: readonly AutoRunFile[] = [
  {
    name: '.vscode',
    evenNew: true,
    runBy:
      'VS Code and its forks: tasks.json with `runOn: folderOpen`, settings.json naming an interpreter, formatter, linter or terminal shell, launch.json',
  },
  {
    name: '.idea',
    evenNew: true,
    runBy:
      'JetBrains IDEs: run configurations and their before-launch steps, file watchers, startup tasks',
  },
  {
    name: '.devcontainer',
    evenNew: true,
    runBy:
      'Dev Containers: initializeCommand on the host, postCreateCommand and the rest in the container',
  },
  { name: '.devcontainer.json', evenNew: true, runBy: 'Dev Containers (as .devcontainer/)' },
  {
    name: '.zed',
    evenNew: true,
    runBy: 'Zed: settings.json naming a language server binary, tasks.json',
  },
  {
    name: '.claude',
    evenNew: true,
    runBy: "Claude Code: settings.json's hooks, at the start of its next session in the folder",
  },
  { name: '.husky', evenNew: false, runBy: 'git, through husky: its hook scripts' },
  {
    name: '.pre-commit-config.yaml',
    evenNew: false,
    runBy: "git, through pre-commit's hook: `repo: local` hooks' entries",
  },
  { name: 'lefthook.yml', evenNew: false, runBy: "git, through lefthook's hook: its commands" },
  { name: '.lefthook.yml', evenNew: false, runBy: "git, through lefthook's hook: its commands" },
  {
    name: 'lefthook-local.yml',
    evenNew: false,
    runBy: "git, through lefthook's hook: its commands",
  },
];

/**
 * The git hooks directory of `root` when `core.hooksPath` (the repository's configuration or the
 * user's) puts it in the workspace rather than in `.git` — a `.githooks/` folder, husky's
 * `.husky/_` (with `.husky`, whose scripts its hooks run) — else none. Asked of git once, when the
 * sandbox is made: both configurations lie where commands cannot write.
 */
export function hooksDirectories(root: string): string[] {
  // Whoever owns the repository (a user's, read by root): rev-parse runs nothing of it.
  const args = ['-c', 'safe.directory=*', '-C', root, 'rev-parse', '--git-path', 'hooks'];
  const result = spawnSync('git', args, {
    encoding: 'utf8',
    timeout: 5_000,
    env: { ...process.env, GIT_TERMINAL_PROMPT: '0' },
  });
  const printed = result.status === 0 ? result.stdout.trim() : '';
  if (printed === '') return [];
  const hooks = path.resolve(root, printed);
  if (hooks.split(path.sep).includes('.git') || !isInside(root, hooks) || hooks === root) return [];
  // husky 9: `.husky/_/<hook>` runs `.husky/<hook>`.
  return path.basename(hooks) === '_' ? [hooks, path.dirname(hooks)] : [hooks];
}

/**
 * Keeps the auto-run files of some writable roots: which to bind read-only for the next command,
 * and the empty directories made for those that do not exist yet.
 */
export class AutoRunFiles {
  readonly #roots: readonly string[];
  readonly #hooks: readonly string[];

  constructor(roots: readonly string[]) {
    this.#roots = roots;
    this.#hooks = roots.flatMap((root) => hooksDirectories(root));
    installExitHandler();
  }

  /**
   * The real paths to bind read-only for the next command: those that exist, and for each of
   * the `evenNew` ones (and a hooks directory) that does not, an empty directory made in its
   * place — a mount needs a mount point, and one there cannot be created, renamed or removed.
   */
  paths(): string[] {
    for (const root of this.#roots) {
      for (const file of workspaceAutoRunFiles)
        if (file.evenNew) this.#placeholder(path.join(root, file.name), root);
    }
    for (const hooks of this.#hooks) {
      const root = this.#roots.find((candidate) => isInside(candidate, hooks));
      if (root !== undefined) this.#placeholder(hooks, root);
    }
    return this.current();
  }

  /** Those of them that exist now, by real path (nothing made). */
  current(): string[] {
    const wanted = [
      ...this.#roots.flatMap((root) =>
        workspaceAutoRunFiles.map((file) => path.join(root, file.name)),
      ),
      ...this.#hooks,
    ];
    return existingTargetsInside(wanted, this.#roots);
  }

  /**
   * Gives up the empty directories this one made or uses: each is removed (if still empty and the
   * same) once no other sandbox of this process uses it — one bound in another's long-lived
   * sandbox would vanish from there too.
   */
  removePlaceholders(): void {
    for (const [entry, placeholder] of placeholders) {
      if (!placeholder.users.delete(this) || placeholder.users.size > 0) continue;
      placeholders.delete(entry);
      removeIfSame(entry, placeholder.identity);
    }
  }

  #placeholder(entry: string, root: string): void {
    const existing = fs.lstatSync(entry, { throwIfNoEntry: false });
    if (existing !== undefined) {
      // Another sandbox of this process made it: used by this one too.
      const made = placeholders.get(entry);
      if (made?.identity === `${existing.dev}:${existing.ino}`) made.users.add(this);
      return;
    }
    // Only where its folder is there (a hooks path whose parent is missing runs nothing either).
    const parent = fs.statSync(path.dirname(entry), { throwIfNoEntry: false });
    if (parent?.isDirectory() !== true) return;
    try {
      fs.mkdirSync(entry, { mode: 0o755 });
    } catch {
      return; // not ours to write: a command (the same user) cannot create it either
    }
    // Made by root in a user's workspace: that user's, so an editor can still write there.
    const owner = fs.statSync(root, { throwIfNoEntry: false });
    if (owner !== undefined && process.getuid?.() === 0) {
      try {
        fs.chownSync(entry, owner.uid, owner.gid);
      } catch {
        // Left root's: removed at close all the same.
      }
    }
    const stat = fs.lstatSync(entry);
    placeholders.set(entry, { identity: `${stat.dev}:${stat.ino}`, users: new Set([this]) });
  }
}

/** Removes the empty directory `entry` if it is still the one made (device and inode). */
function removeIfSame(entry: string, identity: string): void {
  const stat = fs.lstatSync(entry, { throwIfNoEntry: false });
  if (stat === undefined || `${stat.dev}:${stat.ino}` !== identity) return;
  try {
    fs.rmdirSync(entry);
  } catch {
    // Not empty: the user (or a tool outside the sandbox) put something there; it stays.
  }
}

/** The empty directories this process made, with who uses each; those left are removed at exit. */
const placeholders = new Map<string, { identity: string; users: Set<AutoRunFiles> }>();
let exitHandlerInstalled = false;

function installExitHandler(): void {
  if (exitHandlerInstalled) return;
  exitHandlerInstalled = true;
  process.once('exit', () => {
    for (const [entry, { identity }] of placeholders) removeIfSame(entry, identity);
  });
}
