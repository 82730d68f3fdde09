// Keeps the CLI's credentials out of its environ block, which any process of the same user reads
// (`/proc/<pid>/environ` needs only PTRACE_MODE_READ, which Yama does not restrict): an
// unsandboxed command, hook, MCP or language server could read the key there. The block is fixed
// when a process is executed, so the CLI executes itself once more at start without them
// (`process.execve`, same pid: the terminal's job control sees one process) and takes them back
// from a 0600 file it removes at once; they then live only in the heap.
// The command line (`/proc/<pid>/cmdline`, `ps`) is readable by every user of the machine, not
// only this one, for as long as the CLI runs: an argument that carries a key (`--base-url
// http://h/v1?key=…`, a URL with a password, a token of a known format) travels the same way,
// the re-executed command line holding it masked (`key=***`), and is put back in `process.argv`.
// The same re-execution leaves out Node's heap-snapshot options (config/heap-snapshot-options.ts).
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { isCredentialVariable, urlWithoutCredentials } from '@agent/core/credentials';
import { CliError } from './cli-error.js';
import { snapshotOptionsLeftOut } from './heap-snapshot-options.js';

/** Names the file the first start wrote; set only for the second start, removed by it. */
export const handoverVariable = 'AGENT_CREDENTIAL_HANDOVER';

/** What {@link handOverCredentials} did (it does not return when it re-executes the CLI). */
export type HandoverOutcome =
  | { kind: 'none' }
  | { kind: 'unsupported' }
  | { kind: 'taken'; names: readonly string[]; arguments: number };

/** An argument of the command line that carries a key: where, what stands in its place, itself. */
interface KeyedArgument {
  /** Its index in `process.argv` (2 or more: the CLI's own arguments). */
  index: number;
  shown: string;
  value: string;
}

/** What the handover file holds. */
interface Handover {
  variables: Record<string, string>;
  arguments: KeyedArgument[];
}

/** The credential variables of `env` (by core's name and value rules), by name. */
export function credentialVariables(env: NodeJS.ProcessEnv): Record<string, string> {
  const found: Record<string, string> = {};
  for (const [name, value] of Object.entries(env))
    if (value !== undefined && name !== handoverVariable && isCredentialVariable(name, value))
      found[name] = value;
  return found;
}

/**
 * The arguments of `argv` (a `process.argv`) that carry a key, each with the masked text that
 * stands in its place: a URL with a password or a key in its query (`--base-url`, `--openapi`, a
 * prompt's), or a whole argument or `--option=` value that core's rules take for a credential (a
 * known key format, a random-looking token). An argument after another option's name (`-p`, `--`)
 * counts too: it is put back exactly, so how it is parsed does not change.
 */
export function keyedArguments(argv: readonly string[]): KeyedArgument[] {
  const found: KeyedArgument[] = [];
  for (const [index, argument] of argv.entries()) {
    if (index < 2) continue;
    const option = /^--[A-Za-z][\w-]*=/.exec(argument)?.[0] ?? '';
    const shown = maskedKey(argument.slice(option.length));
    if (shown !== undefined) found.push({ index, shown: `${option}${shown}`, value: argument });
  }
  return found;
}

/** `value` with its key masked; undefined when it carries none. */
function maskedKey(value: string): string | undefined {
  if (/^https?:\/\//i.test(value)) {
    const masked = urlWithoutCredentials(value);
    if (masked !== value) return masked;
  }
  // A neutral name: only the value rules (known formats, random tokens, keyed URLs) decide.
  return isCredentialVariable('AGENT_ARGUMENT', value) ? '***' : undefined;
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
  argv: string[] = process.argv,
): HandoverOutcome {
  const file = env[handoverVariable];
  if (file !== undefined) {
    delete env[handoverVariable];
    const handover = takeHandover(file, argv);
    for (const [name, value] of Object.entries(handover.variables)) env[name] = value;
    for (const { index, value } of handover.arguments) argv[index] = value;
    return {
      kind: 'taken',
      names: Object.keys(handover.variables),
      arguments: handover.arguments.length,
    };
  }
  const credentials = credentialVariables(env);
  const keyed = keyedArguments(argv);
  // Node's heap-snapshot options (config/heap-snapshot-options.ts) are left out by the same
  // re-execution, keys or not: the heap holds other secrets too (an MCP server's OAuth token).
  const snapshot = snapshotOptionsLeftOut(env, process.execArgv);
  if (Object.keys(credentials).length === 0 && keyed.length === 0 && snapshot.removed.length === 0)
    return { kind: 'none' };
  if (typeof execve !== 'function' || !canExecute(process.execPath)) return { kind: 'unsupported' };
  const written =
    Object.keys(credentials).length === 0 && keyed.length === 0
      ? undefined
      : writeHandover({ variables: credentials, arguments: keyed });
  if (written === undefined && snapshot.removed.length === 0) return { kind: 'unsupported' };
  const next: Record<string, string> = {};
  for (const [name, value] of Object.entries(env))
    if (value !== undefined && (written === undefined || credentials[name] === undefined))
      next[name] = value;
  if (snapshot.nodeOptions === undefined) delete next.NODE_OPTIONS;
  else next.NODE_OPTIONS = snapshot.nodeOptions;
  if (written !== undefined) next[handoverVariable] = written;
  const args = argv.slice(1);
  if (written !== undefined) for (const { index, shown } of keyed) args[index - 1] = shown;
  if (snapshot.removed.length > 0)
    process.stderr.write(
      `agent: ${snapshot.removed.join(' and ')} left out (for agent and what it starts): a heap snapshot holds the keys agent reads, and would be written where commands and the model read it\n`,
    );
  // Node's own flags (--inspect, --max-old-space-size…) and the script with its arguments.
  execve(process.execPath, [process.argv0, ...snapshot.execArgv, ...args], next);
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
function writeHandover(handover: Handover): string | undefined {
  for (const base of handoverBases()) {
    let folder: string | undefined;
    try {
      folder = fs.mkdtempSync(path.join(base, 'agent-handover-'));
      const file = path.join(folder, 'credentials.json');
      fs.writeFileSync(file, JSON.stringify(handover), { mode: 0o600, flag: 'wx' });
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
 * Reads and removes the file the first start wrote: its credential variables (for the heap: the
 * environ block stays without them) and its keyed arguments, each checked against the masked text
 * that stands in its place in `argv`. Only a 0600 regular file of this user, in a 0700 folder of
 * this user, holding credentials alone, is believed — a path set by anyone else fails.
 */
function takeHandover(file: string, argv: readonly string[]): Handover {
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
  const { variables, arguments: keyed } = (parsed ?? {}) as Partial<Handover>;
  if (!isRecord(variables) || !Array.isArray(keyed))
    throw problem('are not an object of variables and arguments');
  const handover: Handover = { variables: {}, arguments: [] };
  for (const [name, value] of Object.entries(variables)) {
    // Only credentials travel this way: a file that sets PATH or NODE_OPTIONS is not ours.
    if (typeof value !== 'string' || !isCredentialVariable(name, value))
      throw problem(`hold ${name}, which is not a credential variable`);
    Object.defineProperty(handover.variables, name, { value, enumerable: true });
  }
  for (const item of keyed as unknown[]) {
    const { index, shown, value } = (isRecord(item) ? item : {}) as Partial<KeyedArgument>;
    // Only an argument that carries a key, in the place of its own masked text.
    if (
      typeof index !== 'number' ||
      typeof value !== 'string' ||
      typeof shown !== 'string' ||
      index < 2 ||
      argv[index] !== shown ||
      keyedArguments(['', '', value])[0]?.shown !== shown
    )
      throw problem('hold an argument that is not a masked key of this command line');
    handover.arguments.push({ index, shown, value });
  }
  return handover;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
