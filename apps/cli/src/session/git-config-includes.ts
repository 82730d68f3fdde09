/**
 * The workspace files the repository's git configuration includes (`git config include.path
 * ../tools.gitconfig`, a team's shared settings kept in the repository; `[includeIf "…"] path`
 * too). The sandbox keeps `.git` read-only, but not the file it includes: a sandboxed command
 * wrote `core.fsmonitor = <command>` there, and a trusted hook's `git status` ran that command as
 * the user, outside the sandbox, right after the call. Each is pinned with every hook (any may
 * run git), by content, there or not.
 */
import { createHash } from 'node:crypto';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { readRegularFileSync } from '@agent/core/regular-file';
import { gitConfigIncludePaths } from '@agent/sandbox';

/** How deep includes are followed (git's own limit is 10). */
const maxDepth = 10;

function isWithin(root: string, path: string): boolean {
  const rest = relative(root, path);
  return rest !== '' && rest !== '..' && !rest.startsWith(`..${sep}`) && !isAbsolute(rest);
}

/** A file's pin: `sha256:` of its content, `none`, or what else is there. */
function contentPin(path: string): string {
  const outcome = readRegularFileSync(path, { maxBytes: 1024 * 1024 });
  if (outcome.kind === 'read')
    return `sha256:${createHash('sha256').update(outcome.bytes).digest('hex')}`;
  return outcome.kind === 'missing' ? 'none' : `(${outcome.kind})`;
}

/**
 * The workspace files `<root>/.git/config` (and `config.worktree`) includes, in turn too (outside `.git`, which the
 * sandbox keeps read-only), each under `.git/config includes <path>` with its pin; `looked` is
 * given each path tried.
 */
export function gitConfigIncludes(root: string, looked?: Set<string>): Record<string, string> {
  const pins: Record<string, string> = {};
  const gitDirectory = join(root, '.git');
  const visit = (config: string, depth: number) => {
    if (depth > maxDepth) return;
    const outcome = readRegularFileSync(config, { maxBytes: 1024 * 1024 });
    if (outcome.kind !== 'read') return;
    for (const value of gitConfigIncludePaths(Buffer.from(outcome.bytes).toString('utf8'))) {
      // `~/…` is the user's home, outside the workspace; a relative path is from the including file.
      if (value.startsWith('~')) continue;
      const included = resolve(dirname(config), value);
      if (!isWithin(root, included)) continue;
      if (included === gitDirectory || included.startsWith(`${gitDirectory}${sep}`)) continue;
      const name = `.git/config includes ${relative(root, included)}`;
      if (pins[name] !== undefined) continue;
      looked?.add(included);
      pins[name] = contentPin(included);
      visit(included, depth + 1);
    }
  };
  // `config.worktree` too, where `extensions.worktreeConfig` has git read it.
  for (const config of ['config', 'config.worktree']) {
    looked?.add(join(gitDirectory, config));
    visit(join(gitDirectory, config), 0);
  }
  return pins;
}
