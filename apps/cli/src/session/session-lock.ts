/**
 * One process per session at a time. Two CLIs that went on with the same session (`--continue`
 * in two terminals) shared its journal — the second took the first's running call for one a crash
 * had cut off, reported it to the model as interrupted while it still ran, and emptied the
 * journal under it — and each rewrote the session file with its own turns only, so the last to
 * finish erased the other's. A session is now held by a lock file beside its journal
 * (`$AGENT_HOME/journals/<id>.lock`, holding the pid); a second process goes on as a new session,
 * a copy of the conversation as saved (session-choice.ts).
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

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
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
      await writeFile(temporary, `${process.pid}\n`, { mode: 0o600 });
      await link(temporary, path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const pid = Number.parseInt((await readFile(path, 'utf8').catch(() => '')).trim(), 10);
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && isRunning(pid))
        return { kind: 'busy', pid };
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
        if (readFileSync(path, 'utf8').trim() === String(process.pid)) unlinkSync(path);
      } catch {
        // Gone already.
      }
    };
    process.once('exit', release);
    return { kind: 'held', release };
  }
  throw new Error(`the lock file ${path} keeps coming back`);
}
