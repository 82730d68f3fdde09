// The bash tool's options, and the settings they resolve to for every run.
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { credentialFreeEnvironment } from '@agent/core';
import { createSandbox, type Sandbox, type SandboxMode, type SandboxOptions } from '@agent/sandbox';
import type { BackgroundTasks } from './background-tasks.js';
import type { ProcessOperations } from './process-group.js';
import { SpillDirectory } from './spill-dir.js';

/** Options of {@link createBashTool}. */
export interface BashToolOptions {
  /** Working directory of every command. */
  cwd: string;
  /** Shell run as `shell -c command` [/bin/bash]. */
  shell?: string;
  /**
   * Environment of every command [process.env], without the variables that hold credentials
   * (API keys, tokens, passwords: `credentialFreeEnvironment` of `@agent/core`) unless `passEnv`
   * names them.
   */
  env?: NodeJS.ProcessEnv;
  /** Names of credential variables commands get anyway (exact names, e.g. `GITHUB_TOKEN`) [none]. */
  passEnv?: readonly string[];
  /** Time limit in ms when the call gives none [120000]. */
  defaultTimeoutMs?: number;
  /** Largest time limit in ms a call may ask for [600000]. */
  maxTimeoutMs?: number;
  /** Wait in ms between SIGTERM and SIGKILL when ending a process group [2000]. */
  killGraceMs?: number;
  /** Bytes of each stream kept from its start [15000]. */
  headBytes?: number;
  /** Bytes of each stream kept from its end [15000]. */
  tailBytes?: number;
  /**
   * A directory of the caller's where output that does not fit is saved in full (kept when the
   * session ends) [the session's private {@link SpillDirectory} of `backgroundTasks`].
   */
  spillDir?: string;
  /**
   * Largest spill file, in bytes, per stream (stdout and stderr each) [1 GiB = 1073741824]. Past
   * it the file keeps only the first `maxSpillBytes` bytes (the model is told); output is still
   * counted and its tail kept. 0: never write a spill file.
   */
  maxSpillBytes?: number;
  /**
   * Spill files (`bash-*.log`) in `spillDir` (or, by default, left directly in the per-user
   * directory by older versions) older than this, in ms, are deleted when the tool is created
   * (best effort, in the background) [86400000 = 24 h]. `Infinity`: never delete.
   */
  spillMaxAgeMs?: number;
  /** Minimum interval in ms between streamed `onUpdate` partial results [250]. */
  updateIntervalMs?: number;
  /** Process operations (spawn, kill) [node:child_process, process.kill]. */
  process?: Partial<ProcessOperations>;
  /**
   * The session: its background commands (shared with the `bash_output` tool) and its private
   * spill directory [a new one; its spill directory is removed when the process exits].
   */
  backgroundTasks?: BackgroundTasks;
  /**
   * The OS sandbox every command runs in: a `Sandbox` from `@agent/sandbox`, a mode, or sandbox
   * options [`auto`: bubblewrap where it works, writes only in `cwd` (or the given
   * `writableRoots`) and a private /tmp, secrets hidden, no network; else unsandboxed with a warning].
   */
  sandbox?: Sandbox | SandboxMode | Partial<SandboxOptions>;
  /**
   * Run sandboxed commands in one long-lived sandbox per session (`backgroundTasks`) and
   * sandbox: a small helper inside it forks each command, so a call costs a fork rather than a
   * new sandbox. Its private `/tmp` then lasts for the session. Where that sandbox cannot start,
   * each command gets its own [true, unless `process` is given: its `spawn` then starts each command].
   */
  reuseSandbox?: boolean;
}

/** Resolved bash options shared by foreground and background runs. */
export interface BashRunSettings {
  cwd: string;
  shell: string;
  /** The commands' environment, credentials already withheld (read at each start). */
  readonly env: NodeJS.ProcessEnv;
  killGraceMs: number;
  headBytes: number;
  tailBytes: number;
  /** Where output that does not fit is saved. */
  spill: SpillDirectory;
  maxSpillBytes: number;
  process: ProcessOperations;
  sandbox: Sandbox;
  /** Whether sandboxed commands run in the session's long-lived sandbox ({@link BashToolOptions.reuseSandbox}). */
  reuseSandbox: boolean;
}

/** Default {@link BashToolOptions.maxSpillBytes}: 1 GiB per stream. */
export const defaultMaxSpillBytes = 1024 * 1024 * 1024;

/** Default {@link BashToolOptions.spillMaxAgeMs}: 24 hours. */
export const defaultSpillMaxAgeMs = 24 * 60 * 60 * 1000;

/**
 * The sandbox of a bash tool from its options (see {@link BashToolOptions.sandbox}); with `spill`,
 * sandboxed commands can read that session's spill files (a `Sandbox` given ready-made is used
 * as it is: build it with `spill.sandboxOptions()`).
 */
export function sandboxOf(
  sandbox: BashToolOptions['sandbox'],
  cwd: string,
  spill?: SpillDirectory,
): Sandbox {
  if (sandbox !== undefined && typeof sandbox === 'object' && 'wrap' in sandbox) return sandbox;
  const options = typeof sandbox === 'string' ? { mode: sandbox } : (sandbox ?? {});
  return createSandbox({
    ...options,
    ...spill?.sandboxOptions(options),
    writableRoots: options.writableRoots ?? [cwd],
  });
}

/** The settings of every run of a bash tool made with `options`; `sessionSpill` unless `options.spillDir`. */
export function settingsOf(
  options: BashToolOptions,
  sessionSpill: SpillDirectory,
): BashRunSettings {
  const pass = options.passEnv ?? [];
  const spill =
    options.spillDir === undefined ? sessionSpill : new SpillDirectory({ path: options.spillDir });
  return {
    // Filtered at each start, so a variable set later in the process is seen (and filtered) too.
    get env() {
      return credentialFreeEnvironment(options.env ?? process.env, { pass });
    },
    sandbox: sandboxOf(options.sandbox, path.resolve(options.cwd), spill),
    cwd: path.resolve(options.cwd),
    shell: options.shell ?? '/bin/bash',
    // Injected process operations are there to see (or replace) every spawn: honour them.
    reuseSandbox: options.reuseSandbox ?? options.process === undefined,
    killGraceMs: options.killGraceMs ?? 2_000,
    headBytes: options.headBytes ?? 15_000,
    tailBytes: options.tailBytes ?? 15_000,
    spill,
    maxSpillBytes: options.maxSpillBytes ?? defaultMaxSpillBytes,
    process: {
      spawn: options.process?.spawn ?? spawn,
      kill: options.process?.kill ?? ((pid, signal) => process.kill(pid, signal)),
    },
  };
}

/**
 * The settings of one run: for a call the permission gate allowed only to read
 * (`ToolContext.readOnly`), in the sandbox's read-only view — the workspace is read-only to the
 * command whatever it does, so a line the read-only analysis misjudged still cannot write.
 * Unchanged for other calls, or where the sandbox is not active or has no such view.
 */
export function settingsForRun(
  settings: BashRunSettings,
  call: { readOnly?: boolean | undefined },
): BashRunSettings {
  if (call.readOnly !== true || !settings.sandbox.status.active) return settings;
  const view = settings.sandbox.readOnlyView?.();
  if (view === undefined) return settings;
  return {
    ...settings,
    sandbox: view,
    // Still read at each start (see settingsOf).
    get env() {
      return settings.env;
    },
  };
}
