import * as fs from 'node:fs';

/** Private directories (proxy sockets, seccomp filters) not removed yet, removed at exit. */
const openDirectories = new Set<string>();
let exitHandlerInstalled = false;

/**
 * Removes `dir` when the process exits, unless {@link forgetAtExit} was called first. One exit
 * handler serves every directory (a listener each would warn of a leak past ten).
 */
export function removeAtExit(dir: string): void {
  openDirectories.add(dir);
  if (exitHandlerInstalled) return;
  exitHandlerInstalled = true;
  process.once('exit', () => {
    for (const open of openDirectories) removeDirectory(open);
  });
}

/** Removes `dir` now, and no longer at exit. */
export function removeNow(dir: string): void {
  openDirectories.delete(dir);
  removeDirectory(dir);
}

function removeDirectory(dir: string): void {
  try {
    // A pipe directory cannot be listed while it is in use (sandbox-host.ts): it can now.
    fs.chmodSync(dir, 0o700);
  } catch {
    // Gone already, or not ours to change.
  }
  try {
    fs.rmSync(dir, { recursive: true, force: true });
  } catch {
    // Best effort.
  }
}
