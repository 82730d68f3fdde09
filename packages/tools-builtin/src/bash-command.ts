// Starting one bash command: its output buffers, and its process group — in the session's
// long-lived sandbox, in a sandbox of its own, or outside one.
import { type Sandbox, type SandboxHost, SandboxHostError } from '@agent/sandbox';
import type { BashRunSettings } from './bash-settings.js';
import { startHostedProcessGroup } from './hosted-process-group.js';
import { OutputBuffer } from './output-buffer.js';
import {
  markerVariable,
  newRunMarker,
  type ProcessGroupHandle,
  startProcessGroup,
} from './process-group.js';

/** The stdout and stderr buffers of a run, spilling to the session's spill directory. */
export function buffersFor(
  settings: BashRunSettings,
  id: string,
): { stdout: OutputBuffer; stderr: OutputBuffer } {
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

/**
 * `shell -c command` inside the sandbox, or undefined when the sandbox is not active. The run's
 * marker goes in the command's own environment: what the sandbox's outside stages are spawned
 * with does not reach the command (the sandbox sets the command's environment inside).
 */
async function wrapCommand(
  settings: BashRunSettings,
  command: string,
  marker: string,
): Promise<{ file: string; args: readonly string[]; env: NodeJS.ProcessEnv } | undefined> {
  if (!settings.sandbox.status.active) return undefined;
  return settings.sandbox.wrap({
    file: settings.shell,
    args: ['-c', command],
    cwd: settings.cwd,
    env: { ...settings.env, [markerVariable]: marker },
  });
}

/** What a command needs to start, besides the settings. */
export interface CommandStart {
  command: string;
  buffers: { stdout: OutputBuffer; stderr: OutputBuffer };
  unsandboxed: boolean;
  timeoutMs?: number;
  signal?: AbortSignal;
  onData?: () => void;
}

/** Where a command's session keeps its long-lived sandboxes (see `BackgroundTasks.hostFor`). */
export interface SandboxHosts {
  hostFor(sandbox: Sandbox): SandboxHost | undefined;
}

/**
 * Starts a command: in the session's long-lived sandbox where it has one, else in a sandbox of
 * its own (`wrap`), else — unsandboxed, or no sandbox here — as it is.
 */
export async function startCommand(
  settings: BashRunSettings,
  session: SandboxHosts,
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
  const wrapped = start.unsandboxed
    ? undefined
    : await wrapCommand(settings, start.command, common.marker);
  const handle = startProcessGroup({
    ...settings,
    ...common,
    ...(wrapped === undefined ? { reapOrphans: true } : { wrapped }),
  });
  return { handle, sandboxed: wrapped !== undefined };
}
