/** A command as the shell would start it, before or after a sandbox wrapped it. */
export interface HookCommand {
  file: string;
  args: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
}

/** What a hook command's cgroup counted: out-of-memory kills, refused forks. */
export interface HookLimitEvents {
  memoryKills: number;
  refusedForks: number;
}

/** A hook command as the sandbox wrapped it. */
export interface WrappedHookCommand extends HookCommand {
  /** Called once it exited: removes its cgroup and says which limit it ran into (when one bounds it). */
  finish?(): Promise<HookLimitEvents>;
}

/**
 * The OS sandbox hook commands run in: a `Sandbox` of `@agent/sandbox` fits as it is (`status`,
 * `wrap`, and where present `explainLimits` and `checkPlanted`). Its containment is whatever it was created with; for hooks,
 * `network: 'on'` keeps formatters, linters and notifiers that fetch working.
 */
export interface HookSandbox {
  /** `active: false` — it cannot run here (`reason` says why): sandboxed hooks are withheld, never run outside it. */
  readonly status: { readonly active: boolean; readonly reason?: string };
  /** The command to spawn instead of `command`. */
  wrap(command: HookCommand): Promise<WrappedHookCommand>;
  /** A note for a hook that ran into the sandbox's memory or process limit, else undefined. */
  explainLimits?(events: HookLimitEvents): string | undefined;
  /**
   * What appeared since the last call that the user's git or shell runs later, outside the
   * sandbox (a repository, a home startup file): a hook (a formatter running the project's code)
   * could plant one. Asked after the sandboxed hooks of each event ran; told through `onWarning`.
   */
  checkPlanted?(): string[];
}
