import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { credentialFreeEnvironment } from '@agent/core';
import { javascriptDriver, pythonDriver } from './drivers.js';
import {
  killGroup,
  killMarked,
  newReplMarker,
  replMarkerVariable,
  trackInterpreter,
  untrackInterpreter,
} from './repl-escapees.js';

/** How long an interpreter may take to start, at least (a cell's own timeout counts from when it is ready). */
const startTimeoutMs = 30_000;
/**
 * Longest reply line read from an interpreter: the drivers keep at most 500,000 characters at each
 * end of stdout and stderr and of a value or error, so a real reply stays well under this.
 */
const maxReplyLineChars = 16 * 1024 * 1024;
/**
 * Characters kept of what a cell's subprocesses wrote to the reply channel (their stdout is the
 * interpreter's own file descriptor 1); shown after the cell's captured output.
 */
const maxSubprocessOutputChars = 20_000;
/** The languages a session can run. */
export type ReplLanguage = 'javascript' | 'python';

/** A command as a sandbox wraps it (an `@agent/sandbox` Sandbox fits). */
export interface WrappableCommand {
  file: string;
  args: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
}

/** What a sandbox's cgroup counted for the interpreter: out-of-memory kills, refused forks. */
export interface ReplLimitEvents {
  memoryKills: number;
  refusedForks: number;
}

/** A command as the sandbox wrapped it. */
export interface WrappedReplCommand extends WrappableCommand {
  /** Called once it exited: removes its cgroup, says which limit it ran into (when one bounds it). */
  finish?(): Promise<ReplLimitEvents>;
}

/** Something that wraps a command to run it confined, e.g. `createSandbox(…)` of `@agent/sandbox`. */
export interface CommandWrapper {
  wrap(command: WrappableCommand): Promise<WrappedReplCommand>;
  /** A note for an interpreter that ran into the sandbox's memory or process limit, else undefined. */
  explainLimits?(events: ReplLimitEvents): string | undefined;
}

/** Options of a {@link ReplSession}. */
export interface ReplSessionOptions {
  language: ReplLanguage;
  /** Working directory of the interpreter. */
  cwd: string;
  /** Run the interpreter inside this sandbox (as bash runs). */
  sandbox?: CommandWrapper;
  /** The interpreter [node: this process's executable; python: `python3`]. */
  executable?: string;
  /** Environment [process.env], without credential variables unless `passEnv` names them. */
  env?: NodeJS.ProcessEnv;
  /** Names of credential variables the interpreter gets anyway (exact names) [none]. */
  passEnv?: readonly string[];
}

/** What one cell produced. */
export interface ReplOutcome {
  ok: boolean;
  /** The value of the cell's last expression, as the language shows it. */
  value?: string;
  /** The error (message and the cell's part of the stack), when `ok` is false. */
  error?: string;
  stdout: string;
  stderr: string;
  /** True when the interpreter was (re)started for this cell. */
  started: boolean;
}

/** Why a cell did not finish: the session was reset, and its state is gone. */
export class ReplResetError extends Error {
  constructor(
    message: string,
    readonly partialStderr: string,
  ) {
    super(message);
    this.name = 'ReplResetError';
  }
}

interface Pending {
  resolve: (reply: Record<string, unknown>) => void;
  reject: (error: Error) => void;
}

/**
 * One persistent interpreter in a child process (its own process group): cells run one at a
 * time, state is kept between them; a timeout, an abort or the interpreter exiting kills the
 * whole group and the next cell starts a fresh interpreter.
 */
export class ReplSession {
  readonly #options: ReplSessionOptions;
  #child: ChildProcess | undefined;
  /** The running interpreter's marker, in its environment and its descendants'. */
  #marker: string | undefined;
  #ready: Promise<void> | undefined;
  #pending: Pending | undefined;
  /**
   * The reply channel's line so far, as the chunks it came in: joined once its line break
   * arrives. (Appending to one string and searching it made V8 walk a rope of chunks on every
   * read: a 4 MB line took seconds per chunk, and a cell flooding fd 1 was never cut off.)
   */
  #partial: string[] = [];
  #partialLength = 0;
  #stderr = '';
  /** The nonce of the cell waiting for its reply: only a reply line carrying it is the reply. */
  #nonce: string | undefined;
  /** Other lines on the reply channel while the cell ran (its subprocesses' output). */
  #subprocessOutput = '';
  #subprocessDropped = 0;
  #queue: Promise<unknown> = Promise.resolve();
  #closed = false;

  constructor(options: ReplSessionOptions) {
    this.#options = options;
  }

  get language(): ReplLanguage {
    return this.#options.language;
  }

  /** Whether an interpreter is running (state is kept). */
  get running(): boolean {
    return this.#child !== undefined;
  }

  /** Runs a cell after the ones already queued. */
  run(code: string, options: { timeoutMs: number; signal?: AbortSignal }): Promise<ReplOutcome> {
    const next = this.#queue.then(() => this.#run(code, options));
    this.#queue = next.catch(() => undefined);
    return next;
  }

  /** Kills the interpreter (its whole process group); the session can start again. */
  reset(): void {
    const child = this.#child;
    const marker = this.#marker;
    this.#child = undefined;
    this.#marker = undefined;
    this.#ready = undefined;
    this.#partial = [];
    this.#partialLength = 0;
    if (child !== undefined) {
      killGroup(child);
      untrackInterpreter(child);
    }
    // What the cells started outside the group (`setsid`, detached children) goes too.
    if (marker !== undefined) killMarked(marker);
  }

  /** Stops the interpreter for good. */
  async close(): Promise<void> {
    this.#closed = true;
    this.reset();
  }

  async #run(
    code: string,
    options: { timeoutMs: number; signal?: AbortSignal },
  ): Promise<ReplOutcome> {
    if (this.#closed) throw new Error('The REPL session is closed');
    options.signal?.throwIfAborted();
    const started = this.#child === undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let onAbort: (() => void) | undefined;
    try {
      const reply = await new Promise<Record<string, unknown>>((resolve, reject) => {
        const fail = (message: string) => {
          const stderr = this.#stderr;
          this.reset();
          reject(new ReplResetError(message, stderr));
        };
        // The cell's time starts when the interpreter is ready: starting one (seconds on a busy
        // machine) is not the cell's doing. Starting has its own, longer bound.
        const startLimitMs = Math.max(options.timeoutMs, startTimeoutMs);
        timer = setTimeout(
          () =>
            fail(
              `the ${this.language} interpreter did not start within ${startLimitMs} ms; the session was reset`,
            ),
          startLimitMs,
        );
        onAbort = () => fail(`aborted; the ${this.language} session was reset (its state is gone)`);
        options.signal?.addEventListener('abort', onAbort, { once: true });
        this.#pending = { resolve, reject };
        this.#start()
          .then(() => {
            clearTimeout(timer);
            timer = setTimeout(
              () =>
                fail(
                  `the cell did not finish within ${options.timeoutMs} ms; the ${this.language} session was reset (its state is gone)`,
                ),
              options.timeoutMs,
            );
            this.#stderr = '';
            this.#subprocessOutput = '';
            this.#subprocessDropped = 0;
            const nonce = randomUUID();
            this.#nonce = nonce;
            this.#child?.stdin?.write(`${JSON.stringify({ code, nonce })}\n`);
          })
          .catch((error: Error) => fail(error.message));
      });
      const captured = typeof reply.stdout === 'string' ? reply.stdout : '';
      return {
        ok: reply.ok === true,
        ...(typeof reply.value === 'string' ? { value: reply.value } : {}),
        ...(typeof reply.error === 'string' ? { error: reply.error } : {}),
        stdout: this.#withSubprocessOutput(captured),
        stderr: typeof reply.stderr === 'string' ? reply.stderr : '',
        started,
      };
    } finally {
      this.#pending = undefined;
      this.#nonce = undefined;
      if (timer !== undefined) clearTimeout(timer);
      if (onAbort !== undefined) options.signal?.removeEventListener('abort', onAbort);
    }
  }

  #keepSubprocessOutput(line: string): void {
    const room = maxSubprocessOutputChars - this.#subprocessOutput.length;
    const kept = line.slice(0, Math.max(0, room));
    this.#subprocessOutput += `${kept}\n`;
    this.#subprocessDropped += line.length - kept.length;
  }

  /** The cell's captured stdout, then what its subprocesses wrote to the interpreter's stdout. */
  #withSubprocessOutput(captured: string): string {
    if (this.#subprocessOutput === '' && this.#subprocessDropped === 0) return captured;
    const dropped =
      this.#subprocessDropped === 0 ? '' : `[… ${this.#subprocessDropped} characters dropped …]\n`;
    const separator = captured === '' || captured.endsWith('\n') ? '' : '\n';
    return `${captured}${separator}${this.#subprocessOutput}${dropped}`;
  }

  #start(): Promise<void> {
    if (this.#ready !== undefined) return this.#ready;
    this.#ready = this.#spawn();
    return this.#ready;
  }

  async #spawn(): Promise<void> {
    const { language, cwd } = this.#options;
    // Filtered at each start: a prompt-injected cell must not find the user's API keys.
    const marker = newReplMarker();
    const env = {
      ...credentialFreeEnvironment(this.#options.env ?? process.env, {
        pass: this.#options.passEnv ?? [],
      }),
      [replMarkerVariable]: marker,
    };
    const plain: WrappableCommand =
      language === 'javascript'
        ? {
            file: this.#options.executable ?? process.execPath,
            args: ['-e', javascriptDriver],
            cwd,
            env,
          }
        : {
            file: this.#options.executable ?? 'python3',
            args: ['-u', '-c', pythonDriver],
            cwd,
            env,
          };
    const command: WrappedReplCommand =
      this.#options.sandbox === undefined ? plain : await this.#options.sandbox.wrap(plain);
    const child = spawn(command.file, [...command.args], {
      cwd: command.cwd,
      env: command.env,
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    this.#child = child;
    this.#marker = marker;
    if (child.pid !== undefined) trackInterpreter(child);
    this.#partial = [];
    this.#partialLength = 0;
    let ready!: () => void;
    let failed!: (error: Error) => void;
    const readyPromise = new Promise<void>((resolve, reject) => {
      ready = resolve;
      failed = reject;
    });
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      if (this.#child !== child) return;
      let start = 0;
      let newline = chunk.indexOf('\n');
      while (newline !== -1) {
        const tail = chunk.slice(start, newline);
        const line = this.#partial.length === 0 ? tail : this.#partial.join('') + tail;
        this.#partial = [];
        this.#partialLength = 0;
        start = newline + 1;
        newline = chunk.indexOf('\n', start);
        let message: unknown;
        try {
          message = JSON.parse(line);
        } catch {
          message = undefined;
        }
        const record =
          message !== null && typeof message === 'object'
            ? (message as Record<string, unknown>)
            : undefined;
        if (record?.ready === true && this.#nonce === undefined) ready();
        else if (record !== undefined && this.#nonce !== undefined && record.nonce === this.#nonce)
          this.#pending?.resolve(record);
        // Anything else is what a subprocess of the cell wrote to this same descriptor: output.
        else if (this.#nonce !== undefined) this.#keepSubprocessOutput(line);
      }
      if (this.#child !== child) return;
      if (start < chunk.length) {
        this.#partial.push(start === 0 ? chunk : chunk.slice(start));
        this.#partialLength += chunk.length - start;
      }
      // The drivers bound their replies; a line this long is the cell writing to the reply
      // channel itself (fd 1), and holding it would let the cell fill the host's memory.
      if (this.#partialLength > maxReplyLineChars) {
        const pending = this.#pending;
        const stderr = this.#stderr;
        this.reset();
        pending?.reject(
          new ReplResetError(
            `the ${language} interpreter wrote more than ${maxReplyLineChars} characters without a line break on its reply channel (the cell wrote to file descriptor 1 directly?); the session was reset (its state is gone)`,
            stderr,
          ),
        );
      }
    });
    // The request channel: a cell may close or replace the interpreter's standard input and go
    // on running, and the next request then meets a pipe with no reader (EPIPE). Unlistened,
    // that error would end this process; it ends the session instead.
    child.stdin?.on('error', (error: NodeJS.ErrnoException) => {
      if (this.#child !== child) return;
      const pending = this.#pending;
      const stderr = this.#stderr;
      this.reset();
      pending?.reject(
        new ReplResetError(
          `the ${language} interpreter no longer reads its requests (a cell closed or replaced its standard input: ${error.code ?? error.message}); the session was reset (its state is gone)`,
          stderr,
        ),
      );
    });
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      if (this.#stderr.length < 8000) this.#stderr += chunk;
    });
    child.on('error', (error) => {
      const message = `the ${language} interpreter could not start (${command.file}: ${error.message})`;
      failed(new Error(message));
      if (this.#child === child) {
        this.#child = undefined;
        this.#ready = undefined;
        this.#pending?.reject(new ReplResetError(message, ''));
      }
    });
    child.on('exit', (code, signal) => {
      // An interpreter that exited (`sys.exit`, a crash) leaves nothing it started behind.
      killGroup(child);
      untrackInterpreter(child);
      killMarked(marker);
      // Its cgroup goes with it; what it counted says whether the sandbox's limit killed it.
      const finished = command.finish?.() ?? Promise.resolve(undefined);
      if (this.#child !== child) {
        void finished;
        return;
      }
      this.#child = undefined;
      this.#marker = undefined;
      this.#ready = undefined;
      const how = signal === null ? `exit code ${code}` : `signal ${signal}`;
      const stderr = this.#stderr.trim();
      const pending = this.#pending;
      const stderrText = this.#stderr;
      void finished.then((events) => {
        const note =
          events === undefined ? undefined : this.#options.sandbox?.explainLimits?.(events);
        const message = `the ${language} interpreter exited (${how})${stderr === '' ? '' : `: ${stderr.slice(-2000)}`}; the session was reset (its state is gone)${note === undefined ? '' : `. ${note}`}`;
        failed(new Error(message));
        pending?.reject(new ReplResetError(message, stderrText));
      });
    });
    // A session left open must not keep the host process alive.
    child.unref();
    for (const stream of [child.stdin, child.stdout, child.stderr])
      (stream as unknown as { unref?: () => void } | null)?.unref?.();
    await readyPromise;
  }
}
