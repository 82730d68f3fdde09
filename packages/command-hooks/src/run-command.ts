import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import * as os from 'node:os';
import type { HookSandbox } from './hook-sandbox.js';

/** How one hook command ended. */
export interface CommandOutcome {
  /** The exit code; `undefined` when it timed out, was aborted or could not start. */
  exitCode: number | undefined;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** Set when the command could not be started or was aborted. */
  error?: string;
  /** Set when the sandbox could not wrap the command (nothing ran): why. */
  sandboxFailed?: string;
}

const maxOutput = 1024 * 1024;

/** Options of {@link runCommand}. */
export interface RunCommandOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** In milliseconds. */
  timeoutMs: number;
  signal?: AbortSignal;
  /** Runs the shell inside this sandbox (its `wrap`); a wrap that fails is reported, nothing runs. */
  sandbox?: HookSandbox;
}

/**
 * Runs `command` through the shell with `input` on stdin, in its own process group so a timeout
 * or an abort ends the whole tree (in a sandbox, bubblewrap's own process group: the sandbox's
 * processes die with it). Never throws.
 */
export async function runCommand(
  command: string,
  input: string,
  options: RunCommandOptions,
): Promise<CommandOutcome> {
  const failed = (error: string): CommandOutcome => ({
    exitCode: undefined,
    stdout: '',
    stderr: '',
    timedOut: false,
    error,
  });
  if (options.sandbox === undefined)
    return watch(
      spawn(command, {
        shell: true,
        cwd: options.cwd,
        env: options.env,
        detached: true,
        stdio: ['pipe', 'pipe', 'pipe'],
      }),
      input,
      options,
    );
  let wrapped: Awaited<ReturnType<HookSandbox['wrap']>>;
  try {
    wrapped = await options.sandbox.wrap({
      file: '/bin/sh',
      args: ['-c', command],
      cwd: options.cwd,
      env: options.env,
    });
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return { ...failed(`could not start in the sandbox: ${why}`), sandboxFailed: why };
  }
  // Aborted while the sandbox was being prepared: nothing was started.
  if (options.signal?.aborted === true) {
    await wrapped.finish?.();
    return failed('aborted');
  }
  const outcome = await watch(
    spawn(wrapped.file, [...wrapped.args], {
      cwd: wrapped.cwd,
      env: wrapped.env,
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    }),
    input,
    options,
  );
  // Its cgroup goes with it; a hook killed for memory says so, not only "exited 137".
  const events = await wrapped.finish?.();
  const note = events === undefined ? undefined : options.sandbox.explainLimits?.(events);
  if (note === undefined) return outcome;
  const stderr =
    outcome.stderr === '' || outcome.stderr.endsWith('\n') ? outcome.stderr : `${outcome.stderr}\n`;
  return { ...outcome, stderr: `${stderr}${note}` };
}

/** Feeds `input`, collects the output, and ends the child's process group on timeout or abort. */
function watch(
  child: ChildProcessWithoutNullStreams,
  input: string,
  options: RunCommandOptions,
): Promise<CommandOutcome> {
  return new Promise((resolve) => {
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    let settled = false;
    const killTree = () => {
      if (child.pid === undefined) return;
      // The shell reaped, a process at its pid is a newer one: the kernel hands a pid out again
      // only once no process group bears it either, so ours is empty and `-pid` another's group
      // (pid_max 32,768 wraps within minutes on a busy machine). The close comes late when a
      // descendant that left the group (`setsid … &`) holds the output pipes.
      if (
        (child.exitCode !== null || child.signalCode !== null) &&
        existsSync(`/proc/${child.pid}`)
      )
        return;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killTree();
    }, options.timeoutMs);
    const onAbort = () => killTree();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    const finish = (outcome: CommandOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      resolve(outcome);
    };
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      if (stdout.length < maxOutput) stdout += chunk;
    });
    child.stderr.on('data', (chunk: string) => {
      if (stderr.length < maxOutput) stderr += chunk;
    });
    // A hook that does not read its stdin closes the pipe early; that is not an error.
    child.stdin.on('error', () => {});
    child.stdin.end(input);
    child.on('error', (error) =>
      finish({ exitCode: undefined, stdout, stderr, timedOut, error: error.message }),
    );
    child.on('close', (code) => {
      // The shell may exit while a background descendant still runs; end the group.
      killTree();
      if (timedOut || options.signal?.aborted) {
        finish({
          exitCode: undefined,
          stdout,
          stderr,
          timedOut,
          ...(timedOut ? {} : { error: 'aborted' }),
        });
        return;
      }
      // Killed by a signal (the sandbox's out-of-memory kill among them): as a shell reports it.
      const signal = child.signalCode;
      const exitCode =
        code ?? (signal === null ? undefined : 128 + (os.constants.signals[signal] ?? 0));
      finish({ exitCode, stdout, stderr, timedOut });
    });
  });
}
