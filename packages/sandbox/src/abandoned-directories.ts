import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * Whether a process with this pid exists (EPERM: it does, as another user's). Shared by the
 * sweeps of what a killed process left behind (the sandbox's pipes, the bash tool's spill and
 * output directories, the CLI's session temporaries).
 */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The directories in `root` a process that no longer runs left behind (killed by a signal, so
 * its exit handler never ran): named for a dead pid (`pidOf` reads it from the name; undefined
 * for a name that is not ours), real directories (not links) owned by this user. A process of
 * another pid namespace sharing `root` looks dead from here. Throws when `root` cannot be read.
 */
export async function abandonedDirectories(
  root: string,
  pidOf: (entry: string) => number | undefined,
): Promise<string[]> {
  const found: string[] = [];
  const uid = process.getuid?.();
  for (const entry of await fs.promises.readdir(root)) {
    const pid = pidOf(entry);
    if (
      pid === undefined ||
      !Number.isSafeInteger(pid) ||
      pid <= 0 ||
      pid === process.pid ||
      processExists(pid)
    )
      continue;
    const dir = path.join(root, entry);
    try {
      const stat = await fs.promises.lstat(dir);
      if (stat.isDirectory() && (uid === undefined || stat.uid === uid)) found.push(dir);
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}
