import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { readRegularFile } from '@agent/core/regular-file';

/**
 * The git commands that only read, for the read-only command list: what git may be given, and
 * whether the repository's own configuration could make a reading command run something
 * (`core.fsmonitor`, a `textconv` driver, a clean filter: git runs them on `git status`/`diff`).
 */

// Options before the subcommand that change nothing about what it does.
const globalOptions = new Set(['--no-pager', '-P', '--no-optional-locks', '--literal-pathspecs']);

// Subcommands that read, whose many options are refused by pattern (below) rather than listed.
const readingSubcommands = new Set(
  (
    'status log diff show rev-parse ls-files ls-tree blame annotate describe shortlog grep cat-file ' +
    'count-objects show-ref for-each-ref merge-base name-rev rev-list whatchanged diff-tree ' +
    'diff-files diff-index check-ignore check-attr version show-branch cherry range-diff'
  ).split(' '),
);

/**
 * Options of those subcommands that write a file, run a program or read another repository:
 * `--output=x` writes, `--ext-diff` runs the external diff, `-O`/`--open-files-in-pager` runs a
 * pager, `--exec`/`--upload-pack` run commands.
 */
const refusedOption =
  /^(--output|--ext-diff|-O|--open-files-in-pager|--exec|--upload-pack|--receive-pack|--config|--edit|--git-dir|--work-tree)/;
const refusedLong = [
  '--output',
  '--ext-diff',
  '--open-files-in-pager',
  '--exec',
  '--upload-pack',
  '--receive-pack',
  '--config',
  '--edit',
  '--git-dir',
  '--work-tree',
];

/**
 * Whether `word`, given to `subcommand`, is or may be read by git as one of those options. git's
 * option parser (grep's, and every subcommand built on parse-options) takes short options bundled
 * — `-lOrm` is `-l` then `-O` with the pager `rm` — and a long option by any unambiguous prefix
 * (`--open-files=rm`): `git grep -lOrm TODO` deleted every file holding TODO, in read-only mode.
 * Fails closed: an `O` anywhere in a bundle of grep's short options counts (a pattern attached to
 * `-e` too), and a long option any refused one starts with.
 */
function refusedWord(word: string, subcommand: string): boolean {
  if (refusedOption.test(word)) return true;
  if (/^-[^-]/.test(word)) return subcommand === 'grep' && word.includes('O');
  const name = word.split('=')[0] ?? '';
  return (
    name.length > 2 && name.startsWith('--') && refusedLong.some((long) => long.startsWith(name))
  );
}

// `git branch` / `git tag`: listing options (`-a` is "all" to branch, "annotate" to tag); a name
// alone would create one.
const sharedListing =
  '-l --list --merged --no-merged --contains --no-contains --points-at --column --no-column ' +
  '--color --no-color -i --ignore-case --omit-empty --sort --format';
const listingOptions: Record<'branch' | 'tag', ReadonlySet<string>> = {
  branch: new Set(
    `${sharedListing} -a --all -r --remotes -v -vv --verbose --show-current --abbrev --no-abbrev`.split(
      ' ',
    ),
  ),
  tag: new Set(sharedListing.split(' ')),
};
// Listing options whose value may follow as the next word.
const listingValued = new Set([
  '--merged',
  '--no-merged',
  '--contains',
  '--no-contains',
  '--points-at',
  '--sort',
  '--format',
]);
const configReading = new Set([
  '--get',
  '--get-all',
  '--get-regexp',
  '--list',
  '-l',
  '--show-origin',
  '--show-scope',
  '--name-only',
  '--null',
  '-z',
  '--local',
  '--global',
  '--system',
  '--worktree',
  '--includes',
  '--no-includes',
  '--type',
  '--bool',
  '--int',
  '--path',
  '--default',
]);

/** `git branch`/`git tag` that only list; the words after the subcommand. */
function listingRefusal(subcommand: 'branch' | 'tag', args: readonly string[]): string | undefined {
  const listing = args.some((word) => word === '-l' || word === '--list' || /^-n\d*$/.test(word));
  for (let index = 0; index < args.length; index++) {
    const word = args[index] ?? '';
    const option = word.split('=')[0] ?? '';
    if (word.startsWith('-')) {
      if (
        !listingOptions[subcommand].has(option) &&
        !(subcommand === 'tag' && /^-n\d*$/.test(word))
      )
        return `git ${subcommand} ${option}`;
      if (listingValued.has(option) && !word.includes('=')) index++;
      continue;
    }
    if (!listing) return `git ${subcommand} given a name (that creates one)`;
  }
  return undefined;
}

/**
 * Whether `git <args>` only reads: the paths it reads (none are tracked: git runs read-only only
 * in the sandbox), or why it is not. Fails closed on global options that point git elsewhere
 * (`-C`, `--git-dir`, `-c`), subcommands not listed, and options that write or run programs.
 */
export function gitReadOnlyRefusal(args: readonly string[]): { paths: string[] } | string {
  let index = 0;
  while (index < args.length && (args[index] ?? '').startsWith('-')) {
    const option = args[index] ?? '';
    if (!globalOptions.has(option)) return `git ${option}`;
    index++;
  }
  const subcommand = args[index];
  if (subcommand === undefined) return 'git without a subcommand';
  const rest = args.slice(index + 1);
  const done = { paths: [] };
  if (readingSubcommands.has(subcommand)) {
    const refused = rest.find((word) => refusedWord(word, subcommand));
    return refused === undefined ? done : `git ${subcommand} ${refused.split('=')[0]}`;
  }
  switch (subcommand) {
    case 'branch':
    case 'tag':
      return listingRefusal(subcommand, rest) ?? done;
    case 'remote':
      return rest.every((word) => word === '-v' || word === '--verbose')
        ? done
        : `git remote ${rest[0] ?? ''}`;
    case 'stash': {
      const [action, ...more] = rest;
      if (action === 'list' && more.length === 0) return done;
      if (action === 'show') {
        const options = more.filter((word) => word.startsWith('-'));
        const names = more.filter((word) => !word.startsWith('-'));
        const known = ['-p', '--patch', '--stat', '--name-only', '--name-status', '--numstat'];
        if (options.every((word) => known.includes(word)) && names.length <= 1) return done;
      }
      return `git stash ${action ?? ''}`;
    }
    case 'reflog': {
      const [action, ...more] = rest;
      if (action !== undefined && !action.startsWith('-') && action !== 'show')
        return `git reflog ${action}`;
      const refused = more.find((word) => refusedWord(word, 'reflog'));
      return refused === undefined ? done : `git reflog ${refused}`;
    }
    case 'config': {
      // Only the reading forms: `git config --get x`, `--list`; `git config key value` writes.
      const reads = rest.some((word) => /^(--get|--get-all|--get-regexp|--list|-l)$/.test(word));
      const options = rest.filter((word) => word.startsWith('-'));
      const unknown = options.find((word) => !configReading.has(word.split('=')[0] ?? ''));
      if (!reads) return 'git config without --get or --list';
      return unknown === undefined ? done : `git config ${unknown}`;
    }
    default:
      return `git ${subcommand} is not a reading subcommand`;
  }
}

// What in a repository's configuration makes reading commands run a program: core.fsmonitor,
// diff.external, textconv and filter drivers, gpg programs (log.showSignature), pagers, hooks,
// includes of further files; and a partial clone's promisor remote, which `git show`, `log -p`,
// `blame` and `diff` fetch a missing object from — running its `uploadpack` or an `ext::` URL's
// command. Matched anywhere in the text, fail closed.
const runsSomething =
  /fsmonitor|textconv|command|program|external|\[\s*filter|include|pager|askpass|hook|proxy|helper|showsignature|driver|difffilter|editor|alternaterefs|promisor|partialclone|uploadpack|ext::/i;

/** What git would read its configuration from for `cwd`: git directories and the work tree. */
interface Repository {
  /** The git directory, and the common one of a linked worktree. */
  directories: string[];
  /** The folder holding `.git`; undefined for a bare repository. */
  workTree: string | undefined;
}

/** Largest git file read for the check (bytes); a real `.git/config` is a few kB. */
const maxGitFileBytes = 1024 * 1024;
const notRead = `cannot be read (not a regular file of at most ${maxGitFileBytes} bytes)`;

/**
 * A small file of the repository's git directory, read by this process itself (not in the
 * sandbox): the text, undefined when it does not exist, or `'unreadable'` — not a regular file,
 * over {@link maxGitFileBytes}, or not readable. A FIFO as `.git/config` (an unpacked archive
 * can hold one) blocked the read for ever and the run with it, deaf to Ctrl-C; a link to
 * `/dev/zero` read 740 MB before failing. Opened without blocking, judged on the opened file.
 */
async function readGitFile(file: string): Promise<string | undefined | 'unreadable'> {
  const outcome = await readRegularFile(file, { maxBytes: maxGitFileBytes });
  if (outcome.kind === 'missing') return undefined;
  return outcome.kind === 'read' ? outcome.bytes.toString('utf8') : 'unreadable';
}

async function exists(entry: string): Promise<boolean> {
  return (await fs.lstat(entry).catch(() => undefined)) !== undefined;
}

/**
 * Whether `folder` is itself a git directory, as git's discovery tests before going up (a bare
 * repository: `HEAD` beside `objects`/`refs`, or a `commondir`). Looser than git on purpose:
 * something that might be one counts, and its configuration is then checked.
 */
async function isGitDirectory(folder: string): Promise<boolean> {
  if (!(await exists(path.join(folder, 'HEAD')))) return false;
  for (const marker of ['objects', 'refs', 'commondir', 'config'])
    if (await exists(path.join(folder, marker))) return true;
  return false;
}

async function withCommonDirectory(gitDir: string): Promise<string[] | { refusal: string }> {
  const file = path.join(gitDir, 'commondir');
  const common = await readGitFile(file);
  if (common === 'unreadable') return { refusal: `${file} ${notRead}` };
  return common === undefined || common.trim() === ''
    ? [gitDir]
    : [gitDir, path.resolve(gitDir, common.trim())];
}

/**
 * The repository holding `cwd`, found as git finds it: in each folder from `cwd` up, a `.git`
 * folder or `gitdir:` file, else the folder itself as a bare repository.
 */
async function findRepository(cwd: string): Promise<Repository | { refusal: string } | undefined> {
  for (let folder = path.resolve(cwd); ; folder = path.dirname(folder)) {
    const candidate = path.join(folder, '.git');
    const stat = await fs.stat(candidate).catch(() => undefined);
    if (stat?.isDirectory() === true) {
      // A `.git` folder's `commondir` moves its configuration too (git reads `config` there): a
      // clean `.git/config` beside `commondir: ../.common` ran `.common/config`'s fsmonitor.
      const directories = await withCommonDirectory(candidate);
      return 'refusal' in directories ? directories : { directories, workTree: folder };
    }
    if (stat !== undefined && !stat.isDirectory()) {
      // A `.git` that is neither a folder nor a regular file (a FIFO, a device) is not read.
      const text = await readGitFile(candidate);
      const pointer = gitdirPointer(typeof text === 'string' && text !== 'unreadable' ? text : '');
      if (pointer === undefined)
        return { refusal: 'a .git file that does not name its git directory' };
      const directories = await withCommonDirectory(path.resolve(folder, pointer));
      return 'refusal' in directories ? directories : { directories, workTree: folder };
    }
    if (await isGitDirectory(folder)) {
      const directories = await withCommonDirectory(folder);
      return 'refusal' in directories ? directories : { directories, workTree: undefined };
    }
    if (path.dirname(folder) === folder) return undefined;
  }
}

/**
 * Why the repository's own configuration could make a reading git command run a program, or
 * undefined when it cannot (or there is no repository). A workspace's `.git/config` is as
 * untrusted as the rest of it: a downloaded project can set `core.fsmonitor` to any command. A
 * workspace that is itself a bare repository counts (git finds it so), and a repository with
 * submodules is refused outright: `git status` runs git in each, with that submodule's own
 * configuration (`.git/modules/<name>/config`, or a `.git` folder of its own).
 */
export async function gitConfigRefusal(cwd: string): Promise<string | undefined> {
  const repository = await findRepository(cwd);
  if (repository === undefined) return undefined;
  if ('refusal' in repository) return repository.refusal;
  if (
    repository.workTree !== undefined &&
    (await exists(path.join(repository.workTree, '.gitmodules')))
  )
    return `${path.join(repository.workTree, '.gitmodules')} names submodules, whose own configuration git also runs`;
  for (const directory of repository.directories) {
    if (await exists(path.join(directory, 'modules')))
      return `${path.join(directory, 'modules')} holds submodules, whose own configuration git also runs`;
    for (const name of ['config', 'config.worktree']) {
      const file = path.join(directory, name);
      const text = await readGitFile(file);
      if (text === undefined) continue;
      if (text === 'unreadable') return `${file} ${notRead}`;
      const found = runsSomething.exec(text);
      if (found !== null) return `${file} sets "${found[0]}", which git may run on a read`;
    }
  }
  return undefined;
}

/**
 * The path of a `.git` file's `gitdir:` line (a linked worktree or submodule). Read by lines, not
 * with `/^gitdir:\s*(.+?)\s*$/m`, which took quadratic time over a long line of blanks in a
 * hostile repository's `.git` file (40 s for 100 kB).
 */
function gitdirPointer(text: string): string | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith('gitdir:')) continue;
    const pointer = line.slice('gitdir:'.length).trim();
    if (pointer !== '') return pointer;
  }
  return undefined;
}
