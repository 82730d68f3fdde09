// The background commands of a bash session (shared by bash and bash_output), and the
// session's long-lived sandboxes and spill directory.
import { randomUUID } from 'node:crypto';
import { ToolError } from '@agent/core';
import type { Sandbox, SandboxHost } from '@agent/sandbox';
import { buffersFor, startCommand } from './bash-command.js';
import type { BashRunSettings } from './bash-settings.js';
import type { OutputBuffer } from './output-buffer.js';
import { forgetPipeDirectory } from './output-pipe.js';
import type { ProcessGroupHandle, ProcessOutcome } from './process-group.js';
import { SpillDirectory } from './spill-dir.js';

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
