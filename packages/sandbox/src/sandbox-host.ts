import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { CommandCgroup, LimitEvents } from './cgroup-limits.js';
import { confinementWrapperSource } from './command-confinement.js';
import { execHelperSource } from './exec-helper-source.js';
import { removeAtExit, removeNow } from './exit-cleanup.js';
import { type HelperEvent, parseEvent } from './helper-events.js';
import {
  confinementScriptName,
  helperScriptName,
  pipeDirectoryPrefix,
  sweepAbandonedPipeDirectories,
} from './pipe-directories.js';

/** A command to run in a {@link SandboxHost}. */
export interface HostCommandRequest {
  file: string;
  args: readonly string[];
  /** Working directory (inside the sandbox's view: the same paths as outside). */
  cwd: string;
  env: NodeJS.ProcessEnv;
  /**
   * FIFOs made in {@link SandboxHost.pipeDirectory} for the command's stdout and stderr. The
   * caller opens each for reading, and keeps a write end open too until the command started
   * (or failed to): the helper's open then never waits.
   */
  stdout: string;
  stderr: string;
  /**
   * An environment entry (`NAME=value`) only this command's processes carry: descendants that
   * left its process group are found by it and killed when the command is ended.
   */
  marker?: string;
}

/** How a command in a host ended. */
export type HostCommandExit = (
  | { type: 'exit'; code: number | null; signal: NodeJS.Signals | null }
  /** The sandbox (its helper) died while the command ran: the command died with it. */
  | { type: 'lost'; reason: string }
) & {
  /**
   * What the sandbox's cgroup counted while the command ran (every command of the sandbox
   * shares it): explain with `Sandbox.explainLimits`. Absent when no cgroup bounds the sandbox.
   */
  limitEvents?: LimitEvents;
};

/** A command started in a {@link SandboxHost}. */
export interface HostCommand {
  /** Its pid inside the sandbox (its own pid namespace). */
  readonly pid: number;
  /** Resolves when the command's first process exits (or the sandbox died); never rejects. */
  readonly exited: Promise<HostCommandExit>;
  /**
   * Ends what is left of the command: its process group gets SIGTERM, then SIGKILL after
   * `graceMs`; processes carrying its marker get SIGKILL. Resolves when they are gone (or the
   * sandbox is). Call it once the command is over, too: that is when leftovers are swept.
   */
  end(graceMs: number): Promise<void>;
}

/** A long-lived sandbox that forks each command inside it (see {@link Sandbox.createHost}). */
export interface SandboxHost {
  /**
   * A private directory (0700) visible at the same path inside the sandbox, read-only there:
   * make the FIFOs for a command's output here.
   */
  readonly pipeDirectory: string;
  /**
   * Starts a command; resolves once it runs. Rejects with {@link SandboxHostError} when no
   * sandbox could be started for it (run it the per-call way then) or it could not be started
   * (`spawn` in the message: a missing program or working directory).
   */
  run(request: HostCommandRequest): Promise<HostCommand>;
  /** Ends the sandbox and everything running in it. */
  close(): Promise<void>;
}

const brand = Symbol.for('agent.error.SandboxHostError');

/** A command could not be started in a {@link SandboxHost}. */
export class SandboxHostError extends Error {
  readonly [brand] = true;
  /**
   * `start`: no sandbox could be started, the command was not sent (run it another way);
   * `spawn`: the command itself could not start; `lost`: the sandbox died after the command was
   * sent, before it was known to start — it may have run, so it must not be run again.
   */
  readonly kind: 'start' | 'spawn' | 'lost';
  /** The errno code of a `spawn` failure (ENOENT, EACCES…), if any. */
  readonly code: string | undefined;
  constructor(kind: 'start' | 'spawn' | 'lost', message: string, code?: string) {
    super(message);
    this.name = 'SandboxHostError';
    this.kind = kind;
    this.code = code;
  }

  /** Works across duplicated installs. */
  static isInstance(value: unknown): value is SandboxHostError {
    return value !== null && typeof value === 'object' && brand in value;
  }
}

/** The sandbox a helper runs in: how to start it, and what it was built from. */
export interface HelperLaunch {
  file: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** What the mounts were made from: a different key for a later command needs a new sandbox. */
  key: string;
  /**
   * Makes the cgroup the sandbox runs in (its limits); called once per sandbox started. Throws
   * when it cannot: no sandbox starts unbounded.
   */
  cgroup?: () => CommandCgroup;
}

/** Options of {@link createSandboxHost}. */
export interface SandboxHostOptions {
  /**
   * The sandbox for a command, with `pipeDirectory` bound in, running `node helperFile` (the
   * helper's source, written in `pipeDirectory`).
   */
  launch(
    command: HostCommandRequest,
    paths: {
      pipeDirectory: string;
      /** Run `node ...helperArgs`: the helper's file, then how it confines commands. */
      helperArgs: string[];
    },
  ): Promise<HelperLaunch>;
  /**
   * Each command in a Landlock domain of its own, entered through this perl (see
   * command-confinement.ts); absent where the kernel cannot (commands can then reach the helper).
   */
  confinement?: { perl: string };
  /** Adds what the sandbox sets in every command's environment (TMPDIR, proxy variables). */
  environment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
  /** How long the helper may take to say it is ready, in ms [15000]. */
  startTimeoutMs?: number;
}

interface PendingCall {
  /** The cgroup's counters when the command was sent. */
  eventsBefore: LimitEvents | undefined;
  started: (pid: number) => void;
  failed: (error: SandboxHostError) => void;
  exited: (exit: HostCommandExit) => void;
  ended: (() => void)[];
  state: 'starting' | 'running' | 'exited';
}

/** Longest line the helper may write; its events are a few hundred characters. */
const maximumEventLineChars = 1 << 20;

/** After this many helpers in a row failed to start, the host stops trying (commands fall back). */
const maxStartFailures = 3;

/** One helper process: a sandbox with the exec helper inside, and the calls it serves. */
class Helper {
  readonly key: string;
  readonly ready: Promise<void>;
  readonly #child: ChildProcess;
  readonly #calls = new Map<number, PendingCall>();
  #stderrTail = '';
  #dead: string | undefined;
  #retired = false;
  /** Until it is ready (or gone), a starting helper keeps the process alive for its first call. */
  #starting = true;
  readonly #cgroup: CommandCgroup | undefined;

  constructor(launch: HelperLaunch, startTimeoutMs: number) {
    this.key = launch.key;
    // Made before the sandbox starts, entered by it before it runs anything (see enter).
    try {
      this.#cgroup = launch.cgroup?.();
    } catch (error) {
      throw new SandboxHostError('start', error instanceof Error ? error.message : String(error));
    }
    const started = this.#cgroup?.enter(launch) ?? launch;
    // Its own session: a terminal's Ctrl-C (sent to the foreground group) must not end the
    // sandbox under the session; bwrap's --die-with-parent and the end of stdin end it instead.
    this.#child = spawn(started.file, started.args, {
      cwd: launch.cwd,
      env: launch.env,
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let resolveReady: () => void = () => {};
    let rejectReady: (error: Error) => void = () => {};
    this.ready = new Promise<void>((resolve, reject) => {
      resolveReady = resolve;
      rejectReady = reject;
    });
    // Handled here; callers await it too.
    this.ready.catch(() => {});
    const timer = setTimeout(() => {
      rejectReady(
        new SandboxHostError(
          'start',
          `the sandbox helper was not ready within ${startTimeoutMs} ms`,
        ),
      );
      this.kill();
    }, startTimeoutMs);
    timer.unref();
    // The current line's chunks, joined once its line break arrives (a string grown chunk by
    // chunk and searched each time is walked chunk by chunk by V8: quadratic in the line).
    let partial: string[] = [];
    let partialLength = 0;
    this.#child.stdout?.setEncoding('utf8');
    this.#child.stdout?.on('data', (chunk: string) => {
      let start = 0;
      let newline = chunk.indexOf('\n');
      // The helper's lines are short. Commands share its sandbox and user: where they are not
      // confined (no Landlock), one can take its output descriptor (pidfd_getfd, ptrace) and
      // write into it, and a line without end must not grow in this process until it fails.
      // Such a helper is ended (its commands are lost).
      if (newline === -1 && partialLength + chunk.length > maximumEventLineChars) {
        partial = [];
        partialLength = 0;
        this.#stderrTail =
          `${this.#stderrTail}\nthe sandbox helper wrote a line over ${maximumEventLineChars} characters`.slice(
            -2000,
          );
        this.kill();
        return;
      }
      const lines: string[] = [];
      while (newline !== -1) {
        const tail = chunk.slice(start, newline);
        lines.push(partial.length === 0 ? tail : partial.join('') + tail);
        partial = [];
        partialLength = 0;
        start = newline + 1;
        newline = chunk.indexOf('\n', start);
      }
      if (start < chunk.length) {
        partial.push(chunk.slice(start));
        partialLength += chunk.length - start;
      }
      for (const line of lines) {
        const event = parseEvent(line);
        if (event === undefined) continue;
        if (event.type === 'ready') {
          clearTimeout(timer);
          this.#starting = false;
          this.#idle();
          resolveReady();
        } else this.#onEvent(event);
      }
    });
    this.#child.stderr?.setEncoding('utf8');
    this.#child.stderr?.on('data', (chunk: string) => {
      this.#stderrTail = (this.#stderrTail + chunk).slice(-2000);
    });
    this.#child.stdin?.on('error', () => {});
    const onGone = (reason: string) => {
      if (this.#dead !== undefined) return;
      clearTimeout(timer);
      this.#starting = false;
      const stderr = this.#stderrTail.trim();
      this.#dead = stderr === '' ? reason : `${reason}; its stderr ended with: ${stderr}`;
      rejectReady(new SandboxHostError('start', `the sandbox helper did not start: ${this.#dead}`));
      for (const [id, call] of this.#calls) {
        this.#calls.delete(id);
        const limitEvents = this.#eventsSince(call.eventsBefore);
        if (call.state === 'starting') {
          call.failed(
            new SandboxHostError(
              'lost',
              `the sandbox helper died before the command was known to start (${this.#dead}); it was not run again`,
            ),
          );
        } else {
          call.exited({
            type: 'lost',
            reason: `the sandbox helper died while the command ran (${this.#dead})`,
            ...(limitEvents === undefined ? {} : { limitEvents }),
          });
        }
        for (const ended of call.ended) ended();
      }
      // Nothing of the sandbox may outlive it: what is left in its cgroup is killed with it.
      const released = this.#cgroup?.release();
      this.#released = released ?? Promise.resolve();
    };
    this.#child.once('error', (error) => onGone(`could not start: ${error.message}`));
    // 'close', not 'exit': the events it wrote before it died are read first.
    this.#child.once('close', (code, signal) =>
      onGone(signal === null ? `exited with code ${code}` : `killed by ${signal}`),
    );
    this.#idle();
  }

  #released: Promise<void> | undefined;

  /** Undefined while it runs; else why it stopped. */
  get dead(): string | undefined {
    return this.#dead;
  }

  /**
   * The kernel's out-of-memory killer ended a process in it: its in-memory /tmp may hold what
   * filled it, so the next command gets a new sandbox.
   */
  get spent(): boolean {
    return (this.#cgroup?.events().memoryKills ?? 0) > 0;
  }

  /** The cgroup's counters since `before`, or undefined without a cgroup. */
  #eventsSince(before: LimitEvents | undefined): LimitEvents | undefined {
    const now = this.#cgroup?.events();
    if (now === undefined || before === undefined) return undefined;
    return {
      memoryKills: now.memoryKills - before.memoryKills,
      refusedForks: now.refusedForks - before.refusedForks,
    };
  }

  /** Sends `request`; false when the helper is gone. */
  #send(request: Record<string, unknown>): boolean {
    if (this.#dead !== undefined || this.#child.stdin === null) return false;
    this.#child.stdin.write(`${JSON.stringify(request)}\n`);
    return true;
  }

  #onEvent(event: HelperEvent): void {
    const call = this.#calls.get(event.id);
    if (call === undefined) return;
    switch (event.type) {
      case 'started':
        call.state = 'running';
        call.started(event.pid);
        break;
      case 'failed':
        this.#calls.delete(event.id);
        call.failed(new SandboxHostError('spawn', event.message, event.code));
        this.#idle();
        break;
      case 'exit': {
        call.state = 'exited';
        const limitEvents = this.#eventsSince(call.eventsBefore);
        call.exited({
          type: 'exit',
          code: event.code,
          signal: event.signal,
          ...(limitEvents === undefined ? {} : { limitEvents }),
        });
        if (event.over) {
          // Nothing of it is left: it is over without an `end`.
          this.#calls.delete(event.id);
          for (const ended of call.ended.splice(0)) ended();
          this.#idle();
        }
        break;
      }
      case 'ended':
        this.#calls.delete(event.id);
        // The helper reports the exit first; should it not have, the call still ends.
        if (call.state !== 'exited') {
          call.exited({
            type: 'lost',
            reason: 'the helper ended the command without reporting its exit',
          });
        }
        for (const ended of call.ended.splice(0)) ended();
        this.#idle();
        break;
      default: {
        const _exhaustive: never = event;
        throw new Error(`unknown helper event ${JSON.stringify(_exhaustive)}`);
      }
    }
  }

  /** A helper with nothing to do does not keep the process alive; one serving a call does. */
  #idle(): void {
    const busy = this.#calls.size > 0 || this.#starting;
    for (const handle of [this.#child, this.#child.stdout, this.#child.stderr, this.#child.stdin]) {
      const refable = handle as unknown as { ref?: () => void; unref?: () => void } | null;
      if (busy) refable?.ref?.();
      else refable?.unref?.();
    }
    if (this.#calls.size === 0 && this.#retired) this.#closeInput();
  }

  run(
    id: number,
    request: HostCommandRequest,
    environment: NodeJS.ProcessEnv,
  ): Promise<HostCommand> {
    return new Promise<HostCommand>((resolve, reject) => {
      let resolveExited: (exit: HostCommandExit) => void = () => {};
      const exited = new Promise<HostCommandExit>((done) => {
        resolveExited = done;
      });
      const call: PendingCall = {
        eventsBefore: this.#cgroup?.events(),
        state: 'starting',
        ended: [],
        exited: (exit) => resolveExited(exit),
        failed: reject,
        started: (pid) => {
          resolve({
            pid,
            exited,
            end: (graceMs) =>
              new Promise<void>((done) => {
                if (!this.#calls.has(id)) return done();
                call.ended.push(done);
                if (call.ended.length === 1 && !this.#send({ type: 'end', id, graceMs })) done();
              }),
          });
        },
      };
      this.#calls.set(id, call);
      this.#idle();
      const sent = this.#send({
        type: 'run',
        id,
        file: request.file,
        args: request.args,
        cwd: request.cwd,
        env: environment,
        stdout: request.stdout,
        stderr: request.stderr,
        needle: request.marker === undefined ? '' : `${request.marker}\0`,
      });
      if (!sent) {
        this.#calls.delete(id);
        reject(
          new SandboxHostError('start', `the sandbox helper is gone: ${this.#dead ?? 'closed'}`),
        );
      }
    });
  }

  /** No new calls: the helper exits once its calls are over. */
  retire(): void {
    this.#retired = true;
    this.#idle();
  }

  #closeInput(): void {
    this.#child.stdin?.end();
  }

  /**
   * Ends the sandbox: the helper kills every command and exits when its input ends, then bwrap
   * exits — so once this resolves nothing of the sandbox runs. SIGKILL (the kernel then ends its
   * pid namespace) if that takes longer than `graceMs`.
   */
  async close(graceMs: number): Promise<void> {
    this.#child.ref();
    this.#closeInput();
    const exited = this.exited();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), graceMs);
    });
    if ((await Promise.race([exited, late])) === 'late') this.kill();
    clearTimeout(timer);
    await exited;
  }

  /** Ends the sandbox now (its pid namespace, and every command in it, with it). */
  kill(): void {
    // Whoever kills it may wait for its exit: that wait must keep the process alive.
    this.#child.ref();
    this.#closeInput();
    try {
      this.#child.kill('SIGKILL');
    } catch {
      // Already gone.
    }
  }

  /** Resolves once the helper process has exited, its output was read and its cgroup removed. */
  async exited(): Promise<void> {
    if (this.#dead === undefined)
      await new Promise<void>((resolve) => this.#child.once('close', () => resolve()));
    await this.#released;
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }
}

/** Hosts alive in this process, ended when it exits. */
const liveHelpers = new Set<Helper>();
let exitHandlerInstalled = false;

function track(helper: Helper): void {
  liveHelpers.add(helper);
  void helper.exited().then(() => liveHelpers.delete(helper));
  if (exitHandlerInstalled) return;
  exitHandlerInstalled = true;
  // bwrap's --die-with-parent ends them when this process dies in any way; this ends them as it
  // exits normally, before the event loop stops.
  process.once('exit', () => {
    for (const live of liveHelpers) live.kill();
  });
}

/** This process's pid namespace (`pid:[…]`), or '' where /proc does not tell. */
function ownPidNamespace(): string {
  try {
    return fs.readlinkSync('/proc/self/ns/pid');
  } catch {
    return '';
  }
}

/**
 * A long-lived sandbox with the exec helper inside: started on the first command, replaced when
 * a command needs other mounts (a secret path appeared, another program to show) or when it
 * died, and ended by `close()`. Internal: use {@link Sandbox.createHost}.
 */
export function createSandboxHost(options: SandboxHostOptions): SandboxHost {
  const startTimeoutMs = options.startTimeoutMs ?? 15_000;
  const pipeDirectory = fs.mkdtempSync(
    path.join(os.tmpdir(), `${pipeDirectoryPrefix}${process.pid}-`),
  );
  removeAtExit(pipeDirectory);
  // A process killed by a signal removes nothing: the next host cleans up after it.
  void sweepAbandonedPipeDirectories(os.tmpdir());
  // A file rather than `node -e`: the helper's command line stays short in `ps`.
  const helperFile = path.join(pipeDirectory, helperScriptName);
  fs.writeFileSync(helperFile, execHelperSource, { mode: 0o400 });
  // The helper sweeps the processes it sees started after it only in a pid namespace of its own.
  const helperArgs = [helperFile, ownPidNamespace()];
  if (options.confinement !== undefined) {
    const wrapperFile = path.join(pipeDirectory, confinementScriptName);
    fs.writeFileSync(wrapperFile, confinementWrapperSource(), { mode: 0o400 });
    helperArgs.push(options.confinement.perl, wrapperFile);
  }
  // Search and create, never list (this user's commands, root's too: no capability is left inside,
  // and the bind is read-only, so no chmod): the FIFOs made here ahead of need for later commands
  // can be opened by whoever knows their names, and a command listing the directory learnt them
  // and wrote into (or read) every later command's output.
  fs.chmodSync(pipeDirectory, 0o300);
  let current: Helper | undefined;
  let nextId = 1;
  let startFailures = 0;
  let closed = false;
  const retired = new Set<Helper>();

  const helperFor = async (request: HostCommandRequest): Promise<Helper> => {
    const launch = await options.launch(request, { pipeDirectory, helperArgs });
    if (
      current !== undefined &&
      (current.dead !== undefined || current.key !== launch.key || current.spent)
    ) {
      const old = current;
      current = undefined;
      if (old.dead === undefined) {
        retired.add(old);
        void old.exited().then(() => retired.delete(old));
        old.retire();
      }
    }
    if (current === undefined) {
      if (startFailures >= maxStartFailures) {
        throw new SandboxHostError(
          'start',
          `the sandbox helper failed to start ${startFailures} times`,
        );
      }
      const helper = new Helper(launch, startTimeoutMs);
      current = helper;
      track(helper);
      try {
        await helper.ready;
        startFailures = 0;
      } catch (error) {
        startFailures += 1;
        if (current === helper) current = undefined;
        helper.kill();
        throw error;
      }
    }
    const helper = current;
    await helper.ready;
    return helper;
  };

  return {
    pipeDirectory,
    async run(request) {
      if (closed) throw new SandboxHostError('start', 'the sandbox host is closed');
      const environment = options.environment(request.env);
      // A command the helper never got (it was gone already) is sent once more, to a new one;
      // one it got is never sent twice (`lost`): it may have run.
      for (let attempt = 0; ; attempt++) {
        const helper = await helperFor(request);
        try {
          return await helper.run(nextId++, request, environment);
        } catch (error) {
          if (!SandboxHostError.isInstance(error) || error.kind !== 'start' || attempt > 0)
            throw error;
        }
      }
    },
    async close() {
      closed = true;
      const helpers = [...retired, ...(current === undefined ? [] : [current])];
      current = undefined;
      await Promise.all(helpers.map((helper) => helper.close(2_000)));
      removeNow(pipeDirectory);
    },
  };
}
