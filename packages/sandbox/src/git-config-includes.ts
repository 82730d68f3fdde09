// A repository's configuration may include other files (`git config include.path
// ../tools.gitconfig`: a team's shared settings kept in the repository; `[includeIf "…"] path`
// too). The sandbox keeps `.git` read-only because its config runs commands (`core.fsmonitor`,
// `core.pager`, aliases) — but an included file in the workspace ran the same commands from a
// writable place: a sandboxed command wrote `core.fsmonitor = <command>` there, and the user's
// next `git status`, after the session, ran it as the user. Such files are kept read-only too.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isInside, realPath } from './real-paths.js';

/** How deep includes are followed (git's own limit is 10). */
export const maxIncludeDepth = 10;
/** More of a config file than git configurations hold is not read. */
const maxConfigBytes = 1024 * 1024;

/** The `path` values of a git config text's `[include]` and `[includeIf "…"]` sections, as written. */
export function gitConfigIncludePaths(text: string): string[] {
  const paths: string[] = [];
  let including = false;
  for (const raw of text.split('\n')) {
    const line = raw.replace(/(^|\s)[#;].*$/, '').trim();
    const section = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"(?:[^"\\]|\\.)*")?\s*\]\s*(.*)$/.exec(line);
    if (section !== null) {
      including = /^include(?:if)?$/i.test(section[1] ?? '');
      if (section[2] === '') continue;
    }
    const entry = /^(?:\[[^\]]*\]\s*)?path\s*=\s*(.*)$/i.exec(line);
    if (!including || entry === null) continue;
    const value = (entry[1] ?? '').trim().replace(/^"(.*)"$/, '$1');
    if (value !== '') paths.push(value);
  }
  return paths;
}

/** The text of a git config file: a regular file of a sensible size; undefined otherwise (or unreadable). */
export function readConfig(file: string): string | undefined {
  try {
    const stat = fs.statSync(file);
    if (!stat.isFile() || stat.size > maxConfigBytes) return undefined;
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * The existing files inside `roots` that the configuration of the git directory `gitDirectory`
 * includes (`config` and `config.worktree`, and what those include in turn), outside that
 * directory. `~/…` paths are the home's, left to the home's own protection.
 */
export function includedConfigFiles(gitDirectory: string, roots: readonly string[]): string[] {
  return includeTargets(gitDirectory, roots).existing;
}

/**
 * The files inside `roots` that the configuration of `gitDirectory` includes but that do not
 * exist yet, whose folder does (by the folder's real path; a dangling link's target, one hop):
 * git skips a missing include, so a command that made one — `core.fsmonitor = …` in it — had
 * it run with the user's next git command. A placeholder (an empty folder, which git skips as
 * well) bound read-only keeps it from being made.
 */
export function missingIncludedConfigFiles(
  gitDirectory: string,
  roots: readonly string[],
): string[] {
  return includeTargets(gitDirectory, roots).missing;
}

function includeTargets(
  gitDirectory: string,
  roots: readonly string[],
): { existing: string[]; missing: string[] } {
  const found = new Set<string>();
  const missing = new Set<string>();
  const inRoots = (entry: string) =>
    !isInside(gitDirectory, entry) && roots.some((root) => isInside(root, entry) && entry !== root);
  const visit = (config: string, depth: number) => {
    if (depth > maxIncludeDepth) return;
    const text = readConfig(config);
    if (text === undefined) return;
    for (const value of gitConfigIncludePaths(text)) {
      if (value.startsWith('~')) continue;
      // By real path, existing: bound read-only where it is (a link's target; a dangling link,
      // which bubblewrap could not bind, stands for its target, not made yet).
      const written = path.resolve(path.dirname(config), value);
      const included = realPath(written);
      if (included === undefined) {
        const absent = notMadeYet(written);
        if (absent !== undefined && inRoots(absent)) missing.add(absent);
        continue;
      }
      if (found.has(included) || !inRoots(included)) continue;
      found.add(included);
      visit(included, depth + 1);
    }
  };
  for (const name of ['config', 'config.worktree']) visit(path.join(gitDirectory, name), 0);
  return { existing: [...found], missing: [...missing] };
}

/** Where a file at `entry` (missing, or a dangling link) would be made, by its folder's real path. */
function notMadeYet(entry: string): string | undefined {
  let target = entry;
  if (fs.lstatSync(entry, { throwIfNoEntry: false })?.isSymbolicLink() === true)
    target = path.resolve(path.dirname(entry), fs.readlinkSync(entry));
  if (fs.lstatSync(target, { throwIfNoEntry: false }) !== undefined) return undefined;
  const folder = realPath(path.dirname(target));
  return folder === undefined ? undefined : path.join(folder, path.basename(target));
}
