/**
 * `$AGENT_HOME` holds what runs as the user and what only the user may read: the settings (their
 * hooks run, their `env` holds keys), MCP servers' tokens, sessions, journals, and Node's compile
 * cache — code the CLI loads at every start. It was created by Node's compile cache with the
 * process's umask, so under `umask 000` (a container's default, some CI images) `~/.agent`,
 * `cache` and `cache/compile` were 0777: any local user could plant a settings file with a hook,
 * swap `sessions` for a folder of theirs, or leave code-cache entries the next start loads.
 *
 * At start the home is created 0700 (whatever the umask), and so is `cache/compile` before Node
 * uses it. An existing home, or a folder at its top (and `cache/compile`), that others may write
 * is closed to them, and said; a file is never made private after the fact (what others wrote
 * into it would become ours): the settings file is refused, the trust store and tool pins are
 * refused by their readers. One that belongs to another user (not root) is refused: it is theirs.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CliError } from './cli-error.js';

/** What {@link securePrivateHome} changed, one entry per folder: `cache (was 0777)`. */
export interface PrivateHomeOutcome {
  madePrivate: string[];
}

const writableByOthers = 0o022;
/** `$AGENT_HOME/trusted-folders.json` (@agent/workspace-trust's store). */
const trustStoreName = 'trusted-folders.json';

/**
 * Creates `home` (0700) and its compile-cache folder (0700); closes to others each of its folders
 * (at its top, and `cache/compile`) that others may write. Throws a CliError naming a path
 * another user (not root) owns, or a settings file others may write. A home that cannot
 * be created (a read-only file system, a home nobody can write) is left to the code that uses it.
 */
export function securePrivateHome(home: string): PrivateHomeOutcome {
  const madePrivate: string[] = [];
  const uid = process.getuid?.();
  // Not on Windows, which has neither owners by uid nor these modes.
  if (uid === undefined) return { madePrivate };
  try {
    fs.mkdirSync(home, { recursive: true, mode: 0o700 });
  } catch (error) {
    // A file where the home or a folder above it should be (AGENT_HOME set to a file, a ~/.agent
    // file of another tool): every read under it then said only "Cannot read …: ENOTDIR".
    const code = (error as { code?: unknown }).code;
    if (code === 'EEXIST' || code === 'ENOTDIR') throw new CliError(notAFolder(home));
    return { madePrivate };
  }
  const cache = path.join(home, 'cache');
  const compile = path.join(cache, 'compile');
  const check = (entry: string, shown: string) => {
    let stat: fs.Stats;
    try {
      // The home may be a link (dotfiles); what is in it is judged as it is.
      stat = entry === home ? fs.statSync(entry) : fs.lstatSync(entry);
    } catch {
      return;
    }
    if (stat.isSymbolicLink()) return;
    // Root's own files (left by a `sudo agent` that kept HOME) can do nothing root could not.
    if (stat.uid !== uid && stat.uid !== 0)
      throw new CliError(
        `${entry} belongs to uid ${stat.uid}, not to you (uid ${uid}): settings, hooks and cached code in ${home} would run as you. Remove it, or set AGENT_HOME to a folder of yours`,
      );
    // Root's: not ours to change (a home under /root read by a run as another user).
    if (stat.uid !== uid) return;
    // The trust store's mode is left as it is: its reader ignores a store others may write, for
    // this run (fail closed). Made private here first, a store anyone could have filled was then
    // believed and its folders' hooks ran.
    if (shown === trustStoreName) return;
    const mode = stat.mode & 0o777;
    if ((mode & writableByOthers) === 0) return;
    if (!stat.isDirectory()) {
      // A file others could write is never made private here: that would make whatever they
      // wrote into it ours. Its reader refuses it (the trust store, the MCP tool pins); the
      // settings, whose hooks and servers run, are refused here.
      if (entry === path.join(home, 'settings.json'))
        throw new CliError(
          `${entry} may be written by other users (mode ${mode.toString(8).padStart(4, '0')}): its hooks, env and MCP servers could be theirs. Check it, then chmod 600 ${entry}`,
        );
      return;
    }
    // A folder is closed to others entirely: a folder of theirs could wait inside one left open.
    fs.chmodSync(entry, mode & 0o700);
    madePrivate.push(`${shown} (was ${mode.toString(8).padStart(4, '0')})`);
  };
  check(home, home);
  let names: string[] = [];
  try {
    names = fs.readdirSync(home);
  } catch {
    // Unreadable: nothing in it is used either.
  }
  for (const name of names) check(path.join(home, name), name);
  try {
    fs.mkdirSync(compile, { recursive: true, mode: 0o700 });
  } catch {
    // No cache then: Node's own attempt fails the same way and the CLI runs without one.
  }
  check(compile, 'cache/compile');
  return { madePrivate };
}

/** The sentence for a home that is a file, or under one. */
function notAFolder(home: string): string {
  let file = home;
  for (let at = home; at !== path.dirname(at); at = path.dirname(at)) {
    const stat = fs.statSync(at, { throwIfNoEntry: false });
    if (stat === undefined) continue;
    if (!stat.isDirectory()) file = at;
    break;
  }
  const where = file === home ? `${home} is a file` : `${file}, on its path, is a file`;
  const variable =
    process.env.AGENT_HOME === undefined || process.env.AGENT_HOME === ''
      ? 'set AGENT_HOME to another folder (export AGENT_HOME=$HOME/.agent-cli)'
      : 'point AGENT_HOME at a folder (it is created when missing), or unset it to use ~/.agent';
  return `${where}, not a folder: agent keeps its settings, sessions and trusted folders in ${home}. Move the file away, or ${variable}`;
}

/** The notice for what {@link securePrivateHome} made private, or undefined when nothing. */
export function privateHomeNotice(home: string, outcome: PrivateHomeOutcome): string | undefined {
  if (outcome.madePrivate.length === 0) return undefined;
  return `other users could write in ${home} (${outcome.madePrivate.join(', ')}): made private — they could have planted settings, hooks or cached code that runs as you; look through it if you did not set it up so`;
}
