// Session files are written whole: a temporary `<file>.<pid>-<8 hex>.tmp` beside the file, then
// renamed over it (session-file.ts). A process killed between the two leaves the temporary; this
// removes such leftovers — never a live writer's.
import { lstat, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { processExists } from '@agent/sandbox';

/** `<file>.<pid>-<8 hex>.tmp`: the file it was to become, and the pid of its writer. */
const temporaryName = /^(.+)\.(\d+)-[0-9a-f]{8}\.tmp$/;

/** A temporary whose writer still runs is left this long (its pid may be another process's now), ms. */
export const liveWriterGraceMs = 24 * 60 * 60 * 1000;

/**
 * Removes the leftover temporaries of session files in `dir`: those whose writer's pid is dead,
 * and those older than a day whose pid is alive but not this process (a save takes moments: the
 * pid belongs to another process by now). Never this process's own (a save may be under way),
 * never a young one of a live process, only regular files of this user; `only` limits it to the
 * temporaries of that one file name (a `--save` file in a folder of the user's). Best effort: a
 * folder that cannot be read, or a file that cannot be removed, is left. Returns how many went.
 */
export async function sweepSessionTemporaries(
  dir: string,
  options: { only?: string; now?: number } = {},
): Promise<number> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return 0;
  }
  const now = options.now ?? Date.now();
  const uid = process.getuid?.();
  let removed = 0;
  for (const name of names) {
    const match = temporaryName.exec(name);
    if (match === null) continue;
    const [, target, pidText] = match;
    if (options.only !== undefined && target !== options.only) continue;
    const pid = Number(pidText);
    if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid) continue;
    const path = join(dir, name);
    try {
      const info = await lstat(path);
      if (!info.isFile() || (uid !== undefined && info.uid !== uid)) continue;
      if (processExists(pid) && now - info.mtimeMs < liveWriterGraceMs) continue;
      await rm(path);
      removed += 1;
    } catch {
      // Gone meanwhile (its writer renamed it, or another session swept it), or not ours to remove.
    }
  }
  return removed;
}
