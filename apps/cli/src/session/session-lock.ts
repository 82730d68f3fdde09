/**
 * One process per session at a time. Two CLIs that went on with the same session (`--continue`
 * in two terminals) shared its journal — the second took the first's running call for one a crash
 * had cut off, reported it to the model as interrupted while it still ran, and emptied the
 * journal under it — and each rewrote the session file with its own turns only, so the last to
 * finish erased the other's. A session is now held by a lock file beside its journal
 * (`$AGENT_HOME/journals/<id>.lock`, naming its process); a second process goes on as a new
 * session, a copy of the conversation as saved (session-choice.ts).
 */
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

/**
 * Takes the lock of a session for this process until it exits (or `release`). A lock left by a
 * process that no longer runs (killed) is taken over. Fails (throws) only when the lock file
 * cannot be written at all; the caller then goes on without one.
 */
export async function lockSession(sessionId: string, home = agentHome()): Promise<SessionLock> {
  const path = sessionLockPath(sessionId, home);
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  for (let attempt = 0; attempt < 3; attempt++) {
    // Written whole, then linked into place: a reader never meets a lock without its pid.
    const temporary = `${path}.${process.pid}.tmp`;
    try {
      const own: Holder = { pid: process.pid, ...procInfo(process.pid) };
      await writeFile(temporary, `${JSON.stringify(own)}\n`, { mode: 0o600 });
      await link(temporary, path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = holderOf(await readFile(path, 'utf8').catch(() => ''));
      if (holder !== undefined && holder.pid !== process.pid && isRunning(holder))
        return { kind: 'busy', pid: holder.pid };
      // Left by a process that is gone: taken over.
      await rm(path, { force: true });
      continue;
    } finally {
      await rm(temporary, { force: true });
    }
    const release = () => {
      process.removeListener('exit', release);
      try {
        // Only our own: a process that took over a lock it judged stale owns it now.
        if (holderOf(readFileSync(path, 'utf8'))?.pid === process.pid) unlinkSync(path);
      } catch {
        // Gone already.
      }
    };
    process.once('exit', release);
    return { kind: 'held', release };
  }
  throw new Error(`the lock file ${path} keeps coming back`);
}
