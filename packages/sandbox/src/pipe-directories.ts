// The FIFO directories of long-lived sandboxes (sandbox-host.ts): their name, and the sweep of
// those a killed process left behind.
import * as fs from 'node:fs';
import * as path from 'node:path';

/** Our pipe directories are named `agent-sandbox-pipes-<pid>-<random>`. */
export const pipeDirectoryPrefix = 'agent-sandbox-pipes-';

/**
 * Removes the pipe directories in `tmp` of processes that no longer run (killed by a signal):
 * only this user's, named for a dead pid, holding nothing but FIFOs and the helper's script.
 * Best effort. Returns the directories removed.
 */
export async function sweepAbandonedPipeDirectories(tmp: string): Promise<string[]> {
  const removed: string[] = [];
  let entries: string[];
  try {
    entries = await fs.promises.readdir(tmp);
  } catch {
    return removed;
  }
  const uid = process.getuid?.();
  for (const entry of entries) {
    if (!entry.startsWith(pipeDirectoryPrefix)) continue;
    const pid = Number(/^(\d+)-/.exec(entry.slice(pipeDirectoryPrefix.length))?.[1]);
    if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid || processExists(pid))
      continue;
    const dir = path.join(tmp, entry);
    try {
      const stat = await fs.promises.lstat(dir);
      if (!stat.isDirectory() || (uid !== undefined && stat.uid !== uid)) continue;
      for (const name of await fs.promises.readdir(dir)) {
        const file = path.join(dir, name);
        const info = await fs.promises.lstat(file);
        if (info.isFIFO() || (name === 'exec-helper.cjs' && info.isFile()))
          await fs.promises.unlink(file);
      }
      await fs.promises.rmdir(dir);
      removed.push(dir);
    } catch {
      // Gone meanwhile, or holds something that is not ours to remove.
    }
  }
  return removed;
}

/** Whether a process with this pid exists (EPERM: it does, as another user's). */
function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
