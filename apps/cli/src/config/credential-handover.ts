// Keeps the CLI's credentials out of its environ block, which any process of the same user reads
// (`/proc/<pid>/environ` needs only PTRACE_MODE_READ, which Yama does not restrict): an
// unsandboxed command, hook, MCP or language server could read the key there. The block is fixed
// when a process is executed, so the CLI executes itself once more at start without them
// (`process.execve`, same pid: the terminal's job control sees one process) and takes them back
// from a 0600 file it removes at once; they then live only in the heap.
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { isCredentialVariable } from '@agent/core/credentials';
import { CliError } from './cli-error.js';

/** Names the file the first start wrote; set only for the second start, removed by it. */
export const handoverVariable = 'AGENT_CREDENTIAL_HANDOVER';

/** What {@link handOverCredentials} did (it does not return when it re-executes the CLI). */
export type HandoverOutcome =
  | { kind: 'none' }
  | { kind: 'unsupported' }
  | { kind: 'taken'; names: readonly string[] };

/** The credential variables of `env` (by core's name and value rules), by name. */
export function credentialVariables(env: NodeJS.ProcessEnv): Record<string, string> {
  const found: Record<string, string> = {};
  for (const [name, value] of Object.entries(env))
    if (value !== undefined && name !== handoverVariable && isCredentialVariable(name, value))
      found[name] = value;
  return found;
}

/**
 * Run first at start. The second start takes the credentials back from the file (and removes
 * it); the first, holding credentials in its environment, writes them to a private file and
 * re-executes the CLI without them — it does not return. Without `process.execve` (Node < 22.15,
 * Windows) the CLI goes on as it is. Throws a CliError when a handed-over file cannot be taken.
 */
export function handOverCredentials(
  env: NodeJS.ProcessEnv = process.env,
  execve: typeof process.execve | undefined = process.execve,
): HandoverOutcome {
  const file = env[handoverVariable];
  if (file !== undefined) {
    delete env[handoverVariable];
    const names = takeCredentials(file, env);
    return { kind: 'taken', names };
  }
  const credentials = credentialVariables(env);
  if (Object.keys(credentials).length === 0) return { kind: 'none' };
  if (typeof execve !== 'function' || !canExecute(process.execPath)) return { kind: 'unsupported' };
  const written = writeHandover(credentials);
  if (written === undefined) return { kind: 'unsupported' };
  const next: Record<string, string> = {};
  for (const [name, value] of Object.entries(env))
    if (value !== undefined && credentials[name] === undefined) next[name] = value;
  next[handoverVariable] = written;
  // Node's own flags (--inspect, --max-old-space-size…) and the script with its arguments.
  execve(process.execPath, [process.argv0, ...process.execArgv, ...process.argv.slice(1)], next);
  // Only a test's stand-in for execve returns.
  return { kind: 'none' };
}

/** Whether `file` can be executed (execve aborts the process when it fails, so ask first). */
function canExecute(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The credentials in a new 0600 file inside a new 0700 folder (the user's runtime folder where
 * there is one: memory, never disk), or undefined where none can be written.
 */
function writeHandover(credentials: Record<string, string>): string | undefined {
  for (const base of handoverBases()) {
    let folder: string | undefined;
    try {
      folder = fs.mkdtempSync(path.join(base, 'agent-handover-'));
      const file = path.join(folder, 'credentials.json');
      fs.writeFileSync(file, JSON.stringify(credentials), { mode: 0o600, flag: 'wx' });
      return file;
    } catch {
      if (folder !== undefined) fs.rmSync(folder, { recursive: true, force: true });
    }
  }
  return undefined;
}

function handoverBases(): string[] {
  const runtime = process.env.XDG_RUNTIME_DIR;
  const bases: string[] = [];
  if (runtime !== undefined && path.isAbsolute(runtime) && ownPrivateDirectory(runtime))
    bases.push(runtime);
  bases.push(tmpdir());
  return bases;
}

function ownPrivateDirectory(folder: string): boolean {
  try {
    const stat = fs.lstatSync(folder);
    return stat.isDirectory() && stat.uid === process.getuid?.() && (stat.mode & 0o077) === 0;
  } catch {
    return false;
  }
}

/**
 * Reads and removes the file the first start wrote; sets what it holds into `env` (the heap: the
 * environ block stays without them). Only a 0600 regular file of this user, in a 0700 folder of
 * this user, holding credential variables alone, is believed — a path set by anyone else fails.
 */
function takeCredentials(file: string, env: NodeJS.ProcessEnv): string[] {
  const problem = (reason: string) =>
    new CliError(`the credentials handed over at start (${handoverVariable}=${file}) ${reason}`);
  if (!path.isAbsolute(file) || path.basename(file) !== 'credentials.json')
    throw problem('are not where the CLI puts them');
  const folder = path.dirname(file);
  const uid = process.getuid?.();
  let text: string;
  try {
    const folderStat = fs.lstatSync(folder);
    if (!folderStat.isDirectory() || folderStat.uid !== uid || (folderStat.mode & 0o077) !== 0)
      throw problem('are in a folder that is not private to this user');
    // O_NOFOLLOW: a link put there is refused, not followed.
    const descriptor = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    try {
      const stat = fs.fstatSync(descriptor);
      if (!stat.isFile() || stat.uid !== uid || (stat.mode & 0o077) !== 0 || stat.nlink !== 1)
        throw problem('are not a private file of this user');
      text = fs.readFileSync(descriptor, 'utf8');
    } finally {
      fs.closeSync(descriptor);
    }
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw problem(`cannot be read: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  // Removed before anything else runs: nothing else ever reads it.
  fs.rmSync(file, { force: true });
  fs.rmSync(folder, { recursive: true, force: true });
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw problem('are not JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw problem('are not an object of variables');
  const names: string[] = [];
  for (const [name, value] of Object.entries(parsed)) {
    // Only credentials travel this way: a file that sets PATH or NODE_OPTIONS is not ours.
    if (typeof value !== 'string' || !isCredentialVariable(name, value))
      throw problem(`hold ${name}, which is not a credential variable`);
    env[name] = value;
    names.push(name);
  }
  return names;
}
