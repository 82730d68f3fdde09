// Which saved session a run continues or starts: --resume (a file, an id or a pick from the list),
// --continue (the newest), else a new one; old sessions and checkpoints pruned first.
import { randomUUID } from 'node:crypto';
import { existsSync, type Stats, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { errorMessage, oneLineText, terminalSafe } from '@agent/core';
import { agentHome } from '../config/agent-home.js';
import type { CliOptions } from '../config/args.js';
import { CliError } from '../config/cli-error.js';
import type { SessionRetention } from '../config/settings.js';
import { fileSystemProblem } from '../config/system-errors.js';
import { writeErr } from '../ui/output.js';
import { pruneCheckpoints } from './checkpoints.js';
import { loadConversation, loadSavedSession, specialFileKind } from './session-file.js';
import { lockSession } from './session-lock.js';
import { sweepSessionTemporaries } from './session-temporaries.js';
import {
  defaultSessionKeepDays,
  findSessionById,
  isSessionId,
  listSessions,
  newSessionPath,
  pruneSessions,
  sessionIdsStartingWith,
  sessionsDir,
} from './sessions.js';

/** What to do when a folder has no session: sessions are kept per folder. */
const noSessionHint =
  'Sessions are kept per folder: start one here with agent (or agent -p "…"), or pass --cwd <folder> for the folder a session ran in';

/** The first user message of a saved session, on one line, for the list. */
async function sessionTitle(path: string): Promise<string> {
  try {
    const messages = await loadConversation(path);
    const first = messages.find((message) => message.role === 'user');
    const content = first?.content;
    const text =
      typeof content === 'string'
        ? content
        : Array.isArray(content)
          ? content.map((part) => ('text' in part ? part.text : '')).join(' ')
          : '';
    // The first message may be text piped in from elsewhere (`cat issue.txt | agent -p`): its
    // escape sequences set the window title and the clipboard when `--resume` listed it.
    return oneLineText(text, 59) || '(empty)';
  } catch {
    return '(unreadable)';
  }
}

/** `--resume` without a file: lists the workspace's sessions (newest first) and reads a number. */
export async function pickSession(cwd: string): Promise<string> {
  const found = (await listSessions(cwd)).slice(0, 20);
  if (found.length === 0)
    throw new CliError(`No saved session for ${resolve(cwd)} to resume. ${noSessionHint}`);
  const lines = await Promise.all(
    found.map(
      async (entry, index) =>
        `${String(index + 1).padStart(2)}. ${entry.modified.toISOString().slice(0, 16).replace('T', ' ')}  ${await sessionTitle(entry.path)}`,
    ),
  );
  writeErr(
    `Saved sessions of ${terminalSafe(resolve(cwd), { singleLine: true })}, newest first:\n${lines.join('\n')}\n`,
  );
  if (process.stdin.isTTY !== true)
    throw new CliError('Not a terminal, so no session can be picked: pass --resume <file>');
  const { createInterface } = await import('node:readline/promises');
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    while (true) {
      const answer = (await rl.question(`Resume which (1-${found.length})? `)).trim();
      const chosen = found[Number(answer) - 1];
      if (/^\d+$/.test(answer) && chosen !== undefined) return chosen.path;
      // An answer that picks nothing is said, not met with the same question in silence.
      if (answer !== '')
        writeErr(`Type a number from 1 to ${found.length} and press Enter (Ctrl-C quits).\n`);
    }
  } finally {
    rl.close();
  }
}

/**
 * Fails when `--save <path>` could not be written: a folder, a device or FIFO (which the save's
 * rename would replace), or in a folder that does not exist.
 */
function checkSaveTarget(path: string): void {
  const folder = dirname(resolve(path));
  let info: Stats | undefined;
  try {
    info = statSync(path);
  } catch {
    info = undefined;
  }
  if (info?.isDirectory() === true)
    throw new CliError(
      `--save ${path} is a folder: name a file, e.g. --save ${join(path, 'session.json')}`,
    );
  const special = info === undefined ? undefined : specialFileKind(info);
  if (special !== undefined)
    throw new CliError(
      `--save ${path} is ${special}, not a file: saving there would replace it. Name a file, e.g. --save session.json — or leave --save out: every session is kept anyway under ${join(agentHome(), 'sessions')}`,
    );
  if (info === undefined && !existsSync(folder))
    throw new CliError(
      `--save ${path}: the folder ${folder} does not exist (create it first: mkdir -p '${folder}')`,
    );
}

/**
 * The session a run continues or starts: `--resume <id|file>`, the picked one, `--continue`'s
 * newest, else a new id and file; old sessions and checkpoints are pruned first (keeping these).
 */
export async function chooseSession(
  given: CliOptions,
  retention: SessionRetention,
): Promise<CliOptions> {
  let options = given;
  // `--resume <id>`: the kept session with the id json output printed, written back in place.
  if (options.resume !== undefined && !existsSync(options.resume)) {
    // The start of an id (`--resume da2ade7f`, as a git hash is shortened): the kept session it
    // names alone; before, "not a session id" and a second try with all 36 characters.
    if (!isSessionId(options.resume) && /^[0-9a-f]{6}[0-9a-f-]{0,29}$/i.test(options.resume)) {
      const ids = await sessionIdsStartingWith(options.resume);
      if (ids.length > 1)
        throw new CliError(
          `--resume ${options.resume}: ${ids.length} kept sessions have an id that starts so (${ids.slice(0, 4).join(', ')}${ids.length > 4 ? ', …' : ''}): give more of it`,
        );
      if (ids[0] !== undefined) options = { ...options, resume: ids[0] };
    }
  }
  if (options.resume !== undefined && !existsSync(options.resume)) {
    if (!isSessionId(options.resume))
      throw new CliError(
        `--resume ${options.resume}: no such file (and not a session id; the json output's "sessionId" is one). agent --resume without a value lists this folder's sessions`,
      );
    const path = await findSessionById(options.resume);
    if (path === undefined)
      throw new CliError(
        `--resume ${options.resume}: no session with this id is kept under ${join(agentHome(), 'sessions')} (sessions saved with --save elsewhere are resumed by their file). agent --resume without a value lists this folder's sessions`,
      );
    // Found under another folder's sessions: said, since its files and AGENTS.md were another
    // folder's, and the tools now work here (a resume from the wrong terminal tab went on silently).
    if (dirname(path) !== sessionsDir(options.cwd))
      writeErr(
        `note: session ${options.resume} ran in another folder (its sessions are ${basename(dirname(path)).replace(/-[0-9a-f]{12}$/, '')}…); it goes on here, in ${resolve(options.cwd)}, with this folder's files and settings. To go on there instead: cd to that folder (or --cwd it) and run this again.\n`,
      );
    options = { ...options, resume: path, save: options.save ?? path };
  }
  // Where --save writes is checked before a run is paid for: found out after it, the run is lost.
  if (given.save !== undefined) checkSaveTarget(given.save);
  // A --save file's own leftover temporaries (a save killed before its rename) go too.
  if (options.save !== undefined)
    await sweepSessionTemporaries(dirname(resolve(options.save)), {
      only: basename(options.save),
    });
  // Old session files go (the retention of the user settings); the one resumed stays.
  await pruneSessions(retention, {
    keep: [options.resume, options.save].filter((path) => path !== undefined),
  }).catch(() => 0);
  await pruneCheckpoints(retention.keepDays ?? defaultSessionKeepDays).catch(() => 0);
  // Every session is kept (unless --save names the file); --continue picks up the newest.
  if (options.pickSession === true) {
    const path = await pickSession(options.cwd);
    options = { ...options, resume: path, save: options.save ?? path };
  }
  // The session --continue would have taken next, for when the newest cannot be read.
  let before: string | undefined;
  if (options.continueLast === true) {
    const [last, next] = await listSessions(options.cwd);
    before = next?.path;
    if (last === undefined)
      throw new CliError(
        `No saved session for ${resolve(options.cwd)} to continue. ${noSessionHint}`,
      );
    options = { ...options, resume: last.path, save: options.save ?? last.path };
  }
  // A resumed session keeps its id (so `--resume <id>` finds it again); a new one gets one.
  const resumedId =
    options.resume === undefined
      ? undefined
      : (await loadNewest(options.resume, options.continueLast === true, before)).sessionId;
  options = { ...options, sessionId: resumedId ?? randomUUID() };
  options = await holdSession(options);
  if (options.save === undefined) {
    try {
      options = { ...options, save: await newSessionPath(options.cwd, options.sessionId) };
    } catch (error) {
      // No writable $AGENT_HOME: the session runs but is not kept, and the user hears it now
      // rather than from a --continue that finds nothing later.
      writeErr(
        `warning: this session will not be kept, so --continue and --resume will not find it: ${fileSystemProblem(error) ?? errorMessage(error)}\n`,
      );
    }
  }
  return options;
}

/**
 * Loads the session to resume. The newest that --continue took and that cannot be read (cut off
 * by a full disk, damaged) is said with the way on: before, the user heard only that the file was
 * unreadable, and every --continue stopped there with no word of the sessions before it.
 */
async function loadNewest(path: string, continued: boolean, before: string | undefined) {
  try {
    return await loadSavedSession(path);
  } catch (error) {
    if (!continued || !(error instanceof CliError)) throw error;
    const next =
      before === undefined
        ? 'it is the only one kept: move it away to start afresh (agent -p … or agent)'
        : `to go on with the one before it: agent --resume '${before}' (agent --resume alone lists them all at a terminal); move the damaged file away to make --continue skip it`;
    throw new CliError(
      `${error.message}\n--continue takes this folder's newest session, and that one cannot be read: ${next}.`,
    );
  }
}

/**
 * Takes the session's lock (session-lock.ts). When another running process holds it, this one
 * goes on as a new session — a copy of the conversation as saved, in a file of its own — and
 * says so: sharing the journal and the file, each would erase the other's turns.
 */
async function holdSession(options: CliOptions): Promise<CliOptions> {
  const { sessionId } = options;
  if (sessionId === undefined) return options;
  // No writable $AGENT_HOME: nothing is kept that two processes could share.
  const lock = await lockSession(sessionId).catch(() => undefined);
  if (lock?.kind !== 'busy') return options;
  const copyId = randomUUID();
  writeErr(
    `The session ${sessionId} is open in another agent process (pid ${lock.pid}): this one goes on as a new session ${copyId}, a copy of the conversation as saved, so neither erases the other's turns.\n`,
  );
  await lockSession(copyId).catch(() => undefined);
  const { save, ...rest } = options;
  // Its own file, unless --save named another one.
  const sameFile =
    save === undefined ||
    (options.resume !== undefined && resolve(save) === resolve(options.resume));
  if (!sameFile) return { ...rest, save, sessionId: copyId };
  try {
    return { ...rest, sessionId: copyId, save: await newSessionPath(options.cwd, copyId) };
  } catch {
    return { ...rest, sessionId: copyId, save: undefined };
  }
}
