/**
 * Where `agent mcp serve --http` hands the user a token it generated. On a terminal it is printed
 * on stderr, as it always was. Anywhere else — a pipe (`2>&1 | tee serve.log` writes a file every
 * user can read under umask 022; a service's journal; a container's log), a file, `/dev/null` —
 * the reader is not known to be the user, so the token is written to
 * `$AGENT_HOME/mcp-serve/<port>.token` (0600, in a 0700 folder) instead, stderr names that file,
 * and the file is removed when the server stops.
 */
import { chmodSync, lstatSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isatty } from 'node:tty';
import { errorMessage } from '@agent/core';
import { CliError } from '../config/cli-error.js';

/** Whether stderr is a terminal: the one place a new token is printed. */
export function stderrIsTerminal(): boolean {
  return isatty(2);
}

/** A token written for the user: its file, and how to remove it once the server stops. */
export interface WrittenToken {
  path: string;
  remove(): void;
}

/**
 * Writes `token` to `<home>/mcp-serve/<port>.token`, readable by this user only. A file left there
 * by a server that was killed is replaced (never written through: a link there is removed, and
 * the new file is created exclusively). Throws a `CliError` when the folder is another user's.
 */
export function writeServeToken(home: string, port: number, token: string): WrittenToken {
  const folder = join(home, 'mcp-serve');
  try {
    return writeInto(folder, port, token);
  } catch (error) {
    if (error instanceof CliError) throw error;
    // A read-only home (a container's), a full disk: said, with the ways around it.
    throw new CliError(
      `agent mcp serve: the new token cannot be written to ${folder} (${errorMessage(error)}), and it is printed only on a terminal: pass --token-file <file>, or start it at a terminal`,
    );
  }
}

function writeInto(folder: string, port: number, token: string): WrittenToken {
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  const stats = lstatSync(folder);
  const uid = process.getuid?.();
  if (!stats.isDirectory() || (uid !== undefined && stats.uid !== uid))
    throw new CliError(
      `agent mcp serve: ${folder} is not a folder of yours: the token written there could be read by another user. Remove it, or pass --token-file <file>`,
    );
  if (process.platform !== 'win32' && (stats.mode & 0o077) !== 0) chmodSync(folder, 0o700);
  const path = join(folder, `${port}.token`);
  rmSync(path, { force: true });
  writeFileSync(path, `${token}\n`, { mode: 0o600, flag: 'wx' });
  return { path, remove: () => rmSync(path, { force: true }) };
}
