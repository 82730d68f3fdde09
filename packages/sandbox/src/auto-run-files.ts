// Files in a workspace that programs on the user's machine run later without asking — an
// editor's tasks and settings, a dev container's commands, another agent's hooks, git's hooks
// where `core.hooksPath` puts them — kept read-only inside the sandbox, also before they exist.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { credentialFreeEnvironment } from '@agent/core/credentials';
import { lefthookExtendedFiles, lefthookExtensions } from './lefthook-extends.js';
import {
  directoryIdentity,
  identityOf,
  PlaceholderRecords,
  removeIfSame,
} from './placeholder-records.js';
import { isInside, realPathOrResolved } from './real-paths.js';
import { existingTargetsInside, homeStartupFiles } from './startup-files.js';
import { trustedProgram } from './trusted-program.js';

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
  {
    name: '.cursor',
    evenNew: true,
    runBy:
      "Cursor: hooks.json's commands (sessionStart, beforeShellExecution…) around its agent, and mcp.json's servers, in its next session in the folder",
  },
  {
    name: '.opencode',
    evenNew: true,
    runBy:
      'opencode: the plugins in .opencode/plugins and the local MCP servers of .opencode/opencode.json(c), at its next start in the folder',
  },
  {
    name: '.gemini',
    evenNew: true,
    runBy:
      "Gemini CLI: settings.json's MCP servers and hooks, at the start of its next session in the folder",
  },
  {
    name: 'opencode.json',
    evenNew: false,
    runBy: "opencode: its local MCP servers' commands and plugins, at its next start in the folder",
  },
  { name: 'opencode.jsonc', evenNew: false, runBy: 'opencode (as opencode.json)' },
  {
    name: '.agent',
    evenNew: false,
    runBy:
      "this toolkit's CLI: settings.json's deny rules, which a command emptied for the next session, and the hooks, MCP servers and skills it runs there",
  },
  // Other agents' project folders, protected once they exist (the user uses that agent here): a
  // placeholder for each would leave more empty folders in every workspace while a session runs.
  {
    name: '.kiro',
    evenNew: false,
    runBy:
      "Kiro: .kiro/hooks' agent hooks (shell commands on file events) and .kiro/settings/mcp.json's servers",
  },
  { name: '.roo', evenNew: false, runBy: "Roo Code: .roo/mcp.json's servers" },
  { name: '.continue', evenNew: false, runBy: 'Continue: the servers of .continue/mcpServers' },
  {
    name: '.amazonq',
    evenNew: false,
    runBy: "Amazon Q Developer: the servers of .amazonq/mcp.json and its agents' files",
  },
  {
    name: '.codex',
    evenNew: false,
    runBy: "Codex CLI: .codex/config.toml's MCP servers, in a project it trusts",
  },
  { name: '.husky', evenNew: false, runBy: 'git, through husky: its hook scripts' },
  {
    name: '.pre-commit-config.yaml',
    evenNew: false,
    runBy: "git, through pre-commit's hook: `repo: local` hooks' entries",
  },
  ...lefthookFiles(),
];

/**
 * Every file lefthook reads its configuration from — the main one and the `-local` one merged
 * over it, with or without a leading dot, in each format, and in `.config/` — and the folders
 * of the scripts its configuration names (`.lefthook/<hook>/…`, `.lefthook-local/<hook>/…`): its
 * hook in `.git/hooks` runs them all at the next commit. Only `lefthook.yml`, `.lefthook.yml` and
 * `lefthook-local.yml` were kept: a project's `lefthook.yaml`, `lefthook.json`,
 * `.config/lefthook.yml` or a script in `.lefthook/pre-commit/` was a command's to rewrite.
 */
function lefthookFiles(): AutoRunFile[] {
  const runBy = "git, through lefthook's hook: its commands and scripts";
  const extensions = ['.yml', '.yaml', '.toml', '.json', '.jsonc'];
  const names = ['lefthook', 'lefthook-local'].flatMap((base) => [
    ...extensions.flatMap((extension) => [`${base}${extension}`, `.${base}${extension}`]),
    ...extensions.map((extension) => `.config/${base}${extension}`),
  ]);
  return [...names, '.lefthook', '.lefthook-local'].map((name) => ({
    name,
    evenNew: false,
    runBy,
  }));
}

/**
 * Where lefthook is configured at `root` (a main configuration exists), the `-local` files it
 * would merge over it that a command could still make: for each of `lefthook-local`,
 * `.lefthook-local` and `.config/lefthook-local` of which no file exists (the user's own, or a
 * placeholder of another process), every extension. lefthook merges the first it finds of each,
 * so a new one — made by a command — added jobs that ran at the user's next commit. Each gets an
 * empty file (read as no settings; the `.yml` one is found first, so no empty JSON is parsed).
 */
function lefthookLocalPlaceholders(root: string): string[] {
  const exists = (entry: string) => fs.lstatSync(entry, { throwIfNoEntry: false }) !== undefined;
  const main = ['lefthook', '.lefthook', '.config/lefthook'].flatMap((base) =>
    lefthookExtensions.map((extension) => path.join(root, `${base}${extension}`)),
  );
  if (!main.some(exists)) return [];
  return ['lefthook-local', '.lefthook-local', '.config/lefthook-local'].flatMap((base) => {
    const variants = lefthookExtensions.map((extension) => path.join(root, `${base}${extension}`));
    const own = (entry: string) => exists(entry) && !placeholders.has(entry);
    return variants.some(own) ? [] : variants;
  });
}

/**
 * The git hooks directory of `root` when `core.hooksPath` (the repository's configuration or the
 * user's) puts it in the workspace rather than in `.git` — a `.githooks/` folder, husky's
 * `.husky/_` (with `.husky`, whose scripts its hooks run) — else none. Both configurations lie
 * where commands cannot write; a sandbox asks again when either changed (HooksDirectories).
 */
export function hooksDirectories(root: string): string[] {
  // A git found where commands cannot put one: PATH may name a folder of the workspace (an
  // activated `.venv/bin`, `./node_modules/.bin`, `.`), and a `git` a sandboxed command wrote
  // there ran here, outside the sandbox. None found: no hooks folder is known.
  const git = trustedProgram('git', { searchPath: process.env.PATH, untrustedRoots: [root] });
  if (!('path' in git)) return [];
  // Whoever owns the repository (a user's, read by root): rev-parse runs nothing of it.
  const args = ['-c', 'safe.directory=*', '-C', root, 'rev-parse', '--git-path', 'hooks'];
  const result = spawnSync(git.path, args, {
    encoding: 'utf8',
    timeout: 5_000,
    // None of the user's keys: git's environ is readable by any process of the user.
    env: { ...credentialFreeEnvironment(process.env), GIT_TERMINAL_PROMPT: '0' },
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
  /**
   * The home's startup files, where a root is the home and those are protected on their own
   * (`.cursor` is both: the editor's user settings, and Cursor's project hooks): no placeholder
   * there — the startup-file check would report it as planted by a command (it watches for one
   * made), and protects one a command does make from the next command on.
   */
  readonly #startupFiles: ReadonlySet<string>;

  constructor(roots: readonly string[], home?: string) {
    this.#roots = roots;
    this.#startupFiles = new Set(
      home === undefined ? [] : homeStartupFiles.map((relative) => path.join(home, relative)),
    );
    installExitHandler();
    // What a process killed by a signal left behind: no exit handler ran there.
    records.prepare();
    records.sweep();
  }

  /**
   * The real paths to bind read-only for the next command: those that exist, and for each of
   * the `evenNew` ones (and a hooks directory) that does not, an empty directory made in its
   * place — a mount needs a mount point, and one there cannot be created, renamed or removed.
   */
  paths(): string[] {
    const before = placeholders.size;
    for (const root of this.#roots) {
      for (const file of workspaceAutoRunFiles) {
        const entry = path.join(root, file.name);
        if (file.evenNew && !this.#startupFiles.has(entry)) this.#placeholder(entry, root);
      }
    }
    for (const hooks of this.#hooksNow()) {
      const root = this.#roots.find((candidate) => isInside(candidate, hooks));
      if (root !== undefined) this.#placeholder(hooks, root);
    }
    for (const root of this.#roots)
      for (const entry of lefthookLocalPlaceholders(root)) this.#placeholder(entry, root, 'file');
    if (placeholders.size !== before) recordPlaceholders();
    return this.current();
  }

  /**
   * Keeps each of `entries` (real paths inside the roots that do not exist yet: files a
   * repository's configuration includes) from being made, with an empty file in its place (the
   * next mount's point, as the `evenNew` files' empty folders are; removed with them — git reads
   * an empty file as no settings, and stops at a folder). The real paths
   * to bind read-only: those that exist now.
   */
  keepMissing(entries: readonly string[]): string[] {
    const before = placeholders.size;
    for (const entry of entries) {
      const root = this.#roots.find(
        (candidate) => isInside(candidate, entry) && candidate !== entry,
      );
      if (root !== undefined) this.#placeholder(entry, root, 'file');
    }
    if (placeholders.size !== before) recordPlaceholders();
    return existingTargetsInside(entries, this.#roots);
  }

  /** Those of them that exist now, by real path (nothing made). */
  current(): string[] {
    const wanted = [
      ...this.#roots.flatMap((root) => {
        const named = workspaceAutoRunFiles.map((file) => path.join(root, file.name));
        // And what lefthook's configurations there extend (read from the files as they are).
        return [...named, ...lefthookExtendedFiles(root)];
      }),
      ...this.#hooksNow(),
    ];
    return existingTargetsInside(wanted, this.#roots);
  }

  /**
   * Gives up the empty directories this one made or uses: each is removed (if still empty and the
   * same) once no other sandbox uses it, of this process or of another one still running — one
   * bound in another's long-lived sandbox would vanish from there too.
   */
  removePlaceholders(): void {
    let changed = false;
    for (const [entry, placeholder] of placeholders) {
      if (!placeholder.users.delete(this) || placeholder.users.size > 0) continue;
      placeholders.delete(entry);
      changed = true;
      const recorded = { path: entry, identity: placeholder.identity };
      if (!records.usedElsewhere(recorded)) removeIfSame(entry, placeholder.identity);
    }
    if (changed) recordPlaceholders();
  }

  /** The hooks directories `core.hooksPath` puts in the roots now. */
  #hooksNow(): string[] {
    return this.#roots.flatMap((root) => currentHooksDirectories(root));
  }

  #placeholder(entry: string, root: string, kind: 'directory' | 'file' = 'directory'): void {
    const existing = fs.lstatSync(entry, { throwIfNoEntry: false });
    if (existing !== undefined) {
      const identity = directoryIdentity(entry);
      // Another sandbox of this process made it: used by this one too.
      const made = placeholders.get(entry);
      if (made !== undefined && made.identity === identity) made.users.add(this);
      // Another process's (running, or killed and not swept yet): used here too, so neither
      // removes it while the other has it bound.
      else if (
        made === undefined &&
        identity !== undefined &&
        records.isPlaceholder({ path: entry, identity })
      )
        placeholders.set(entry, { identity, users: new Set([this]) });
      return;
    }
    // Only where its folder is there (a hooks path whose parent is missing runs nothing either),
    // and is itself (a link on the way, swapped in by a command, would carry the mkdir elsewhere).
    const parent = path.dirname(entry);
    if (fs.statSync(parent, { throwIfNoEntry: false })?.isDirectory() !== true) return;
    if (realPathOrResolved(parent) !== parent) return;
    // Everything below goes through the placeholder opened without following a link: a command
    // running meanwhile can rename a new folder away and put a link in its place, and root's
    // chown by name would then give the link's target (/etc/shadow) to the workspace's owner. A
    // file is made and opened at once (O_EXCL: never through a link).
    let descriptor: number;
    try {
      if (kind === 'file') {
        descriptor = fs.openSync(
          entry,
          fs.constants.O_WRONLY |
            fs.constants.O_CREAT |
            fs.constants.O_EXCL |
            fs.constants.O_NOFOLLOW,
          0o644,
        );
      } else {
        fs.mkdirSync(entry, { mode: 0o755 });
        descriptor = fs.openSync(
          entry,
          fs.constants.O_RDONLY | fs.constants.O_DIRECTORY | fs.constants.O_NOFOLLOW,
        );
      }
    } catch {
      // Not ours to write (a command, the same user, cannot create it either), or swapped already.
      return;
    }
    try {
      // Still the folder at that path (nothing above it swapped since the look).
      if (fs.readlinkSync(`/proc/self/fd/${descriptor}`) !== entry) return;
      // Made by root in a user's workspace: that user's, so an editor can still write there.
      const owner = fs.statSync(root, { throwIfNoEntry: false });
      if (owner !== undefined && process.getuid?.() === 0) {
        try {
          fs.fchownSync(descriptor, owner.uid, owner.gid);
        } catch {
          // Left root's: removed at close all the same.
        }
      }
      const identity = identityOf(fs.fstatSync(descriptor, { bigint: true }));
      placeholders.set(entry, { identity, users: new Set([this]) });
    } finally {
      fs.closeSync(descriptor);
    }
  }
}

/**
 * {@link hooksDirectories} of `root` as git's configuration says now: asked of git again only
 * when a file git reads `core.hooksPath` from changed since the last call (a stat of each), so
 * one set during a session — by the user, or by a command allowed outside the sandbox — counts
 * from the next call on.
 */
export function currentHooksDirectories(root: string): string[] {
  let hooks = hooksByRoot.get(root);
  if (hooks === undefined) {
    hooks = new HooksDirectories(root);
    hooksByRoot.set(root, hooks);
  }
  return hooks.current();
}

/** One root's hooks directories, with the git configuration they were found under. */
class HooksDirectories {
  readonly #root: string;
  #signature: string | undefined;
  #found: string[] = [];

  constructor(root: string) {
    this.#root = root;
  }

  current(): string[] {
    const signature = gitConfigSignature(this.#root);
    if (signature !== this.#signature) {
      this.#signature = signature;
      this.#found = hooksDirectories(this.#root);
    }
    return this.#found;
  }
}

/**
 * What the configuration files git reads for `root` are now (inode, size and change time of
 * each): the repository's `.git` and its config (a linked worktree's too), the user's and the
 * system's. An `include.path` elsewhere is not followed.
 */
function gitConfigSignature(root: string): string {
  const home = os.homedir();
  const xdg = process.env.XDG_CONFIG_HOME;
  const files = [
    path.join(root, '.git'),
    path.join(root, '.git', 'config'),
    path.join(root, '.git', 'config.worktree'),
    process.env.GIT_CONFIG_GLOBAL ?? path.join(home, '.gitconfig'),
    path.join(
      xdg !== undefined && path.isAbsolute(xdg) ? xdg : path.join(home, '.config'),
      'git',
      'config',
    ),
    process.env.GIT_CONFIG_SYSTEM ?? '/etc/gitconfig',
  ];
  // A linked worktree or a separate git directory: `.git` is a file naming it.
  const gitDirectory = linkedGitDirectory(path.join(root, '.git'));
  if (gitDirectory !== undefined) {
    files.push(path.join(gitDirectory, 'config'), path.join(gitDirectory, 'config.worktree'));
    const common = readSmall(path.join(gitDirectory, 'commondir'));
    if (common !== undefined) files.push(path.join(path.resolve(gitDirectory, common), 'config'));
  }
  return files
    .map((file) => {
      const stat = fs.statSync(file, { bigint: true, throwIfNoEntry: false });
      return stat === undefined ? '-' : `${stat.ino}:${stat.size}:${stat.ctimeNs}:${stat.mtimeNs}`;
    })
    .join('|');
}

function linkedGitDirectory(dotGit: string): string | undefined {
  const text = readSmall(dotGit);
  const named = text === undefined ? undefined : /^gitdir: (.+)$/m.exec(text)?.[1];
  return named === undefined ? undefined : path.resolve(path.dirname(dotGit), named);
}

function readSmall(file: string): string | undefined {
  try {
    const stat = fs.statSync(file);
    return stat.isFile() && stat.size < 4096 ? fs.readFileSync(file, 'utf8').trim() : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The empty directories this process made or uses (another process's, adopted), with which
 * sandboxes of this process use each; recorded outside the workspace (placeholder-records.ts)
 * and removed at exit — or, after a SIGKILL, by the next sandbox.
 */
const placeholders = new Map<string, { identity: string; users: Set<AutoRunFiles> }>();
const hooksByRoot = new Map<string, HooksDirectories>();
const records = new PlaceholderRecords();
let exitHandlerInstalled = false;

function recordPlaceholders(): void {
  records.write([...placeholders].map(([entry, { identity }]) => ({ path: entry, identity })));
}

function installExitHandler(): void {
  if (exitHandlerInstalled) return;
  exitHandlerInstalled = true;
  process.once('exit', () => {
    for (const [entry, { identity }] of placeholders) {
      if (!records.usedElsewhere({ path: entry, identity })) removeIfSame(entry, identity);
    }
    placeholders.clear();
    recordPlaceholders();
  });
}
