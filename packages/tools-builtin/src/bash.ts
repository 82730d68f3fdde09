import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import * as path from 'node:path';
import {
  credentialFreeEnvironment,
  type DefinedTool,
  defineTool,
  ToolError,
  type ToolResult,
} from '@agent/core';
import {
  createSandbox,
  type Sandbox,
  type SandboxHost,
  SandboxHostError,
  type SandboxMode,
  type SandboxOptions,
} from '@agent/sandbox';
import * as z from 'zod';
import {
  type BashDetails,
  detailsOf,
  formatStreams,
  plantedNote,
  sandboxNote,
} from './bash-output-format.js';
import { bashCallTier } from './bash-tier.js';
import { startHostedProcessGroup } from './hosted-process-group.js';
import { OutputBuffer, removeStaleSpillFiles } from './output-buffer.js';
import { forgetPipeDirectory } from './output-pipe.js';
import {
  newRunMarker,
  type ProcessGroupHandle,
  type ProcessOperations,
  type ProcessOutcome,
  startProcessGroup,
} from './process-group.js';
import { seedArguments, seedToolNames } from './seed-names.js';
import { analyzeShellCommand } from './shell-analysis.js';
import { shellTouchedPaths } from './shell-paths.js';
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

/** Arguments of the bash tool. */
export interface BashArgs {
  command: string;
  timeout?: number | undefined;
  description?: string | undefined;
  run_in_background?: boolean | undefined;
  dangerouslyDisableSandbox?: boolean | undefined;
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

function settingsOf(options: BashToolOptions, background: BackgroundTasks): BashRunSettings {
  const pass = options.passEnv ?? [];
  const spill =
    options.spillDir === undefined
      ? background.spillDirectory
      : new SpillDirectory({ path: options.spillDir });
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

function buffersFor(settings: BashRunSettings, id: string) {
  const make = (stream: string) =>
    new OutputBuffer({
      headBytes: settings.headBytes,
      tailBytes: settings.tailBytes,
      spillDir: () => settings.spill.ensure(),
      maxSpillBytes: settings.maxSpillBytes,
      spillBudget: settings.spill.budget,
      name: `bash-${id}-${stream}`,
    });
  return { stdout: make('stdout'), stderr: make('stderr') };
}

/** One command started with `run_in_background`. */
export interface BackgroundTask {
  readonly id: string;
  readonly command: string;
  readonly startedAt: number;
  readonly handle: ProcessGroupHandle;
  readonly stdout: OutputBuffer;
  readonly stderr: OutputBuffer;
  /** Set once the command ended. */
  outcome: ProcessOutcome | undefined;
  /** The sandbox it runs in; undefined when it runs outside one. */
  readonly sandbox?: Sandbox;
}

/** Options of {@link BackgroundTasks}. */
export interface BackgroundTasksOptions {
  /** Where the session's bash saves large output [a new private {@link SpillDirectory}]. */
  spillDirectory?: SpillDirectory;
  /**
   * Background commands that may run at once [{@link defaultMaxBackgroundTasks}]: one more is
   * refused, telling the model to end one first — a loop starting servers must not take the
   * machine's processes and the session's spill budget.
   */
  maxRunning?: number;
}

/** Default {@link BackgroundTasksOptions.maxRunning}. */
export const defaultMaxBackgroundTasks = 32;

/**
 * A bash session: its background commands and its private spill directory. `close()` (or
 * `await using`) at the session's end kills every command and removes the spill files;
 * `killAll` only kills.
 */
export class BackgroundTasks {
  readonly #tasks = new Map<string, BackgroundTask>();
  /** The session's long-lived sandboxes, one per sandbox (policy); undefined where none can run. */
  readonly #hosts = new Map<Sandbox, SandboxHost | undefined>();
  #closed = false;
  #next = 1;
  readonly #maxRunning: number;
  /** Starts under way (not yet in `#tasks`). */
  #starting = 0;
  /** Where this session's bash saves output that does not fit (see {@link SpillDirectory}). */
  readonly spillDirectory: SpillDirectory;

  constructor(options: BackgroundTasksOptions = {}) {
    this.spillDirectory = options.spillDirectory ?? new SpillDirectory();
    this.#maxRunning = options.maxRunning ?? defaultMaxBackgroundTasks;
  }

  /**
   * This session's long-lived sandbox for `sandbox` (started on its first command), or undefined
   * where it has none (not active, or a `Sandbox` that cannot host). Never shared with another
   * session or another sandbox.
   */
  hostFor(sandbox: Sandbox): SandboxHost | undefined {
    if (this.#closed) return undefined;
    if (!this.#hosts.has(sandbox)) {
      this.#hosts.set(sandbox, sandbox.status.active ? sandbox.createHost?.() : undefined);
    }
    return this.#hosts.get(sandbox);
  }

  /** Starts a command in the background (in the sandbox unless `unsandboxed`) and returns its task. */
  async start(
    command: string,
    settings: BashRunSettings,
    options: { unsandboxed?: boolean } = {},
  ): Promise<BackgroundTask> {
    const running = this.list().filter((task) => task.outcome === undefined);
    // Counted from here, synchronously: calls of one batch start together.
    if (running.length + this.#starting >= this.#maxRunning) {
      throw new ToolError(
        `${running.length + this.#starting} background commands are running, the most this session allows (${this.#maxRunning}): end one first with bash_output { "task_id": "…", "kill": true } (running: ${running.map((task) => task.id).join(', ') || 'still starting'})`,
      );
    }
    const id = `bg-${this.#next++}`;
    const buffers = buffersFor(settings, `${id}-${randomUUID().slice(0, 8)}`);
    this.#starting++;
    let started: Awaited<ReturnType<typeof startCommand>>;
    try {
      started = await startCommand(settings, this, {
        command,
        buffers,
        unsandboxed: options.unsandboxed === true,
      });
    } finally {
      this.#starting--;
    }
    const { handle, sandboxed } = started;
    const task: BackgroundTask = {
      id,
      command,
      startedAt: Date.now(),
      handle,
      ...buffers,
      outcome: undefined,
      ...(sandboxed ? { sandbox: settings.sandbox } : {}),
    };
    void handle.done.then((outcome) => {
      task.outcome = outcome;
    });
    this.#tasks.set(id, task);
    return task;
  }

  /** The task with this id, if any. */
  get(id: string): BackgroundTask | undefined {
    return this.#tasks.get(id);
  }

  /** Every task, oldest first. */
  list(): BackgroundTask[] {
    return [...this.#tasks.values()];
  }

  /** Kills every running task's process group and waits for them to end. */
  async killAll(): Promise<void> {
    await Promise.all(
      this.list().map(async (task) => {
        if (task.outcome === undefined) await task.handle.kill('request');
        await task.handle.done;
      }),
    );
  }

  /**
   * Ends the session: kills every task, ends its long-lived sandboxes, then removes the spill
   * directory (a caller's own is kept).
   */
  async close(): Promise<void> {
    this.#closed = true;
    await this.killAll();
    const hosts = [...this.#hosts.values()];
    this.#hosts.clear();
    await Promise.all(
      hosts.map(async (host) => {
        if (host === undefined) return;
        await host.close();
        forgetPipeDirectory(host.pipeDirectory);
      }),
    );
    this.spillDirectory.remove();
  }

  /** Same as {@link close}. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/** `shell -c command` inside the sandbox, or undefined when the sandbox is not active. */
async function wrapCommand(
  settings: BashRunSettings,
  command: string,
): Promise<{ file: string; args: readonly string[]; env: NodeJS.ProcessEnv } | undefined> {
  if (!settings.sandbox.status.active) return undefined;
  return settings.sandbox.wrap({
    file: settings.shell,
    args: ['-c', command],
    cwd: settings.cwd,
    env: settings.env,
  });
}

/** What a command needs to start, besides the settings. */
interface CommandStart {
  command: string;
  buffers: { stdout: OutputBuffer; stderr: OutputBuffer };
  unsandboxed: boolean;
  timeoutMs?: number;
  signal?: AbortSignal;
  onData?: () => void;
}

/**
 * Starts a command: in the session's long-lived sandbox where it has one, else in a sandbox of
 * its own (`wrap`), else — unsandboxed, or no sandbox here — as it is.
 */
async function startCommand(
  settings: BashRunSettings,
  session: BackgroundTasks,
  start: CommandStart,
): Promise<{ handle: ProcessGroupHandle; sandboxed: boolean }> {
  const common = {
    command: start.command,
    stdout: start.buffers.stdout,
    stderr: start.buffers.stderr,
    marker: newRunMarker(),
    ...(start.timeoutMs === undefined ? {} : { timeoutMs: start.timeoutMs }),
    ...(start.signal === undefined ? {} : { signal: start.signal }),
    ...(start.onData === undefined ? {} : { onData: start.onData }),
  };
  const host =
    start.unsandboxed || !settings.reuseSandbox ? undefined : session.hostFor(settings.sandbox);
  if (host !== undefined) {
    try {
      const handle = await startHostedProcessGroup({
        ...common,
        host,
        shell: settings.shell,
        cwd: settings.cwd,
        env: settings.env,
        killGraceMs: settings.killGraceMs,
      });
      return { handle, sandboxed: true };
    } catch (error) {
      // No long-lived sandbox could start for it: this command gets a sandbox of its own.
      if (!SandboxHostError.isInstance(error)) throw error;
    }
  }
  const wrapped = start.unsandboxed ? undefined : await wrapCommand(settings, start.command);
  const handle = startProcessGroup({
    ...settings,
    ...common,
    ...(wrapped === undefined ? {} : { wrapped }),
  });
  return { handle, sandboxed: wrapped !== undefined };
}

const bashInput = z.object({
  command: z.string().min(1).describe('The command line, run with `bash -c`.'),
  timeout: z
    .number()
    .int()
    .positive()
    .optional()
    .describe('Time limit in milliseconds (default 120000, at most 600000).'),
  description: z
    .string()
    .optional()
    .describe('Five to ten words saying what the command does, for the user.'),
  run_in_background: z
    .boolean()
    .optional()
    .describe('Start the command and return at once with a task id; read it with bash_output.'),
  dangerouslyDisableSandbox: z
    .boolean()
    .optional()
    .describe(
      'Run outside the OS sandbox. Only when a command failed because the sandbox blocked it and it truly needs to; the user is always asked.',
    ),
});

/**
 * The `bash` tool: runs a command line in its own process group with a time limit (ms), streams
 * output through `onUpdate`, keeps head and tail of large output in memory and the whole of it
 * in a spill file. A non-zero exit is an `isError` result that still carries the output. Permission subjects are the commands and
 * file redirections of the parsed command line.
 */
export function createBashTool(options: BashToolOptions): DefinedTool<BashArgs, BashDetails> {
  const background = options.backgroundTasks ?? new BackgroundTasks();
  const settings = settingsOf(options, background);
  const defaultTimeoutMs = options.defaultTimeoutMs ?? 120_000;
  const maxTimeoutMs = options.maxTimeoutMs ?? 600_000;
  const updateIntervalMs = options.updateIntervalMs ?? 250;
  const spillMaxAgeMs = options.spillMaxAgeMs ?? defaultSpillMaxAgeMs;
  // Best effort and in the background: never delays or fails tool creation. Session directories
  // are removed whole; loose files are from a caller's directory or from older versions.
  if (spillMaxAgeMs !== Number.POSITIVE_INFINITY)
    void removeStaleSpillFiles(settings.spill.sharedRoot ?? settings.spill.path, spillMaxAgeMs);
  return defineTool({
    name: 'bash',
    aliases: seedToolNames.bash,
    prepareArguments: seedArguments('bash'),
    label: 'Bash',
    description: [
      'Runs a bash command line in the workspace and returns its exit code, stdout and stderr.',
      `Time limit: "timeout" in milliseconds (default ${defaultTimeoutMs}, max ${maxTimeoutMs}); the whole process group is killed when it runs out.`,
      'Large output is cut to its head and tail; the full output is saved to a file whose path is given.',
      'A non-zero exit code marks the result as failed; its output is returned all the same. Stdin is closed.',
      'Use run_in_background for servers and long jobs, then bash_output to read or kill them.',
      `Commands are ${settings.sandbox.describe()}.`,
    ].join(' '),
    input: bashInput,
    source: 'builtin',
    policy: {
      // A call needs less when it only reads, or runs in the sandbox (see `bashCallTier`).
      permission: 'full-access',
      minimumPermission: 'read-only',
      // Our own timeout fires first and reports partial output; this is the loop's backstop.
      timeoutMs: maxTimeoutMs + settings.killGraceMs + 10_000,
    },
    permissionSubjects: async (args) => {
      const analysis = analyzeShellCommand(args.command);
      const unsandboxed = args.dangerouslyDisableSandbox === true;
      // Path rules cover the files the line names: `deny read_file(.env)` also denies `cat .env`.
      const touched = await shellTouchedPaths(args.command, {
        cwd: settings.cwd,
        home: settings.env.HOME,
      });
      const paths =
        (touched.read?.length ?? 0) + (touched.write?.length ?? 0) === 0 ? {} : { paths: touched };
      // Running outside an active sandbox is its own permission: always asked, never a rule's.
      if (unsandboxed && settings.sandbox.status.active) {
        return {
          subjects: analysis.subjects,
          opaque: 'runs outside the OS sandbox',
          tier: 'full-access',
          ...paths,
        };
      }
      const { tier } = await bashCallTier(args.command, {
        sandbox: settings.sandbox.status,
        cwd: settings.cwd,
        unsandboxed,
        searchPath: settings.env.PATH,
      });
      return { ...analysis, tier, ...paths };
    },
    execute: async (args, ctx): Promise<ToolResult<BashDetails>> => {
      const unsandboxed = args.dangerouslyDisableSandbox === true;
      if (args.run_in_background === true) {
        const task = await background.start(args.command, settings, { unsandboxed });
        if (task.handle.pid === undefined) {
          const outcome = await task.handle.done;
          throw new ToolError(`Could not start ${settings.shell}: ${outcome.spawnError?.message}`);
        }
        return {
          content: [
            {
              type: 'text',
              text: `Started in background as task ${task.id} (pid ${task.handle.pid}). Read its output or kill it with bash_output { "task_id": "${task.id}" }.`,
            },
          ],
          details: {
            exitCode: null,
            signal: null,
            stdout: '',
            stderr: '',
            truncated: false,
            timedOut: false,
            stdoutBytes: 0,
            stderrBytes: 0,
            durationMs: 0,
            taskId: task.id,
          },
        };
      }
      const timeoutMs = Math.min(args.timeout ?? defaultTimeoutMs, maxTimeoutMs);
      const started = Date.now();
      const buffers = buffersFor(settings, randomUUID().slice(0, 8));
      let lastUpdate = 0;
      let pendingUpdate: NodeJS.Timeout | undefined;
      const sendUpdate = () => {
        pendingUpdate = undefined;
        lastUpdate = Date.now();
        ctx.onUpdate({
          content: [
            {
              type: 'text',
              text: formatStreams(buffers.stdout.snapshot(), buffers.stderr.snapshot()),
            },
          ],
        });
      };
      const { handle, sandboxed } = await startCommand(settings, background, {
        command: args.command,
        buffers,
        unsandboxed,
        timeoutMs,
        signal: ctx.signal,
        onData: () => {
          if (pendingUpdate !== undefined) return;
          const wait = lastUpdate + updateIntervalMs - Date.now();
          if (wait <= 0) sendUpdate();
          else pendingUpdate = setTimeout(sendUpdate, wait);
        },
      });
      const outcome = await handle.done;
      if (pendingUpdate !== undefined) clearTimeout(pendingUpdate);
      if (outcome.spawnError !== undefined && outcome.exitCode === null) {
        throw new ToolError(`Could not start ${settings.shell}: ${outcome.spawnError.message}`, {
          cause: outcome.spawnError,
        });
      }
      const stdout = buffers.stdout.snapshot();
      const stderr = buffers.stderr.snapshot();
      const details = detailsOf(outcome, stdout, stderr, Date.now() - started);
      details.sandboxed = sandboxed;
      if (outcome.aborted && !outcome.timedOut) {
        throw ToolError.cancelled('bash', 'the command was aborted and its process group killed');
      }
      const body = formatStreams(stdout, stderr);
      const status = outcome.timedOut
        ? `Command timed out after ${timeoutMs} ms; its process group was killed.`
        : outcome.lost !== undefined
          ? `The command's sandbox died while it ran, and the command with it: ${outcome.lost}. The next command starts a new sandbox.`
          : `Exit code: ${outcome.exitCode ?? 'unknown'}${outcome.signal ? ` (signal ${outcome.signal})` : ''}`;
      // A failure the sandbox caused says so: not just "Permission denied" or "Read-only file system".
      const blocked = !sandboxed
        ? undefined
        : sandboxNote(settings.sandbox, { stdout: stdout.text, stderr: stderr.text }, outcome);
      // What sandboxed commands made that the user's own programs run later, outside the sandbox
      // (checked after every command, so one the user ran unsandboxed is not taken for theirs).
      const planted = settings.sandbox.status.active
        ? (settings.sandbox.checkPlanted?.() ?? [])
        : [];
      const unread = settings.sandbox.status.active
        ? settings.sandbox.plantedCheckIncomplete?.()
        : undefined;
      const planting = sandboxed ? plantedNote(planted, unread) : '';
      const text =
        (body === '' ? `${status}\n(no output)` : `${body}\n${status}`) +
        (blocked === undefined ? '' : `\n${blocked}`) +
        planting;
      const result: ToolResult<BashDetails> = { content: [{ type: 'text', text }], details };
      // A failed command is a failed call (marks and `isError` say so); the model still reads
      // its whole output and exit code in the text.
      if (outcome.timedOut || outcome.lost !== undefined || outcome.exitCode !== 0) {
        result.isError = true;
      }
      if (blocked !== undefined) details.sandboxBlocked = blocked;
      if (planting !== '') details.sandboxPlanted = planted;
      return result;
    },
  });
}
