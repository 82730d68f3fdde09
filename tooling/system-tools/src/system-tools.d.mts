// Types of system-tools.mjs (plain JavaScript so scripts/run.mjs can load it before any install).

/** A command some test suite needs. */
export type SystemToolCommand =
  | 'bwrap'
  | 'socat'
  | 'rg'
  | 'tmux'
  | 'curl'
  | 'python3'
  | 'xxd'
  | 'ruby'
  | 'bundle'
  | 'pre-commit'
  | 'mise';

/** How one tool is named, installed and probed. */
export interface SystemTool {
  /** The name people know it by (`bubblewrap` for `bwrap`). */
  label: string;
  /** Its Debian/Ubuntu package. */
  apt: string;
  /** Its Homebrew formula; absent when it does not exist on macOS. */
  brew?: string;
  /** True when it exists only on Linux. */
  linuxOnly?: boolean;
  /** Arguments of a run that exits 0 only where the tool works. */
  probe: readonly string[];
}

/** A tool that cannot be used here, and why (`bubblewrap not installed`). */
export interface MissingSystemTool {
  command: SystemToolCommand;
  problem: string;
}

/** One test skipped for want of tools, as written by `skipWithout`. */
export interface SkipRecord {
  /** The test file, relative to the repository root. */
  file: string;
  /** The test's full name. */
  test: string;
  /** The tools it lacked. */
  tools: SystemToolCommand[];
  /** Those of them an install would bring. */
  install: SystemToolCommand[];
  /** Why, e.g. `bubblewrap not installed`; the summary groups by it. */
  reason: string;
}

/** Where the lookup happens: the PATH of `env`, the platform that decides what exists. */
export interface ProbeOptions {
  env?: NodeJS.ProcessEnv;
  platform?: NodeJS.Platform;
}

/** How an install command is phrased: for which platform, and whether `sudo` is needed. */
export interface PhrasingOptions {
  platform?: NodeJS.Platform;
  /** True when running as root (no `sudo`) [from process.getuid()]. */
  root?: boolean;
}

/** Every tool a suite may need, by command. */
export declare const systemTools: Readonly<Record<SystemToolCommand, SystemTool>>;
/** The tools `npm test` checks up front. */
export declare const preflightTools: readonly SystemToolCommand[];
/** Whether `CI` says this is a CI run. */
export declare function isCi(env?: NodeJS.ProcessEnv): boolean;
/** Why `command` cannot be used here, or undefined when it works (remembered per PATH). */
export declare function systemToolProblem(
  command: SystemToolCommand,
  options?: ProbeOptions,
): string | undefined;
/** The tools among `commands` that cannot be used here. */
export declare function missingSystemTools(
  commands?: readonly SystemToolCommand[],
  options?: ProbeOptions,
): MissingSystemTool[];
/** The commands among `missing` that an install would bring. */
export declare function installableTools(
  missing: readonly MissingSystemTool[],
): SystemToolCommand[];
/** The command that installs `commands`, or undefined when none does. */
export declare function installCommand(
  commands: readonly SystemToolCommand[],
  options?: PhrasingOptions,
): string | undefined;
/** The one line `npm test` prints up front, or undefined when nothing is missing. */
export declare function preflightMessage(
  missing: readonly MissingSystemTool[],
  options?: PhrasingOptions & { ci?: boolean },
): string | undefined;
/** Where skipped-test records go for a package directory (`AGENT_SKIP_RECORDS` overrides). */
export declare function skipRecordDirectory(
  packageDirectory: string,
  env?: NodeJS.ProcessEnv,
): string;
/** The skip-record directories of every workspace package under `root`. */
export declare function workspaceSkipRecordDirectories(root: string): string[];
/** Every record in `directories`. */
export declare function readSkipRecords(directories: readonly string[]): SkipRecord[];
/** One summary line per reason, most tests first. */
export declare function summarizeSkips(
  records: readonly SkipRecord[],
  options?: PhrasingOptions,
): string[];
