/**
 * PATH without the entries that name the working directory: `.`, any relative folder, and an
 * empty entry (a leading, doubled or trailing `:` means "here" to execvp). The CLI runs in the
 * user's folder — a cloned repository — and programs it starts by name (bubblewrap, which is the
 * sandbox itself, ripgrep for the search tool, python3, language servers, the commands of bash)
 * were the repository's own files of those names, before any trust and outside the sandbox.
 */
import { homedir } from 'node:os';
import { delimiter, isAbsolute, join } from 'node:path';

/**
 * `path` with only absolute entries, and the entries left out (an empty one as `""`). A `~/bin`
 * entry is the home folder's (bash expands it when it looks a command up): kept, made absolute.
 */
export function absolutePathEntries(
  path: string,
  home = homedir(),
): { path: string; dropped: string[] } {
  const kept: string[] = [];
  const dropped: string[] = [];
  for (const entry of path.split(delimiter)) {
    const expanded =
      entry === '~' ? home : entry.startsWith('~/') ? join(home, entry.slice(2)) : entry;
    if (isAbsolute(expanded)) kept.push(expanded);
    else dropped.push(entry);
  }
  return { path: kept.join(delimiter), dropped };
}

/**
 * Drops the relative and empty entries of `env.PATH` in place; the notice to print once, or
 * undefined when there were none.
 */
export function keepAbsolutePath(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.PATH === undefined || env.PATH === '') return undefined;
  const { path, dropped } = absolutePathEntries(env.PATH);
  if (dropped.length === 0) return undefined;
  env.PATH = path;
  const names = dropped.map((entry) => (entry === '' ? '"" (empty)' : entry)).join(', ');
  return `agent: PATH entries left out: ${names} — they name the folder you are in, so a repository's own files would run as bwrap, rg, python3 or the commands of bash`;
}
