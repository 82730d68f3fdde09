// The session file: the conversation, its grants, id, last run and compactions, as `--save`,
// `/save` and every kept session write it (credential values redacted) and `--resume` reads it.
import { randomBytes } from 'node:crypto';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import {
  type Agent,
  type Compaction,
  errorMessage,
  type Message,
  type PermissionGrant,
} from '@agent/core';
import { CliError } from '../config/cli-error.js';
import { redactJson } from '../ui/redaction.js';

/** Reads a conversation saved with `--save` or `/save` (`{ "messages": [...] }`). */
export async function loadConversation(path: string): Promise<Message[]> {
  let data: unknown;
  try {
    data = JSON.parse(await readFile(path, 'utf8'));
  } catch (error) {
    throw new CliError(`Cannot read the conversation ${path}: ${errorMessage(error)}`);
  }
  const messages =
    data !== null && typeof data === 'object' ? (data as { messages?: unknown }).messages : data;
  if (!Array.isArray(messages)) {
    throw new CliError(`The conversation ${path} needs a "messages" array`);
  }
  return messages as Message[];
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
}

/** Reads a file written by {@link saveConversation} (a bare array of messages is accepted too). */
export async function loadSavedSession(path: string): Promise<SavedSession> {
  const messages = await loadConversation(path);
  let grants: unknown;
  let sessionId: unknown;
  let lastRunId: unknown;
  let compactions: unknown;
  try {
    ({ grants, sessionId, lastRunId, compactions } = JSON.parse(await readFile(path, 'utf8')) as {
      grants?: unknown;
      sessionId?: unknown;
      lastRunId?: unknown;
      compactions?: unknown;
    });
  } catch {
    grants = undefined;
  }
  if (compactions !== undefined && !Array.isArray(compactions))
    throw new CliError(`The conversation ${path} has "compactions" that are not a list`);
  const id = {
    ...(typeof sessionId === 'string' && sessionId !== '' ? { sessionId } : {}),
    ...(typeof lastRunId === 'string' && lastRunId !== '' ? { lastRunId } : {}),
    ...(Array.isArray(compactions) && compactions.length > 0
      ? { compactions: compactions as Compaction[] }
      : {}),
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
 * Writes the conversation as `{ "sessionId"?, "messages": [...] }`, with `"grants"` when there
 * are any. The value of every credential variable of the environment is written as
 * `[redacted:NAME]`.
 */
export async function saveConversation(
  agent: Agent,
  path: string,
  extra: { grants?: readonly PermissionGrant[]; sessionId?: string; lastRunId?: string } = {},
): Promise<void> {
  try {
    const grants = extra.grants ?? [];
    const data = {
      ...(extra.sessionId === undefined ? {} : { sessionId: extra.sessionId }),
      ...(extra.lastRunId === undefined ? {} : { lastRunId: extra.lastRunId }),
      ...agent.toJSON(),
      ...(grants.length === 0 ? {} : { grants }),
    };
    const redacted = redactJson(JSON.parse(JSON.stringify(data)));
    // Whole or not at all: a reader (or a crash) never meets a half-written session.
    const temporary = `${path}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
    try {
      await writeFile(temporary, `${JSON.stringify(redacted, null, 2)}\n`, { mode: 0o600 });
      await rename(temporary, path);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
  } catch (error) {
    throw new CliError(`Cannot save the conversation to ${path}: ${errorMessage(error)}`);
  }
}
