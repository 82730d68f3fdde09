import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { TouchedPaths } from '@agent/core';
import { classifyReadOnly } from './read-only-commands.js';
import { fileRedirects, parseShellCommand } from './shell-parser.js';
import { resolveRealPath } from './workspace.js';

/** Where a shell line's words are resolved. */
export interface ShellPathContext {
  /** The directory the line starts in. */
  cwd: string;
  /** What `~` expands to (the commands' `HOME`); `~` words are left out without it. */
  home?: string | undefined;
}

/** Words looked at per line, and paths a glob may add: the check stays cheap on any line. */
const maxWords = 512;
const maxGlobMatches = 256;
const maxBases = 8;

const globCharacters = /[*?[]/;
// Builtins whose arguments are text, never opened: `echo secret.txt is here` reads nothing.
const textOnly = new Set(['echo', 'printf', ':', 'true', 'false']);

/** `~` and `~/x` with `home`, as bash expands them; undefined for `~user` or without a home. */
function withoutTilde(word: string, home: string | undefined): string | undefined {
  if (!word.startsWith('~')) return word;
  if (home === undefined || (word !== '~' && !word.startsWith('~/'))) return undefined;
  return path.join(home, word.slice(1));
}

/** The real paths `word` names (a glob's matches), or none when it names nothing that exists. */
async function existingPaths(word: string, cwd: string, glob: boolean): Promise<string[]> {
  if (glob && typeof fs.glob === 'function') {
    const found: string[] = [];
    try {
      for await (const match of fs.glob(word, { cwd })) {
        found.push(await resolveRealPath(path.resolve(cwd, match)));
        if (found.length >= maxGlobMatches) break;
      }
    } catch {
      // An unreadable directory on the way: what was found stands.
    }
    return found;
  }
  const absolute = path.resolve(cwd, word);
  try {
    await fs.lstat(absolute);
    return [await resolveRealPath(absolute)];
  } catch {
    return [];
  }
}

/**
 * The real paths a bash line names as files, for path rules (`deny read_file(.env)` then also
 * covers `cat .env`): each argument that is an existing file or directory (symlinks followed;
 * a glob's matches; the value of `--opt=path`) is read — and, unless every command of the line
 * only reads, written too, as is each argument naming a file that does not exist yet — each `<` target is read, and each
 * writing redirection's target (`>`, `>>`, `&>`, `<>`…) is written, existing or not; relative
 * words are resolved from the start and from each literal `cd`/`pushd` before them. Words bash
 * expands from variables or commands cannot be known and are left out: this is the rules' view
 * of a line, and the sandbox holds what it cannot see. Never throws.
 */
export async function shellTouchedPaths(
  source: string,
  context: ShellPathContext,
): Promise<TouchedPaths> {
  const read = new Set<string>();
  const write = new Set<string>();
  let budget = maxWords;
  const { cwd, home } = context;
  // Where relative words may be resolved: the start, and every directory a literal `cd` or
  // `pushd` before them may have moved to (`cd sub && cat .env` reads sub/.env).
  const bases = [cwd];
  // A line of reading commands only reads the files it names; any other may write them (`sed -i
  // f`, `cp x f`, `rm f`, `touch new`), so its file words are under write rules too, existing or not.
  const onlyReads = classifyReadOnly(source).readOnly;
  try {
    for (const command of parseShellCommand(source).commands) {
      const name = command.words[0] ?? '';
      const target = command.words[1];
      if (
        (name === 'cd' || name === 'pushd') &&
        target !== undefined &&
        command.expanding?.[1] !== true &&
        !target.startsWith('-') &&
        bases.length < maxBases
      ) {
        const expanded = withoutTilde(target, home);
        if (expanded !== undefined)
          bases.push(...bases.map((base) => path.resolve(base, expanded)).slice(0, maxBases));
      }
      for (const [index, raw] of command.words.entries()) {
        if (index === 0 || textOnly.has(name) || budget-- <= 0) continue;
        let word = raw;
        if (word.startsWith('-')) {
          const equals = word.indexOf('=');
          if (equals === -1) continue;
          word = word.slice(equals + 1);
        }
        if (word === '' || /[$`]/.test(word)) continue;
        const expanded = withoutTilde(word, home);
        if (expanded === undefined) continue;
        const glob = command.expanding?.[index] !== false && globCharacters.test(expanded);
        for (const base of path.isAbsolute(expanded) ? [cwd] : bases) {
          const found = await existingPaths(expanded, base, glob);
          for (const real of found) read.add(real);
          if (onlyReads) continue;
          for (const real of found) write.add(real);
          if (found.length === 0 && !glob) {
            const missing = await resolveRealPath(path.resolve(base, expanded)).catch(
              () => undefined,
            );
            if (missing !== undefined) write.add(missing);
          }
        }
      }
      for (const redirect of fileRedirects(command)) {
        if (redirect.operator.startsWith('<<') || /[$`]/.test(redirect.target)) continue;
        const expanded = withoutTilde(redirect.target, home);
        if (expanded === undefined) continue;
        for (const base of path.isAbsolute(expanded) ? [cwd] : bases) {
          const real = await resolveRealPath(path.resolve(base, expanded)).catch(() => undefined);
          if (real === undefined) continue;
          if (redirect.operator === '<' || redirect.operator === '<>') read.add(real);
          if (redirect.operator !== '<') write.add(real);
        }
      }
    }
  } catch {
    // Whatever was found stands; the sandbox holds the rest.
  }
  return { read: [...read], write: [...write] };
}
