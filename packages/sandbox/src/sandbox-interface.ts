// The sandbox as its callers see it: its status, the commands it wraps, and its methods.
import type { SandboxLimitEvents, SandboxLimits } from './resource-limits.js';
import type { SandboxHost } from './sandbox-host.js';
import type { SandboxMode, SandboxNetwork } from './sandbox-options.js';

/** Whether the sandbox is in force, and why not when it is not. */
export interface SandboxStatus {
  active: boolean;
  mode: SandboxMode;
  /** `bubblewrap` when active. */
  mechanism: 'bubblewrap' | 'none';
  /** Why it is not active (unavailable, or mode `off`). */
  reason?: string;
  network: SandboxNetwork;
  /** Where commands may write besides a private /tmp (none in a read-only view). */
  writableRoots: readonly string[];
  /** Set on a {@link Sandbox.readOnlyView}: its commands write nowhere but a private /tmp. */
  readOnly?: boolean;
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
   * The same sandbox with its writable roots bound read-only: its commands write nowhere but a
   * private /tmp (and /dev/shm), so a command judged to only read cannot write whatever it
   * really does — for the calls the permission gate allows only to read (`ToolContext.readOnly`:
   * read-only and plan mode). One per sandbox; its long-lived hosts are its own (their /tmp is
   * not the writable sandbox's). Closing the sandbox closes what they share.
   */
  readOnlyView?(): Sandbox;
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
