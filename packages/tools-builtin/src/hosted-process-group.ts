import type { HostCommand, SandboxHost } from '@agent/sandbox';
import { SandboxHostError } from '@agent/sandbox';
import { endEarly } from './end-early.js';
import type { OutputBuffer } from './output-buffer.js';
import { type NamedOutputPipe, openNamedOutputPipe } from './output-pipe.js';
import {
  markerVariable,
  outcomeOf,
  type ProcessGroupHandle,
  type ProcessOutcome,
  readOutput,
  unstartedHandle,
} from './process-group.js';

/** Options of {@link startHostedProcessGroup}. */
export interface StartHostedProcessGroupOptions {
  host: SandboxHost;
  shell: string;
  command: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  stdout: OutputBuffer;
  stderr: OutputBuffer;
  /** Time limit in ms; none when undefined. */
  timeoutMs?: number;
  /** Wait in ms between SIGTERM and SIGKILL. */
  killGraceMs: number;
  signal?: AbortSignal;
  /** Called after each chunk of output. */
  onData?: () => void;
  /** The run marker (see process-group.ts): descendants that leave the group are found by it. */
  marker: string;
}

/** Both named pipes in `directory`, or undefined (both closed) when they cannot be made. */
function openNamedPipes(directory: string): [NamedOutputPipe, NamedOutputPipe] | undefined {
  const out = openNamedOutputPipe(directory);
  const err = out === undefined ? undefined : openNamedOutputPipe(directory);
  if (out !== undefined && err !== undefined) return [out, err];
  for (const pipe of [out, err]) {
    pipe?.closeWriteEnd();
    pipe?.destroy();
    pipe?.unlink();
  }
  return undefined;
}

/**
 * Runs `shell -c command` in a long-lived sandbox ({@link SandboxHost}): the helper there forks
 * it in its own process group with stdin closed; its stdout and stderr come through FIFOs read
 * here, as {@link startProcessGroup}'s do; timeout, abort and request end the group (and the
 * command's marked escapees) through the helper. Rejects with a {@link SandboxHostError} of kind
 * `start` when no sandbox could be started for it (run it per call then), or when no pipe can be
 * made; a command that cannot be spawned resolves with `spawnError`, one whose sandbox died before
 * it was known to start with `lost` (it is not run again).
 */
export async function startHostedProcessGroup(
  options: StartHostedProcessGroupOptions,
): Promise<ProcessGroupHandle> {
  const pipes = openNamedPipes(options.host.pipeDirectory);
  if (pipes === undefined) {
    throw new SandboxHostError('start', 'no FIFO could be made for the command’s output');
  }
  const reader = readOutput({
    stdout: options.stdout,
    stderr: options.stderr,
    pipes,
    onData: options.onData,
  });
  let command: HostCommand;
  try {
    command = await options.host.run({
      file: options.shell,
      args: ['-c', options.command],
      cwd: options.cwd,
      env: { ...options.env, [markerVariable]: options.marker },
      stdout: pipes[0].name,
      stderr: pipes[1].name,
      marker: `${markerVariable}=${options.marker}`,
    });
  } catch (error) {
    for (const pipe of pipes) {
      pipe.closeWriteEnd();
      pipe.unlink();
    }
    if (SandboxHostError.isInstance(error) && error.kind === 'lost') {
      // It may have run and written: what it wrote is read (its processes died with the sandbox).
      await reader.drain();
      await Promise.all([options.stdout.close(), options.stderr.close()]);
      return unstartedHandle({ lost: error.message });
    }
    if (SandboxHostError.isInstance(error) && error.kind === 'spawn') {
      const spawnError = Object.assign(new Error(error.message), { code: error.code });
      reader.destroy();
      await Promise.all([options.stdout.close(), options.stderr.close()]);
      return unstartedHandle({ spawnError });
    }
    reader.destroy();
    throw error;
  }
  // The helper opened them and the command has its copies: ours go, and so do the names.
  for (const pipe of pipes) {
    pipe.closeWriteEnd();
    pipe.unlink();
  }

  let killing: Promise<void> | undefined;
  const killGroup = (): Promise<void> => {
    killing ??= command.end(options.killGraceMs);
    return killing;
  };
  const early = endEarly(options, () => void killGroup());

  const done = (async (): Promise<ProcessOutcome> => {
    const exit = await command.exited;
    early.clearTimer();
    await reader.drain();
    // What is left of the command (background jobs in its group, marked escapees) goes now; the
    // helper answers once it is gone. A lost sandbox took everything with it.
    await (killing ?? command.end(options.killGraceMs));
    early.stopListening();
    await Promise.all([options.stdout.close(), options.stderr.close()]);
    const limits = exit.limitEvents === undefined ? {} : { limitEvents: exit.limitEvents };
    // The host starts a new sandbox for the next command after a memory kill (its /tmp may hold
    // what filled it): the result says so.
    const replaced =
      (exit.limitEvents?.memoryKills ?? 0) > 0 ? { sandboxReplaced: true as const } : {};
    if (exit.type === 'lost') {
      return {
        exitCode: null,
        signal: null,
        timedOut: early.timedOut,
        aborted: early.aborted,
        lost: exit.reason,
        ...limits,
        ...replaced,
      };
    }
    return { ...outcomeOf(exit, early), ...limits, ...replaced };
  })();

  return {
    pid: command.pid,
    done,
    kill: async () => {
      await killGroup();
    },
  };
}
