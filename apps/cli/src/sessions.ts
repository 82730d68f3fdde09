/**
 * Every session is saved automatically under `$AGENT_HOME/sessions/<workspace>/` (one folder per
 * workspace, named after its path and a hash of it), one JSON file per session, rewritten after
 * each run; `--continue` resumes the newest of the workspace.
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readdir, stat } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { agentHome } from './tool-sources.js';

/** The folder of a workspace's sessions. */
export function sessionsDir(cwd: string, home = agentHome()): string {
  const workspace = resolve(cwd);
  const hash = createHash('sha256').update(workspace).digest('hex').slice(0, 12);
  const name = basename(workspace).replace(/[^A-Za-z0-9._-]/g, '_') || 'root';
  return join(home, 'sessions', `${name}-${hash}`);
}

/** A new session file's path (the folder is created). */
export async function newSessionPath(cwd: string, home = agentHome()): Promise<string> {
  const dir = sessionsDir(cwd, home);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  return join(dir, `${stamp}-${randomUUID().slice(0, 8)}.json`);
}

/** The workspace's saved sessions, newest first. */
export async function listSessions(
  cwd: string,
  home = agentHome(),
): Promise<{ path: string; modified: Date }[]> {
  const dir = sessionsDir(cwd, home);
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  const found = await Promise.all(
    names
      .filter((name) => name.endsWith('.json'))
      .map(async (name) => {
        const path = join(dir, name);
        return { path, modified: (await stat(path)).mtime };
      }),
  );
  return found.sort(
    (a, b) => b.modified.getTime() - a.modified.getTime() || b.path.localeCompare(a.path),
  );
}
