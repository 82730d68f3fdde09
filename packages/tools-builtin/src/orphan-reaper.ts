// An unsandboxed bash command starts under the subreaper of @agent/sandbox (subreaper.ts: perl
// as the command's parent, taking its orphans and ending them when the command ends), so a daemon
// that left the group and cleared its environment (`env -i setsid nohup daemon &`) does not
// outlive the call and the agent.
import * as fs from 'node:fs';
import { prctlSyscallNumber, subreaperSource, systemPerl } from '@agent/sandbox';

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * `file args…` started under the orphan reaper, or undefined where it cannot run (no perl in a
 * system folder, not Linux on x86-64 or arm64): then only the group kill and the environment
 * marker end what a command leaves (README).
 */
export function underOrphanReaper(
  file: string,
  args: readonly string[],
): { file: string; args: string[] } | undefined {
  const number = prctlSyscallNumber();
  const found = systemPerl();
  if (number === undefined || found === undefined) return undefined;
  // A shell that is not there fails to spawn as before (an error of the call, not exit 127).
  if (file.startsWith('/') && !isExecutable(file)) return undefined;
  return { file: found, args: ['-e', subreaperSource, '--', String(number), file, ...args] };
}
