import { open, readFile, rm, stat } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';

/** How long a lock may be waited for before the change gives up (milliseconds). */
const maxWaitMs = 10_000;
/** A lock file older than this whose holder cannot be checked is taken as left behind. */
const staleMs = 30_000;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, another user's.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether the lock at `path` was left by a process that is gone (or is too old to believe). */
async function leftBehind(path: string): Promise<boolean> {
  try {
    const age = Date.now() - (await stat(path)).mtimeMs;
    const [pid] = (await readFile(path, 'utf8')).trim().split(' ').map(Number);
    // Empty: its holder has just made it and not written its pid yet — unless that was long ago.
    if (pid === undefined || !Number.isInteger(pid) || pid <= 0) return age > staleMs;
    return !alive(pid) || age > staleMs;
  } catch {
    // Gone already, or unreadable (then the next attempt says so).
    return false;
  }
}

/**
 * Runs `change` holding `<path>.lock` (created exclusively, holding this pid and the time): two
 * CLIs trusting two folders at once each read the store, added their folder and wrote it back —
 * the second write lost the first's entry. A lock left by a process that died is taken over.
 */
export async function withFileLock<T>(path: string, change: () => Promise<T>): Promise<T> {
  const lock = `${path}.lock`;
  const started = Date.now();
  for (let attempt = 0; ; attempt++) {
    try {
      const handle = await open(lock, 'wx', 0o600);
      try {
        await handle.writeFile(`${process.pid} ${Date.now()}\n`);
      } finally {
        await handle.close();
      }
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      if (await leftBehind(lock)) {
        await rm(lock, { force: true });
        continue;
      }
      if (Date.now() - started > maxWaitMs)
        throw new Error(`${lock} is held by another process (remove it if none is running)`);
      // Another process is writing the store: a few milliseconds, growing a little each time.
      await delay(Math.min(5 + attempt * 5, 100));
    }
  }
  try {
    return await change();
  } finally {
    await rm(lock, { force: true });
  }
}
