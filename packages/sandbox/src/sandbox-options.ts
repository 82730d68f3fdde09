// What a caller asks of a sandbox: its mode, its network, and the options of createSandbox.
import type { HiddenPatterns } from './pattern-paths.js';

/** `auto`: sandbox where available, else run unsandboxed with a warning; `required`: refuse without it; `off`: never. */
export type SandboxMode = 'auto' | 'required' | 'off';

/** What the sandboxed processes may reach: nothing, everything, or only the listed hosts. */
export type SandboxNetwork = 'off' | 'on' | { allowHosts: readonly string[] };

/** Options of {@link createSandbox}. */
export interface SandboxOptions {
  /** [auto] */
  mode?: SandboxMode;
  /** Directories the processes may write (the workspace roots); everything else is read-only. */
  writableRoots: readonly string[];
  /**
   * Directories under `/tmp` or `/run` the processes must still read (those two are replaced by
   * empty, private ones — hiding other programs' files and unix sockets): e.g. a project or its
   * `node_modules` that lives in `/tmp` [none].
   */
  readableRoots?: readonly string[];
  /**
   * Paths hidden from the processes (an empty directory or file in their place); those that do
   * not exist are skipped (looked up per command) [defaultSecretPaths()]. To add to the
   * defaults: `[...defaultSecretPaths(), '/srv/keys']`.
   */
  secretPaths?: readonly string[];
  /**
   * More paths hidden like `secretPaths`, asked for at each command (so they may change during
   * the session): e.g. the paths the user's permission rules deny reading, hidden from commands
   * too — a rule alone sees only the names a command line gives [none].
   */
  hiddenPaths?: () => readonly string[];
  /**
   * Paths hidden by pattern (`*.pem`, `**\/.env`, `/ws/config/*.secret`), asked for at each
   * command: e.g. the patterns of the user's read rules that name no one path
   * (`PermissionPolicy.pathPatternsToHide`) with the policy's own check. Each command, the
   * writable roots (and each pattern's own folder, `/srv/keys` for `/srv/keys/*.pem`) are looked
   * through for what they cover, which is hidden like `secretPaths`; a pattern that matches
   * anywhere is not looked for outside them. More than `patternSearchLimits` folders to look
   * through refuses the command [none].
   */
  hiddenPatterns?: () => HiddenPatterns | undefined;
  /**
   * Paths inside the writable roots kept read-only, asked for at each command (so they may
   * change during the session): e.g. the paths the user's permission rules deny writing — a rule
   * alone sees only the names a command line gives. Those that do not exist are skipped [none].
   */
  readOnlyPaths?: () => readonly string[];
  /**
   * Paths inside the writable roots kept read-only by pattern, asked for at each command, looked
   * for as `hiddenPatterns` are: e.g. the patterns of the write rules (`Edit(**\/*.lock)`). Only
   * files that exist when a command starts can be kept; a new one it makes is its own [none].
   */
  readOnlyPatterns?: () => HiddenPatterns | undefined;
  /**
   * Also hide `.env*` files (`.env`, `.env.local`, `.envrc`, …) in the home directory and in every
   * directory above a writable root — those inside a root are the project's own [true].
   */
  hideEnvironmentFiles?: boolean;
  /**
   * Keep every repository in the writable roots read-only [true]: each root's `.git`, and those
   * nested below it (found once, when the sandbox is created, within `repositorySearchLimits`;
   * `node_modules` is not searched) — `.git` directories and files, bare repositories, and the
   * git directories a `.git` file or link points to inside the roots. A command that may write
   * there can make the user's own git, run later outside the sandbox (a shell prompt runs `git
   * status` in every directory it shows), run anything: `core.fsmonitor` in `.git/config`, a hook,
   * or a `.git/commondir` that points git at a configuration of the command's making. Reading
   * git (status, log, diff) still works; committing in the sandbox does not (asked outside it).
   */
  protectGitDirectories?: boolean;
  /**
   * Keep the user's startup files that lie strictly inside a writable root (the home as the
   * workspace, `~/.config` as a dotfiles repository) read-only (`homeStartupFiles`: `.bashrc`, `.profile`, `.zshrc`, `.config/fish`, `.gitconfig`,
   * `.ssh/config`, `.npmrc`, `~/.local/bin`, …): what is written there runs with the user's next
   * shell, git or login [true].
   */
  protectStartupFiles?: boolean;
  /**
   * Keep what other programs on the user's machine run later without asking read-only at the top
   * of each writable root (`workspaceAutoRunFiles`): editors' folders (`.vscode` — tasks.json
   * `runOn: folderOpen`, an interpreter or formatter in settings.json —, `.idea`, `.zed`), a dev
   * container's (`.devcontainer`, `.devcontainer.json`: `initializeCommand` runs on the host),
   * Claude Code's `.claude` hooks, git hook managers' (`.husky`, `.pre-commit-config.yaml`,
   * lefthook's) and a hooks directory `core.hooksPath` puts in the workspace. Those that must not
   * be created either get an empty directory in their place while the sandbox is open (git does
   * not list it; removed by `close()`, or at exit, when still empty) [true].
   */
  protectAutoRunFiles?: boolean;
  /**
   * Unix sockets the processes may connect to (absolute paths; bound in even from under the
   * private `/tmp` and `/run`). Without any, creating a Unix-domain socket fails (EPERM). The
   * kernel filter sees a socket's family, not the path it connects to: listing one socket lifts
   * the block as a whole, so every socket the processes can see becomes reachable too [none].
   */
  allowUnixSockets?: readonly string[];
  /** [off] */
  network?: SandboxNetwork;
  /**
   * Processes and threads the commands may run at once, together (all of a long-lived sandbox's
   * commands share it): a fork bomb stops there instead of taking the machine's last process id
   * from everything else, this program included. Counted by the kernel per sandbox: a cgroup's
   * `pids.max` where one can be made (see `cgroups`), and RLIMIT_NPROC set inside its user
   * namespace for all but root (whom the kernel exempts from it); `Infinity` lifts it [4096].
   */
  maxProcesses?: number;
  /**
   * Bytes of memory (and swap) the commands may use at once, together — files they write to the
   * in-memory `/tmp` and `/dev/shm` included: past it the kernel kills the largest process, and
   * the result says so. Needs a cgroup (see `cgroups`); where none can be made (`auto`), each
   * process's private memory is held to it alone (RLIMIT_DATA, at least 1 GiB: Node needs ~640
   * MiB to start). `Infinity` lifts it [half of the memory this process may use: the machine's,
   * or its cgroup's limit when lower].
   */
  maxMemoryBytes?: number;
  /**
   * Bytes one file may grow to (RLIMIT_FSIZE, root included: raising it needs a capability the
   * sandbox drops): a write past it fails with EFBIG and SIGXFSZ ends the writer ("File size limit
   * exceeded"), so one runaway file (`yes > out`, a 100 GB `dd`, an endless log) cannot fill the
   * disk or the in-memory `/tmp`. Many files together are not bounded (no quota). `Infinity` lifts
   * it [half of the space free on the first writable root's file system when the sandbox is made,
   * at least 1 GiB].
   */
  maxFileBytes?: number;
  /**
   * `auto`: each command (each long-lived sandbox) gets a cgroup of its own holding
   * `maxProcesses` and `maxMemoryBytes`, where this process may make one (cgroup v2 in a
   * delegated subtree or as root, cgroup v1 as root); where it cannot, `status.limitations` says
   * what is left unbounded. `off`: no cgroup; RLIMIT_NPROC only, memory unbounded [auto].
   */
  cgroups?: 'auto' | 'off';
  /** The bubblewrap binary [`bwrap` on PATH]. */
  bwrapPath?: string;
  /** Told once when `auto` falls back to no sandbox [process.emitWarning]. */
  onWarning?: (message: string) => void;
}
