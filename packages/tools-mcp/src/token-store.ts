/**
 * Where an HTTP server's OAuth tokens and registered client are kept between runs: in memory, or
 * in one JSON file only its owner can read. The file's directory is shared with other state
 * (`$AGENT_HOME`), so nothing planted there is trusted: the file is read only when it is a
 * regular file of this user that nobody else can write, and written through a staging file
 * created exclusively (never through a symlink), then renamed into place.
 */
import { randomBytes } from 'node:crypto';
import { constants, type Stats } from 'node:fs';
import { lstat, mkdir, open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { AgentError, errorMessage } from '@agent/core';
import { readRegularFile } from '@agent/core/regular-file';
import type {
  OAuthClientInformationMixed,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';

/** What is kept per server between runs. */
export interface McpStoredAuth {
  tokens?: OAuthTokens;
  client?: OAuthClientInformationMixed;
  /** The MCP server URL the tokens were obtained for: they are sent to no other. */
  resource?: string;
}

/** Where tokens and registered clients live (per server name). */
export interface McpTokenStore {
  load(server: string): Promise<McpStoredAuth | undefined>;
  save(server: string, auth: McpStoredAuth): Promise<void>;
}

/** Tokens in memory only: the user authorises again in each process. */
export function memoryTokenStore(): McpTokenStore {
  const entries = new Map<string, McpStoredAuth>();
  return {
    load: async (server) => entries.get(server),
    save: async (server, auth) => {
      entries.set(server, auth);
    },
  };
}

/** A token file larger than this is not one (a few servers' tokens take a few kB). */
const maximumTokenFileBytes = 4 * 1024 * 1024;

/**
 * Tokens in a JSON file readable by its owner only (0600), written atomically. Fails with an
 * `AgentError` naming the file, rather than trusting or replacing it, when what stands at the
 * path is not a regular file (a symlink, a FIFO, a directory), is another user's, can be written
 * by others, or does not hold a JSON object; and refuses to write into a directory others can
 * write (they could swap the file between two runs).
 */
export function fileTokenStore(path: string): McpTokenStore {
  return {
    load: async (server) => {
      const all = await readTokenFile(path);
      return all.get(server);
    },
    save: async (server, auth) => {
      const directory = dirname(path);
      await mkdir(directory, { recursive: true, mode: 0o700 });
      await assertPrivateDirectory(directory);
      // Read, change and replace under a lock: two runs saving different servers at once (a
      // sign-in beside a refresh) each replaced the file with their own read, losing the other's.
      await withLock(path, async () => {
        const all = await readTokenFile(path);
        all.set(server, auth);
        await writeAtomically(path, `${JSON.stringify(Object.fromEntries(all), null, 2)}\n`);
      });
    },
  };
}

const fail = (path: string, why: string): never => {
  throw new AgentError(`The MCP token file ${path} ${why}`);
};

/** Every server's entry in the file (none when it does not exist yet). */
async function readTokenFile(path: string): Promise<Map<string, McpStoredAuth>> {
  const outcome = await readRegularFile(path, {
    maxBytes: maximumTokenFileBytes,
    // A link planted at the path would hand this process someone else's tokens (its requests
    // then go to their account), or be written through by a tool that follows it.
    followSymlinks: false,
    check: ({ stats }) => ownershipProblem(stats),
  });
  switch (outcome.kind) {
    case 'missing':
      return new Map();
    case 'unreadable':
      return fail(path, `cannot be read: ${errorMessage(outcome.error)}`);
    case 'not-regular':
      return fail(path, `is a ${outcome.type.replace('-', ' ')}, not a regular file`);
    case 'refused':
      return fail(path, outcome.reason);
    case 'too-large':
      return fail(path, `is ${outcome.size} bytes, more than a token file holds`);
    case 'read': {
      let parsed: unknown;
      try {
        parsed = JSON.parse(outcome.bytes.toString('utf8'));
      } catch (error) {
        return fail(path, `is not JSON (${errorMessage(error)}); move it away to sign in again`);
      }
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
        return fail(path, 'does not hold a JSON object; move it away to sign in again');
      // A Map: a server named `__proto__` is an entry like any other, not the object's prototype.
      return new Map(Object.entries(parsed as Record<string, McpStoredAuth>));
    }
    default: {
      const _exhaustive: never = outcome;
      return _exhaustive;
    }
  }
}

/** Why tokens in a file of this owner and mode cannot be believed (someone else could write them). */
function ownershipProblem(stats: Stats): string | undefined {
  const ours = process.getuid?.();
  if (ours !== undefined && stats.uid !== ours)
    return `belongs to uid ${stats.uid}, not to this user (uid ${ours})`;
  if (process.platform !== 'win32' && (stats.mode & 0o022) !== 0)
    return `can be written by others (mode ${(stats.mode & 0o777).toString(8).padStart(4, '0')}); move it away to sign in again`;
  return undefined;
}

/**
 * Refuses a directory another user owns or anyone may write: they could swap the file in it. (A
 * group-writable home directory is common with per-user groups, and allowed.)
 */
async function assertPrivateDirectory(directory: string): Promise<void> {
  if (process.platform === 'win32') return;
  const stats = await lstat(directory);
  const ours = process.getuid?.();
  const problem =
    ours !== undefined && stats.uid !== ours
      ? `belongs to uid ${stats.uid}, not to this user (uid ${ours})`
      : (stats.mode & 0o002) !== 0
        ? `can be written by others (mode ${(stats.mode & 0o777).toString(8).padStart(4, '0')}): run chmod go-w ${directory}`
        : undefined;
  if (problem !== undefined)
    throw new AgentError(`The MCP token file's directory ${directory} ${problem}`);
}

/** How long a save waits for another process's lock before failing, in ms. */
const lockWaitMs = 10_000;
/** How often a waiting save tries the lock again, in ms (a lock file has no event to await). */
const lockRetryMs = 20;

/** Whether the lock at `lock` was left by a process that is gone (or is not a lock file at all). */
async function staleLock(lock: string): Promise<boolean> {
  const outcome = await readRegularFile(lock, { maxBytes: 64, followSymlinks: false });
  if (outcome.kind === 'missing') return false; // released meanwhile: try again
  if (outcome.kind !== 'read') return true; // a link or FIFO planted there is no one's lock
  const pid = Number.parseInt(outcome.bytes.toString('utf8'), 10);
  if (!Number.isSafeInteger(pid) || pid <= 0)
    return Date.now() - outcome.stats.mtimeMs > lockWaitMs;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    // EPERM: alive, another user's.
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** Runs `work` holding `<path>.lock` (created exclusively, holding this pid). */
async function withLock<T>(path: string, work: () => Promise<T>): Promise<T> {
  const lock = `${path}.lock`;
  const deadline = Date.now() + lockWaitMs;
  for (;;) {
    try {
      const file = await open(
        lock,
        constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0),
        0o600,
      );
      await file.writeFile(`${process.pid}\n`, 'utf8');
      await file.close();
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      if (await staleLock(lock)) {
        await rm(lock, { force: true });
        continue;
      }
      if (Date.now() > deadline)
        throw new AgentError(
          `The MCP token file ${path} is locked by another process (${lock}); remove that file if no agent is running`,
        );
      await new Promise((resolve) => setTimeout(resolve, lockRetryMs));
    }
  }
  try {
    return await work();
  } finally {
    await rm(lock, { force: true });
  }
}

/**
 * Writes `text` to a new staging file beside `path` (a random name, created exclusively with
 * `O_NOFOLLOW`: a link planted at any name is never written through), flushes it, and renames it
 * over `path` — which replaces a link there instead of following it.
 */
async function writeAtomically(path: string, text: string): Promise<void> {
  const staging = join(dirname(path), `.${basename(path)}.${randomBytes(8).toString('hex')}.tmp`);
  const file = await open(
    staging,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0),
    0o600,
  );
  try {
    // Whatever the umask, and whoever made the directory.
    await file.chmod(0o600);
    await file.writeFile(text, 'utf8');
    await file.sync();
  } catch (error) {
    await file.close();
    await rm(staging, { force: true });
    throw error;
  }
  await file.close();
  try {
    await rename(staging, path);
  } catch (error) {
    await rm(staging, { force: true });
    throw error;
  }
}
