// The session file: the conversation, its grants, id, last run and compactions, as `--save`,
// `/save` and every kept session write it (credential values redacted) and `--resume` reads it.
import { randomBytes } from 'node:crypto';
import type { Stats } from 'node:fs';
import { rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import {
  type Agent,
  type Compaction,
  errorMessage,
  type Message,
  type PermissionGrant,
  type PermissionMode,
} from '@agent/core';
import { agentHome } from '../config/agent-home.js';
import { CliError } from '../config/cli-error.js';
import { parseJson, readRegularFile } from '../config/project-file.js';
import { fileSystemReason } from '../config/system-errors.js';
import { redactedJsonText } from '../ui/redaction.js';
import { checkSavedMessages } from './saved-messages.js';

/** Largest session file read (bytes): a long session's file is tens of MB. */
export const maximumSessionFileBytes = 256 * 1024 * 1024;

/** Deepest nesting of arrays and objects a session file may have (tools' JSON results included). */
const maximumNesting = 1000;

/**
 * Where `value` nests deeper than `limit`, as a path (`messages.2.content.0.value.0…`), or
 * `undefined`. Iterative: a file nested a hundred thousand deep otherwise overflowed the stack of
 * whatever walked it next ("Maximum call stack size exceeded", naming nothing). The first pass
 * allocates nothing per value (a long session has millions); only a file found too deep is walked
 * again for the path.
 */
function nestedPast(value: unknown, limit: number): string | undefined {
  const values: unknown[] = [value];
  const depths: number[] = [0];
  while (values.length > 0) {
    const next = values.pop();
    const depth = depths.pop() ?? 0;
    if (next === null || typeof next !== 'object') continue;
    if (depth >= limit) return pathPast(value, limit);
    for (const item of Array.isArray(next) ? next : Object.values(next))
      if (item !== null && typeof item === 'object') {
        values.push(item);
        depths.push(depth + 1);
      }
  }
  return undefined;
}

/** The path (its first six keys) to a value nested `limit` deep in `value`. */
function pathPast(value: unknown, limit: number): string {
  interface Entry {
    value: object;
    key: string;
    parent: Entry | undefined;
    depth: number;
  }
  const stack: Entry[] = [];
  if (value !== null && typeof value === 'object')
    stack.push({ value, key: '', parent: undefined, depth: 0 });
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    if (next.depth >= limit) {
      const path: string[] = [];
      for (let at: Entry | undefined = next; at?.parent !== undefined; at = at.parent)
        path.unshift(at.key);
      return `${path.slice(0, 6).join('.')}…`;
    }
    for (const [key, item] of Object.entries(next.value))
      if (item !== null && typeof item === 'object')
        stack.push({ value: item, key, parent: next, depth: next.depth + 1 });
  }
  return '';
}

/** The parsed JSON of a session file (a regular file, at most {@link maximumSessionFileBytes}). */
async function readSessionJson(path: string): Promise<unknown> {
  try {
    const text = await readRegularFile(path, maximumSessionFileBytes, 'a session file');
    if (text === undefined) throw new Error('no such file');
    const data: unknown = parseJson(text);
    const deep = nestedPast(data, maximumNesting);
    if (deep !== undefined)
      throw new Error(
        `it nests deeper than ${maximumNesting} levels (at ${deep}), which no session this CLI writes does`,
      );
    return data;
  } catch (error) {
    throw new CliError(`Cannot read the conversation ${path}: ${errorMessage(error)}`);
  }
}

/** Reads a conversation saved with `--save` or `/save` (`{ "messages": [...] }`). */
export async function loadConversation(path: string): Promise<Message[]> {
  return conversationOf(path, await readSessionJson(path));
}

function conversationOf(path: string, data: unknown): Message[] {
  const messages =
    data !== null && typeof data === 'object' ? (data as { messages?: unknown }).messages : data;
  if (!Array.isArray(messages)) {
    throw new CliError(`The conversation ${path} needs a "messages" array`);
  }
  const checked = checkSavedMessages(messages);
  if ('problem' in checked) throw new CliError(`The conversation ${path}: ${checked.problem}`);
  return checked.messages;
}

/** A saved session: the conversation, and the grants ("always"/"never" answers) given in it. */
export interface SavedSession {
  messages: Message[];
  grants: PermissionGrant[];
  /** The id the session had (json output's `sessionId`); absent in files of older versions. */
  sessionId?: string;
  /** The last run the file holds: journaled runs after it are resumed (see session-journal.ts). */
  lastRunId?: string;
  /** What stood in for the older messages when they were sent (see `Agent.compactions`). */
  compactions?: Compaction[];
  /**
   * The session was in plan mode when saved: no plan approved yet. Only plan mode is kept — a
   * narrower mode than any other, so a file edited to say so can only take permissions away.
   */
  planning?: true;
}

/** Reads a file written by {@link saveConversation} (a bare array of messages is accepted too). */
export async function loadSavedSession(path: string): Promise<SavedSession> {
  const data = await readSessionJson(path);
  const messages = conversationOf(path, data);
  const { grants, sessionId, lastRunId, compactions, mode } = (
    data !== null && typeof data === 'object' && !Array.isArray(data) ? data : {}
  ) as {
    grants?: unknown;
    sessionId?: unknown;
    lastRunId?: unknown;
    compactions?: unknown;
    mode?: unknown;
  };
  if (compactions !== undefined && !Array.isArray(compactions))
    throw new CliError(`The conversation ${path} has "compactions" that are not a list`);
  const id = {
    ...(typeof sessionId === 'string' && sessionId !== '' ? { sessionId } : {}),
    ...(typeof lastRunId === 'string' && lastRunId !== '' ? { lastRunId } : {}),
    ...(Array.isArray(compactions) && compactions.length > 0
      ? { compactions: compactions as Compaction[] }
      : {}),
    ...(mode === 'plan' ? { planning: true as const } : {}),
  };
  if (grants === undefined) return { messages, grants: [], ...id };
  const valid =
    Array.isArray(grants) &&
    grants.every(
      (grant) =>
        grant !== null &&
        typeof grant === 'object' &&
        typeof (grant as PermissionGrant).tool === 'string' &&
        ['allow', 'deny'].includes((grant as PermissionGrant).decision) &&
        ['string', 'undefined'].includes(typeof (grant as PermissionGrant).subject),
    );
  if (!valid)
    throw new CliError(
      `The conversation ${path} has "grants" that are not [{ tool, subject?, decision }]`,
    );
  return { messages, grants: grants as PermissionGrant[], ...id };
}

/**
 * What `stats` is when it is neither a file nor a folder (a device such as /dev/null, a FIFO, a
 * socket): a save renamed over it would replace it; `undefined` for anything else.
 */
export function specialFileKind(stats: Stats): string | undefined {
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device';
  if (stats.isFIFO()) return 'a FIFO (named pipe)';
  if (stats.isSocket()) return 'a socket';
  return undefined;
}

/**
 * Writes the conversation as `{ "sessionId"?, "messages": [...] }`, with `"grants"` when there
 * are any. The value of every credential variable of the environment is written as
 * `[redacted:NAME]`.
 */
export async function saveConversation(
  agent: Agent,
  path: string,
  extra: {
    grants?: readonly PermissionGrant[];
    sessionId?: string;
    lastRunId?: string;
    /** The session's permission mode: written only when it is `plan` (see {@link SavedSession.planning}). */
    mode?: PermissionMode;
  } = {},
): Promise<void> {
  try {
    const grants = extra.grants ?? [];
    // The agent's own messages, not a copy (`toJSON` clones them): they are only read here.
    const data = {
      ...(extra.sessionId === undefined ? {} : { sessionId: extra.sessionId }),
      ...(extra.lastRunId === undefined ? {} : { lastRunId: extra.lastRunId }),
      ...(extra.mode === 'plan' ? { mode: 'plan' } : {}),
      messages: agent.messages,
      ...(agent.compactions.length === 0 ? {} : { compactions: agent.compactions }),
      ...(grants.length === 0 ? {} : { grants }),
    };
    // A file its owner made read-only is theirs to keep as it is: a rename would replace it.
    const existing = await stat(path).catch(() => undefined);
    // So is a device or a FIFO (--save /dev/null, as root, replaced the device with this file).
    const special = existing === undefined ? undefined : specialFileKind(existing);
    if (special !== undefined)
      throw new Error(
        `it is ${special}, not a file, and was left as it is: save to a file (sessions are kept anyway under ${join(agentHome(), 'sessions')})`,
      );
    if (existing !== undefined && (existing.mode & 0o200) === 0)
      throw new Error(
        `the file is read-only (mode ${(existing.mode & 0o777).toString(8)}) and was left as it is: make it writable (chmod u+w) or save elsewhere with --save`,
      );
    const text = `${redactedJsonText(data, 2)}\n`;
    // Whole or not at all: a reader (or a crash) never meets a half-written session.
    const temporary = `${path}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
    try {
      await writeFile(temporary, text, { mode: 0o600 });
      await rename(temporary, path);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
  } catch (error) {
    // Said of the file asked for, not of the temporary file beside it that Node names.
    const code = (error as { code?: unknown }).code;
    const reason =
      code === 'ENOENT'
        ? `the folder ${dirname(path)} does not exist (create it, or save elsewhere)`
        : fileSystemReason(error);
    throw new CliError(
      `Cannot save the conversation to ${path}: ${reason === undefined ? errorMessage(error) : `${reason}${typeof code === 'string' ? ` (${code})` : ''}`}`,
    );
  }
}
