import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { type AllowListProxy, startAllowListProxy } from './allow-list-proxy.js';
import {
  ancestorIdentity,
  assertRootsUnmoved,
  directoriesAbove,
  identities,
  outermostRoots,
} from './bound-paths.js';
import {
  type Bubblewrap,
  filterFileFor,
  type Invocation,
  mountArguments,
  nestingProblem,
  proxyPort,
  proxySingleStage,
  proxyStages,
  singleStage,
  withProcessLimit,
} from './bubblewrap-command.js';
import { bubblewrapFeatures, unavailable } from './bubblewrap-probe.js';
import { explainFailure } from './explain-failure.js';
import { gitEntryPaths, watchRepositories } from './git-repositories.js';
import { launchRoots } from './launch-roots.js';
import { type HiddenPatterns, type LinkedFile, PatternPaths } from './pattern-paths.js';
import {
  type ResourceLimits,
  resourceLimits,
  type SandboxLimitEvents,
  type SandboxLimits,
} from './resource-limits.js';
import { createSandboxHost, type SandboxHost } from './sandbox-host.js';
import { seccompFilterDirectory } from './seccomp-file.js';
import {
  defaultSecretPaths,
  environmentFilePaths,
  isInside,
  type SecretMask,
  secretMasks,
} from './secret-paths.js';
import { startupFilesToProtect } from './startup-files.js';
import { trustedProgram } from './trusted-program.js';

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
   * the result says so. Needs a cgroup (see `cgroups`); `Infinity` lifts it [half of the memory
   * this process may use: the machine's, or its cgroup's limit when lower].
   */
  maxMemoryBytes?: number;
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

/** Whether the sandbox is in force, and why not when it is not. */
export interface SandboxStatus {
  active: boolean;
  mode: SandboxMode;
  /** `bubblewrap` when active. */
  mechanism: 'bubblewrap' | 'none';
  /** Why it is not active (unavailable, or mode `off`). */
  reason?: string;
  network: SandboxNetwork;
  writableRoots: readonly string[];
  /**
   * `blocked`: no Unix-domain socket can be created (socket pairs can); `allowed`: they can
   * (`allowUnixSockets`, or the allow-listed network where bwrap cannot nest); `open`: no filter
   * could be loaded here (see `limitations`).
   */
  unixSockets: 'blocked' | 'allowed' | 'open';
  /** The secret paths hidden from the next command (those that exist now; looked up on each read). */
  readonly hiddenPaths: readonly string[];
  /** What the sandbox cannot enforce on this machine, each with the reason [none]. */
  limitations: readonly string[];
  /** What bounds the commands' processes and memory, and how. */
  limits: SandboxLimits;
}

/**
 * A command as {@link Sandbox.wrap} returns it: spawn it, and once it has exited call `finish`
 * where there is one.
 */
export interface WrappedCommand extends SandboxCommand {
  /**
   * Ends what is left of the command in its cgroup, removes the cgroup, and says which limit it
   * ran into (for {@link Sandbox.explainLimits}). Present when a cgroup bounds the command; one
   * never called is removed once empty, at `close()` or at exit.
   */
  finish?(): Promise<SandboxLimitEvents>;
}

/** A command to start, before or after wrapping. */
export interface SandboxCommand {
  file: string;
  args: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
}

/** An OS sandbox for the processes a tool starts. */
export interface Sandbox {
  readonly status: SandboxStatus;
  /** One line for tool descriptions and banners: `sandboxed (bubblewrap): …` or `NOT sandboxed: …`. */
  describe(): string;
  /**
   * The command to spawn instead of `command` (unchanged when the sandbox is not active).
   * Rejects when its cgroup cannot be made: the command must not run unbounded.
   */
  wrap(command: SandboxCommand): Promise<WrappedCommand>;
  /** A note for a failed command whose output shows the sandbox blocked it, else undefined. */
  explainFailure(output: string): string | undefined;
  /**
   * A note for a command that ran into a limit (out of memory, a refused fork) by its cgroup's
   * counters — from {@link WrappedCommand.finish} or a host command's exit — else undefined.
   */
  explainLimits(events: SandboxLimitEvents): string | undefined;
  /**
   * A long-lived sandbox for one session: one small helper inside it forks each command, so a
   * command costs a fork and exec instead of a new sandbox. Undefined when the sandbox is not
   * active. Each call makes a new one (never share one between sessions); close it with the session.
   */
  createHost?(): SandboxHost | undefined;
  /**
   * What appeared since the sandbox was created or the last call that the user's own programs run
   * later, outside the sandbox: a repository in a writable root (its hooks and config run with
   * the user's next git command there), a startup file in a home inside one. A command could make
   * them (a name cannot be refused), so call this after each command and tell the user. From now
   * on they are read-only like the others. Empty when the sandbox is not active.
   */
  checkPlanted?(): string[];
  /**
   * Why the last {@link checkPlanted} could not read everything commands changed (they made more
   * directories than `repositorySearchLimits` allow — which a command can do on purpose, to hide
   * a repository among them), else undefined. The next call goes on where it stopped. Tell the
   * user: a repository there may not be listed yet.
   */
  plantedCheckIncomplete?(): string | undefined;
  /** Stops the network proxy, if one runs, and removes what is left of the commands' cgroups. */
  close(): Promise<void>;
}

const brand = Symbol.for('agent.error.SandboxUnavailableError');

/** The sandbox is `required` but cannot run here. */
export class SandboxUnavailableError extends Error {
  readonly [brand] = true;
  constructor(message: string) {
    super(message);
    this.name = 'SandboxUnavailableError';
  }

  /** Works across duplicated installs. */
  static isInstance(value: unknown): value is SandboxUnavailableError {
    return value !== null && typeof value === 'object' && brand in value;
  }
}

/**
 * Whether bubblewrap can actually run here (it may be installed yet refused by the kernel):
 * runs `bwrap … true` once per binary and caches the answer. Undefined when it works, else why not.
 */
export function bubblewrapProblem(bwrapPath = 'bwrap'): string | undefined {
  const found = trustedProgram(bwrapPath, { searchPath: process.env.PATH, untrustedRoots: [] });
  return 'problem' in found ? notInstalled(found.problem) : bubblewrapFeatures(found.path).problem;
}

/** What to tell the user when no bubblewrap this process may trust was found. */
function notInstalled(problem: string): string {
  return `bubblewrap is not installed (${problem}; apt-get install bubblewrap)`;
}

/**
 * Creates a sandbox. With `required` and no working bubblewrap it throws
 * {@link SandboxUnavailableError}; with `auto` it reports the fallback through `onWarning` once,
 * as it does (in either mode) anything the sandbox cannot enforce here.
 */
export function createSandbox(options: SandboxOptions): Sandbox {
  const mode = options.mode ?? 'auto';
  if (!['auto', 'required', 'off'].includes(mode)) {
    throw new TypeError(`sandbox mode must be auto, required or off, got ${String(mode)}`);
  }
  const allowUnixSockets = [...(options.allowUnixSockets ?? [])];
  for (const socket of allowUnixSockets) {
    if (typeof socket !== 'string' || !path.isAbsolute(socket)) {
      throw new TypeError(
        `sandbox allowUnixSockets: expected absolute paths, got ${JSON.stringify(socket)}`,
      );
    }
  }
  const network = options.network ?? 'off';
  const writableRoots = options.writableRoots.map((root) => realPathOf(root));
  // What is bound writable: a root inside another is writable through it, and bound again it
  // would be a mount target a command could swap for a link (see outermostRoots).
  const boundRoots = outermostRoots(writableRoots);
  const readableRoots = (options.readableRoots ?? []).map((root) => realPathOf(root));
  // Found once, by real path, where no command can put one of its own (see trustedProgram).
  const bwrapFound =
    mode === 'off'
      ? undefined
      : trustedProgram(options.bwrapPath ?? 'bwrap', {
          searchPath: process.env.PATH,
          untrustedRoots: writableRoots,
        });
  const features =
    bwrapFound === undefined
      ? undefined
      : 'problem' in bwrapFound
        ? unavailable(notInstalled(bwrapFound.problem))
        : bubblewrapFeatures(bwrapFound.path);
  const bwrapPath = bwrapFound !== undefined && 'path' in bwrapFound ? bwrapFound.path : 'bwrap';
  const problem = features === undefined ? 'the sandbox is off' : features.problem;
  if (mode === 'required' && problem !== undefined) {
    throw new SandboxUnavailableError(`The sandbox is required but cannot run: ${problem}`);
  }
  const warn =
    options.onWarning ??
    ((message: string) => process.emitWarning(message, { code: 'AGENT_SANDBOX_UNAVAILABLE' }));
  if (mode === 'auto' && problem !== undefined) {
    warn(`Commands run WITHOUT an OS sandbox: ${problem}`);
  }
  const bubblewrap: Bubblewrap | undefined =
    features === undefined || problem !== undefined ? undefined : { path: bwrapPath, features };

  const limits: ResourceLimits = resourceLimits({
    ...(options.maxProcesses === undefined ? {} : { maxProcesses: options.maxProcesses }),
    ...(options.maxMemoryBytes === undefined ? {} : { maxMemoryBytes: options.maxMemoryBytes }),
    ...(options.cgroups === undefined ? {} : { cgroups: options.cgroups }),
    active: bubblewrap !== undefined,
  });
  const processLimit = limits.processRlimit;
  const limitations = [...(bubblewrap?.features.limitations ?? []), ...limits.limitations];
  // The allow-listed network nests two bwraps so socat (which needs a Unix socket) stays out of
  // the filter's reach; where the kernel refuses that, socat and the command share one filter.
  let nested = false;
  if (bubblewrap !== undefined && typeof network === 'object' && bubblewrap.features.seccomp) {
    const nesting = nestingProblem(bubblewrap);
    nested = nesting === undefined;
    if (!nested && allowUnixSockets.length === 0) {
      limitations.push(
        `with allowHosts, Unix sockets are not blocked: bubblewrap cannot nest here (${nesting}), and socat needs one to reach the proxy`,
      );
    }
  }
  // socat runs in the outer stage, which sees every secret: found once, where no command can
  // put one of its own (as bubblewrap is). Not found: the relay fails and nothing is reachable.
  const socatFound =
    nested && typeof network === 'object'
      ? trustedProgram('socat', { searchPath: process.env.PATH, untrustedRoots: writableRoots })
      : undefined;
  const socatPath = socatFound !== undefined && 'path' in socatFound ? socatFound.path : undefined;
  if (socatFound !== undefined && 'problem' in socatFound) {
    limitations.push(
      `with allowHosts, nothing can be reached: no socat to relay to the proxy (${socatFound.problem})`,
    );
  }
  const unixSocketsAllowed =
    allowUnixSockets.length > 0 || (typeof network === 'object' && !nested);
  const unixSockets: SandboxStatus['unixSockets'] =
    bubblewrap?.features.seccomp === undefined
      ? 'open'
      : unixSocketsAllowed
        ? 'allowed'
        : 'blocked';

  const home = realPathOf(os.homedir());
  // The directories above the workspace are read for .env files once, here. Which candidates
  // exist is looked up per command (a stat each): a credential, or a per-user directory, made
  // after the sandbox was created is hidden too.
  const candidates = [
    ...(options.secretPaths ?? defaultSecretPaths(home)),
    ...(options.hideEnvironmentFiles === false || bubblewrap === undefined
      ? []
      : environmentFilePaths({ roots: writableRoots, home })),
  ];
  const protectGit = options.protectGitDirectories !== false && bubblewrap !== undefined;
  const protectStartup = options.protectStartupFiles !== false && bubblewrap !== undefined;
  // Repositories nested in the workspace are searched for once, here (bounded); the roots' own
  // `.git` is looked up per command, so a repository made at a root since is protected too.
  const repositories = protectGit ? watchRepositories(writableRoots) : undefined;
  if (repositories?.incomplete !== undefined) {
    limitations.push(
      `the search for git repositories inside the writable roots ${repositories.incomplete}: a .git below where it stopped is writable`,
    );
  }
  const keptReadOnlyByCaller = options.readOnlyPaths;
  const keptReadOnlyByPattern = options.readOnlyPatterns;
  // One look through the folders per command for each use; their listings are shared.
  const patternPaths = new PatternPaths();
  const currentReadOnly = (): string[] =>
    outermost([
      ...(repositories === undefined ? [] : currentGitPaths(writableRoots, repositories.paths())),
      ...(protectStartup ? startupFilesToProtect(home, writableRoots) : []),
      ...(keptReadOnlyByCaller === undefined || bubblewrap === undefined
        ? []
        : existingInside(keptReadOnlyByCaller(), writableRoots)),
      ...(keptReadOnlyByPattern === undefined || bubblewrap === undefined
        ? []
        : existingInside(
            patternPaths.find({
              roots: writableRoots,
              hidden: keptReadOnlyByPattern(),
              linked: [],
            }),
            writableRoots,
          )),
    ]);
  // Each startup file protected, with who the directories above it were: one at the same path
  // under a directory moved in since is the command's (see ancestorIdentity).
  const startupFilesNow = () =>
    new Map(
      (protectStartup ? startupFilesToProtect(home, writableRoots) : []).map((file) => [
        file,
        ancestorIdentity(file, writableRoots),
      ]),
    );
  let startupFilesSeen = startupFilesNow();
  const hiddenByCaller = options.hiddenPaths;
  const hiddenByPattern = options.hiddenPatterns;
  const currentMasks = (): SecretMask[] => {
    if (bubblewrap === undefined) return [];
    const named = hiddenByCaller === undefined ? candidates : [...candidates, ...hiddenByCaller()];
    // What a pattern covers, then the other names (hard links) of every hidden file: a bind
    // mount hides one name only, and `cat backup-of-key` reads the same bytes.
    const hidden = hiddenByPattern?.();
    const covered =
      hidden === undefined
        ? named
        : [...named, ...patternPaths.find({ roots: writableRoots, hidden, linked: [] })];
    const masks = secretMasks(covered, writableRoots);
    const linked = linkedFiles(masks);
    if (linked.length === 0) return masks;
    const names = patternPaths.find({ roots: writableRoots, hidden: undefined, linked });
    return secretMasks([...covered, ...names], writableRoots);
  };
  const status: SandboxStatus = {
    active: bubblewrap !== undefined,
    mode,
    mechanism: bubblewrap !== undefined ? 'bubblewrap' : 'none',
    network,
    writableRoots,
    unixSockets,
    get hiddenPaths() {
      return currentMasks().map((mask) => mask.path);
    },
    limitations,
    limits: limits.status,
    ...(problem === undefined ? {} : { reason: problem }),
  };
  if (bubblewrap !== undefined && limitations.length > 0) {
    warn(`The OS sandbox cannot enforce everything here: ${limitations.join('; ')}`);
  }
  let proxy: Promise<AllowListProxy> | undefined;
  let proxySocket: string | undefined;

  /** What every command's environment gets in the sandbox: TMPDIR, and the proxy's variables. */
  const environmentOf = (base: NodeJS.ProcessEnv): NodeJS.ProcessEnv => {
    const env: NodeJS.ProcessEnv = { ...base, TMPDIR: '/tmp' };
    if (typeof network === 'object') {
      const url = `http://127.0.0.1:${proxyPort}`;
      for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy', 'ALL_PROXY']) {
        env[name] = url;
      }
      env.NO_PROXY = '';
      env.no_proxy = '';
    }
    return env;
  };

  /** The mounts for commands launching `programs`, secrets looked up now, `extraReadable` shown too. */
  const mountsFor = (
    programs: readonly SandboxCommand[],
    extraReadable: readonly string[],
  ): { args: string[]; readOnlyInside: string[]; pinned: string[] } => {
    assertRootsUnmoved(boundRoots);
    const masks = currentMasks();
    // The program launched (and a script's interpreter) when it lives where the sandbox puts
    // an empty directory, e.g. a toolchain under a temporary home: shown read-only.
    const launched = programs
      .flatMap((program) => launchRoots(program))
      .filter((root) => !writableRoots.some((writable) => isInsideRoot(writable, root)));
    const readOnlyInside = currentReadOnly();
    // What holds a protected or hidden path cannot be renamed: a mount point cannot (see pinned).
    const pinned = directoriesAbove(
      [...readOnlyInside, ...masks.map((mask) => mask.path)],
      boundRoots,
    );
    // This package's own files, where a writable root holds them (see MountPlan.ownPaths).
    const ownPaths = [
      ...(bubblewrap?.features.seccomp === undefined ? [] : [seccompFilterDirectory()]),
      ...(proxySocket === undefined ? [] : [path.dirname(proxySocket)]),
      ...extraReadable,
    ];
    const args = mountArguments({
      readableRoots: [...readableRoots, ...new Set(launched), ...extraReadable],
      writableRoots: boundRoots,
      readOnlyInside,
      masks,
      allowUnixSockets,
      pinned,
      ownPaths,
    });
    return { args, readOnlyInside, pinned };
  };

  /** bwrap (through its stages for the allow-listed network) around `command`. */
  const launchInvocation = (
    bubblewrap: Bubblewrap,
    mounts: readonly string[],
    pinned: readonly string[],
    cwd: string,
    command: readonly string[],
  ): Invocation => {
    const inner = processLimit === undefined ? command : withProcessLimit(command, processLimit);
    const filterFile = filterFileFor(bubblewrap, unixSocketsAllowed);
    if (typeof network === 'object') {
      if (proxySocket === undefined) throw new Error('the allow-list proxy is not started');
      const stage = { bubblewrap, mounts, pinned, proxySocket, cwd, command: inner };
      return nested && filterFile !== undefined
        ? proxyStages({
            ...stage,
            filterFile,
            writableRoots: boundRoots,
            ...(socatPath === undefined ? {} : { socatPath }),
          })
        : proxySingleStage({ ...stage, filterFile });
    }
    return singleStage({ bubblewrap, mounts, pinned, network, filterFile, cwd, command: inner });
  };

  const startProxy = async (): Promise<void> => {
    if (typeof network !== 'object') return;
    proxy ??= startAllowListProxy(network.allowHosts);
    proxySocket = (await proxy).socketPath;
  };

  const invocationFor = async (
    bubblewrap: Bubblewrap,
    command: SandboxCommand,
    extraReadable: readonly string[],
  ): Promise<Invocation> => {
    await startProxy();
    const { args: mounts, pinned } = mountsFor([command], extraReadable);
    return launchInvocation(bubblewrap, mounts, pinned, command.cwd, [
      command.file,
      ...command.args,
    ]);
  };

  return {
    status,
    describe() {
      if (!status.active) return `NOT sandboxed (${status.reason ?? 'unavailable'})`;
      const net =
        network === 'off'
          ? 'no network'
          : network === 'on'
            ? 'network on'
            : `network only to ${network.allowHosts.join(', ')}`;
      const sockets =
        unixSockets === 'blocked'
          ? 'no Unix sockets'
          : allowUnixSockets.length > 0
            ? `Unix sockets allowed (${allowUnixSockets.join(', ')})`
            : `Unix sockets NOT blocked (${limitations.find((entry) => /Unix sockets/.test(entry)) ?? 'no seccomp filter'})`;
      const bounds = limits.describe();
      return `sandboxed (bubblewrap): writes only in ${writableRoots.join(', ')} and a private /tmp; ${net}; ${sockets}${bounds === '' ? '' : `; ${bounds}`}`;
    },
    async wrap(command) {
      if (bubblewrap === undefined) return command;
      const invocation = await invocationFor(bubblewrap, command, []);
      const wrapped = { cwd: command.cwd, env: environmentOf(command.env) };
      const cgroups = limits.cgroups;
      if (cgroups === undefined) return { ...invocation, ...wrapped };
      cgroups.releaseIdle();
      const cgroup = cgroups.create();
      return {
        ...cgroup.enter(invocation),
        ...wrapped,
        finish: async () => {
          const events = cgroup.events();
          await cgroup.release();
          return events;
        },
      };
    },
    createHost() {
      if (bubblewrap === undefined) return undefined;
      // Started lazily, on the first command: the proxy (if any) is up by then.
      return createSandboxHost({
        environment: environmentOf,
        launch: async (command, { pipeDirectory, helperFile }) => {
          await startProxy();
          const helper = { ...command, file: process.execPath, args: [] };
          const {
            args: mounts,
            readOnlyInside,
            pinned,
          } = mountsFor([command, helper], [pipeDirectory]);
          const cwd = writableRoots.find((root) => fs.existsSync(root)) ?? '/';
          return {
            ...launchInvocation(bubblewrap, mounts, pinned, cwd, [process.execPath, helperFile]),
            cwd,
            // The helper and the sandbox's init can be read by the commands (/proc/N/environ):
            // they get nothing but PATH. Each command gets its own environment.
            env: { PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin' },
            // A protected path replaced at the same path (a directory above it moved away, the
            // mount with it) is another file: the running sandbox does not cover it, a new one will.
            key: JSON.stringify([mounts, identities(readOnlyInside)]),
            // One cgroup for the whole sandbox: its commands share the limits.
            ...(limits.cgroups === undefined ? {} : { cgroup: limits.cgroups.create }),
          };
        },
      });
    },
    checkPlanted() {
      const planted = repositories?.check() ?? [];
      const now = startupFilesNow();
      for (const [file, above] of now) if (startupFilesSeen.get(file) !== above) planted.push(file);
      startupFilesSeen = now;
      return planted;
    },
    plantedCheckIncomplete() {
      const why = repositories?.checkIncomplete;
      return why === undefined
        ? undefined
        : `the search for repositories made by commands ${why}; the next check goes on from there`;
    },
    explainFailure(output) {
      if (!status.active) return undefined;
      return explainFailure(output, {
        writableRoots,
        network,
        hiddenPaths: status.hiddenPaths,
        unixSockets,
        startupFiles: protectStartup ? startupFilesToProtect(home, writableRoots) : [],
        ...(limits.status.maxProcesses === undefined
          ? {}
          : { maxProcesses: limits.status.maxProcesses }),
      });
    },
    explainLimits(events) {
      return status.active ? limits.explain(events) : undefined;
    },
    async close() {
      if (proxy !== undefined) await (await proxy).close();
      await limits.cgroups?.releaseAll();
    },
  };
}

function isInsideRoot(root: string, entry: string): boolean {
  const relative = path.relative(root, entry);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

/**
 * What keeps the repositories of `roots` as they are, for the next command: each root's `.git`
 * (directory, file or link; looked up now) with what it points to inside the roots, and the
 * nested ones found when the sandbox was created that still exist — each path once, none inside
 * another.
 */
/** The real paths of `paths` that exist and lie inside a writable root (the rest are read-only already). */
function existingInside(paths: readonly string[], roots: readonly string[]): string[] {
  const found: string[] = [];
  for (const entry of paths) {
    if (fs.lstatSync(entry, { throwIfNoEntry: false }) === undefined) continue;
    const real = realPathOf(entry);
    if (roots.some((root) => isInside(root, real) && real !== root)) found.push(real);
  }
  return found;
}

/** `paths` without duplicates and without those inside another of them, shortest first. */
function outermost(paths: readonly string[]): string[] {
  const kept: string[] = [];
  for (const candidate of [...new Set(paths)].sort((a, b) => a.length - b.length)) {
    if (!kept.some((outer) => isInside(outer, candidate))) kept.push(candidate);
  }
  return kept;
}

function currentGitPaths(roots: readonly string[], nested: readonly string[]): string[] {
  const paths = [
    ...roots.flatMap((root) => gitEntryPaths(path.join(root, '.git'), roots)),
    ...nested.filter((entry) => fs.lstatSync(entry, { throwIfNoEntry: false }) !== undefined),
  ];
  const kept: string[] = [];
  for (const candidate of [...new Set(paths)].sort((a, b) => a.length - b.length)) {
    if (!kept.some((outer) => isInside(outer, candidate))) kept.push(candidate);
  }
  return kept;
}

function realPathOf(entry: string): string {
  try {
    return fs.realpathSync(entry);
  } catch {
    return path.resolve(entry);
  }
}

/** The hidden files with more than one name (hard links), by identity. */
function linkedFiles(masks: readonly SecretMask[]): LinkedFile[] {
  const linked: LinkedFile[] = [];
  for (const mask of masks) {
    if (mask.directory) continue;
    const stat = fs.lstatSync(mask.path, { throwIfNoEntry: false });
    if (stat?.isFile() && stat.nlink > 1) linked.push({ dev: stat.dev, ino: stat.ino });
  }
  return linked;
}
