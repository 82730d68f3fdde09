/**
 * One process per session at a time. Two CLIs that went on with the same session (`--continue`
 * in two terminals) shared its journal — the second took the first's running call for one a crash
 * had cut off, reported it to the model as interrupted while it still ran, and emptied the
 * journal under it — and each rewrote the session file with its own turns only, so the last to
 * finish erased the other's. A session is now held by a lock file beside its journal
 * (`$AGENT_HOME/journals/<id>.lock`, naming its process); a second process goes on as a new
 * session, a copy of the conversation as saved (session-choice.ts).
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, unlinkSync } from 'node:fs';
import { link, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { agentHome } from '../config/agent-home.js';
import { journalPath } from './session-journal.js';

/** The lock file of a session. */
export function sessionLockPath(sessionId: string, home = agentHome()): string {
  return journalPath(sessionId, home).replace(/\.jsonl$/, '.lock');
}

/** What taking a session's lock gave: it, or the process holding it. */
export type SessionLock = { kind: 'held'; release: () => void } | { kind: 'busy'; pid: number };

/** Who holds a lock: the pid, and on Linux when that process started and in which boot. */
interface Holder {
  pid: number;
  /** The process's start time (`/proc/<pid>/stat`, clock ticks since boot). */
  start?: string;
  /** `/proc/sys/kernel/random/boot_id`. */
  boot?: string;
}

/** What `/proc` says of a process (Linux), or nothing. */
function procInfo(pid: number): { start?: string; boot?: string } {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: fields are counted after its `)`.
    const start = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    return { ...(start === undefined ? {} : { start }), boot };
  } catch {
    return {};
  }
}

/**
 * Whether the lock's process still runs: its pid is alive and, where `/proc` tells, it is the
 * same process — after a reboot or a long time the pid of a killed CLI belongs to another one,
 * and the session would never be continued under its id again.
 */
function isRunning(holder: Holder): boolean {
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    // EPERM: it runs, as another user.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const now = procInfo(holder.pid);
  if (holder.boot !== undefined && now.boot !== undefined && holder.boot !== now.boot) return false;
  if (holder.start !== undefined && now.start !== undefined && holder.start !== now.start)
    return false;
  return true;
}

function holderOf(text: string): Holder | undefined {
  try {
    const holder = JSON.parse(text) as Holder;
    return Number.isInteger(holder.pid) && holder.pid > 0 ? holder : undefined;
  } catch {
    return undefined;
  }
}

/** Options of {@link lockSession}. */
export interface LockSessionOptions {
  /** `$AGENT_HOME` [agentHome()]. */
  home?: string;
  /** The process the lock names [this one] (tests hold locks for other processes). */
  pid?: number;
  /** Awaited once a lock is judged stale, before taking it over (tests pause there). */
  onStale?: () => Promise<void>;
}

/**
 * Takes the lock of a session for this process until it exits (or `release`). A lock left by a
 * process that no longer runs (killed) is taken over — under a second lock (`<id>.lock.break`),
 * and only if it is still the very lock judged stale: two processes that found the same stale
 * lock each removed it, and the later removed the lock the earlier had just taken, so both went
 * on with the session. Fails (throws) only when the lock file cannot be written at all; the
 * caller then goes on without one.
 */
export async function lockSession(
  sessionId: string,
  options: LockSessionOptions = {},
): Promise<SessionLock> {
  const path = sessionLockPath(sessionId, options.home);
  const breaker = `${path}.break`;
  const pid = options.pid ?? process.pid;
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const own = `${JSON.stringify({ pid, ...procInfo(pid) } satisfies Holder)}\n`;
  for (let attempt = 0; attempt < 50; attempt++) {
    if (await linkNew(path, own)) return held(path, own);
    const seen = await readFile(path, 'utf8').catch(() => undefined);
    // Released meanwhile: try again.
    if (seen === undefined) continue;
    const holder = holderOf(seen);
    if (holder !== undefined && holder.pid !== pid && isRunning(holder))
      return { kind: 'busy', pid: holder.pid };
    await options.onStale?.();
    if (!(await linkNew(breaker, own))) {
      const breaking = holderOf(await readFile(breaker, 'utf8').catch(() => ''));
      if (breaking !== undefined && breaking.pid !== pid && isRunning(breaking)) {
        // Another process is taking the stale lock over (a matter of milliseconds): look again.
        await new Promise((resolve) => setTimeout(resolve, 20));
        continue;
      }
      // Left by a process killed while it took a lock over.
      await rm(breaker, { force: true });
      continue;
    }
    try {
      // Removed only if it is still the lock judged stale, not one another process took since.
      if ((await readFile(path, 'utf8').catch(() => undefined)) === seen)
        await rm(path, { force: true });
    } finally {
      await rm(breaker, { force: true });
    }
  }
  throw new Error(`the lock file ${path} keeps coming back`);
}

/**
 * Creates `path` holding `text`, or returns false when it exists: written whole to a file of its
 * own first, then linked into place, so a reader never meets a lock without its pid.
 */
async function linkNew(path: string, text: string): Promise<boolean> {
  const temporary = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await writeFile(temporary, text, { mode: 0o600, flag: 'wx' });
    await link(temporary, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return false;
  } finally {
    await rm(temporary, { force: true });
  }
}

/** The lock held: released at exit, or by `release` — only while it is still this one. */
function held(path: string, own: string): SessionLock {
  const release = () => {
    process.removeListener('exit', release);
    try {
      // A process that took over a lock it judged stale owns it now.
      if (readFileSync(path, 'utf8') === own) unlinkSync(path);
    } catch {
      // Gone already.
    }
  };
  process.once('exit', release);
  return { kind: 'held', release };
}
