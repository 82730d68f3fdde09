/**
 * Every session is saved automatically under `$AGENT_HOME/sessions/<workspace>/` (one folder per
 * workspace, named after its path and a hash of it), one JSON file per session named after the
 * time and the session's id, rewritten after each run; `--continue` resumes the newest of the
 * workspace, `--resume <id>` the one with that id. Files older than the retention are removed at
 * start; so are the temporaries a save killed before its rename left (session-temporaries.ts),
 * whenever a folder's sessions are listed or pruned, or a session starts in it.
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readdir, rm, rmdir, stat } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { agentHome } from '../config/agent-home.js';
import { sweepSessionTemporaries } from './session-temporaries.js';

/** The folder of a workspace's sessions. */
export function sessionsDir(cwd: string, home = agentHome()): string {
  const workspace = resolve(cwd);
  const hash = createHash('sha256').update(workspace).digest('hex').slice(0, 12);
  const name = basename(workspace).replace(/[^A-Za-z0-9._-]/g, '_') || 'root';
  return join(home, 'sessions', `${name}-${hash}`);
}

/** A new session file's path, named after the time and the session's id (the folder is created). */
export async function newSessionPath(
  cwd: string,
  sessionId: string = randomUUID(),
  home = agentHome(),
): Promise<string> {
  const dir = sessionsDir(cwd, home);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await sweepSessionTemporaries(dir);
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  return join(dir, `${stamp}-${sessionId}.json`);
}

/** Whether `text` has the form of a session id (what `randomUUID` gives; json output's `sessionId`). */
export function isSessionId(text: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(text);
}

/** Every saved session file of every workspace, with when it was last written. */
async function allSessionFiles(home: string): Promise<{ path: string; modified: Date }[]> {
  const root = join(home, 'sessions');
  let folders: string[];
  try {
    folders = await readdir(root);
  } catch {
    return [];
  }
  const found: { path: string; modified: Date }[] = [];
  for (const folder of folders) {
    let names: string[];
    try {
      await sweepSessionTemporaries(join(root, folder));
      names = await readdir(join(root, folder));
    } catch {
      continue;
    }
    for (const name of names.filter((candidate) => candidate.endsWith('.json'))) {
      const path = join(root, folder, name);
      try {
        found.push({ path, modified: (await stat(path)).mtime });
      } catch {
        // Removed meanwhile (another session's retention): not there.
      }
    }
  }
  return found;
}

/**
 * The file of the session with this id (the newest, when `/clear` started another file of the same
 * session), whichever workspace it was in; `undefined` when none is kept.
 */
export async function findSessionById(
  sessionId: string,
  home = agentHome(),
): Promise<string | undefined> {
  const suffix = `-${sessionId.toLowerCase()}.json`;
  const matches = (await allSessionFiles(home)).filter((file) =>
    file.path.toLowerCase().endsWith(suffix),
  );
  matches.sort((a, b) => b.modified.getTime() - a.modified.getTime());
  return matches[0]?.path;
}

/**
 * The ids of kept sessions (every workspace's) that start with `prefix` — a short id copied as
 * one copies a git hash (`--resume da2ade7f`) — newest first, each once.
 */
export async function sessionIdsStartingWith(
  prefix: string,
  home = agentHome(),
): Promise<string[]> {
  const wanted = prefix.toLowerCase();
  const files = await allSessionFiles(home);
  files.sort((a, b) => b.modified.getTime() - a.modified.getTime());
  const ids: string[] = [];
  for (const file of files) {
    const id = /([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.json$/i
      .exec(file.path)?.[1]
      ?.toLowerCase();
    if (id?.startsWith(wanted) && !ids.includes(id)) ids.push(id);
  }
  return ids;
}

/** Days a session file is kept after it was last written, unless settings say otherwise. */
export const defaultSessionKeepDays = 30;

/**
 * Removes session files older than `keepDays` (last written), and beyond the newest
 * `keepPerWorkspace` of each workspace, except `keep` (the one being resumed); folders left empty
 * go too. Best effort: a file that cannot be removed stays. Returns how many were removed.
 */
export async function pruneSessions(
  retention: { keepDays?: number | undefined; keepPerWorkspace?: number | undefined },
  options: { home?: string; now?: Date; keep?: readonly string[] } = {},
): Promise<number> {
  const home = options.home ?? agentHome();
  const keepDays = retention.keepDays ?? defaultSessionKeepDays;
  const oldest = (options.now ?? new Date()).getTime() - keepDays * 24 * 60 * 60 * 1000;
  const keep = new Set((options.keep ?? []).map((path) => resolve(path)));
  const byFolder = new Map<string, { path: string; modified: Date }[]>();
  for (const file of await allSessionFiles(home)) {
    const folder = join(file.path, '..');
    byFolder.set(folder, [...(byFolder.get(folder) ?? []), file]);
  }
  let removed = 0;
  for (const [folder, files] of byFolder) {
    files.sort((a, b) => b.modified.getTime() - a.modified.getTime());
    const limit = retention.keepPerWorkspace ?? Number.POSITIVE_INFINITY;
    let remaining = files.length;
    for (const [index, file] of files.entries()) {
      if (keep.has(resolve(file.path))) continue;
      if (file.modified.getTime() >= oldest && index < limit) continue;
      try {
        await rm(file.path);
        removed += 1;
        remaining -= 1;
      } catch {
        // Not ours to remove, or gone already.
      }
    }
    if (remaining === 0) await rmdir(folder).catch(() => undefined);
  }
  return removed;
}

/** The workspace's saved sessions, newest first. */
export async function listSessions(
  cwd: string,
  home = agentHome(),
): Promise<{ path: string; modified: Date }[]> {
  const dir = sessionsDir(cwd, home);
  await sweepSessionTemporaries(dir);
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
