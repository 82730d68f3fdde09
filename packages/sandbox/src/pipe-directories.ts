// The FIFO directories of long-lived sandboxes (sandbox-host.ts): their name, and the sweep of
// those a killed process left behind.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { abandonedDirectories } from './abandoned-directories.js';

/** Our pipe directories are named `agent-sandbox-pipes-<pid>-<random>`. */
export const pipeDirectoryPrefix = 'agent-sandbox-pipes-';

/** The scripts a host writes there: the exec helper, and the perl that confines its commands. */
export const helperScriptName = 'exec-helper.cjs';
export const confinementScriptName = 'confine-command.pl';
const ownScripts = new Set([helperScriptName, confinementScriptName]);

/**
 * Removes the pipe directories in `tmp` of processes that no longer run (killed by a signal):
 * only this user's, named for a dead pid, holding nothing but FIFOs and the helper's scripts.
 * Best effort. Returns the directories removed.
 */
export async function sweepAbandonedPipeDirectories(tmp: string): Promise<string[]> {
  const removed: string[] = [];
  let abandoned: string[];
  try {
    abandoned = await abandonedDirectories(tmp, (entry) =>
      entry.startsWith(pipeDirectoryPrefix)
        ? Number(/^(\d+)-/.exec(entry.slice(pipeDirectoryPrefix.length))?.[1])
        : undefined,
    );
  } catch {
    return removed;
  }
  for (const dir of abandoned) {
    try {
      // Unlistable while its host ran (sandbox-host.ts).
      await fs.promises.chmod(dir, 0o700);
      for (const name of await fs.promises.readdir(dir)) {
        const file = path.join(dir, name);
        const info = await fs.promises.lstat(file);
        if (info.isFIFO() || (ownScripts.has(name) && info.isFile()))
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
