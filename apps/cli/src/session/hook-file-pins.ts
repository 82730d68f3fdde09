/**
 * The project files a hook running outside the sandbox executes, pinned when the session starts —
 * and those a PreToolUse hook runs, wherever it runs: its `allow` lets a call run unasked.
 * A sandboxed command (or a file tool) may write anywhere in the workspace: a hook script it
 * rewrote (`.agent/hooks/post.sh`), a `node_modules/.bin/prettier` it planted for the user's
 * `npx prettier` hook, ran as the user, outside the sandbox, at the next tool call. Trust pins
 * these files between sessions (trust-scripts.ts); this pins them within one.
 */
import { type BigIntStats, lstatSync, readlinkSync, type Stats, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, relative, sep } from 'node:path';
import type { CommandHook, HooksConfig } from '@agent/command-hooks';
import { readRegularFileSync } from '@agent/core/regular-file';
import { shimSettingsFiles } from '../config/tool-runner-files.js';
import {
  projectFileDigests,
  pythonPathFolders,
  pythonStartupFiles,
  type SearchFolders,
} from '../config/trust-scripts.js';
import { gitConfigIncludes } from './git-config-includes.js';
import type { HookPinRecord } from './hook-pin-record.js';

/** Programs whose next word (not an option) is the script they run. */
const interpreters = new Set([
  'sh',
  'bash',
  'zsh',
  'dash',
  'ksh',
  'fish',
  'source',
  '.',
  'node',
  'deno',
  'bun',
  'tsx',
  'ts-node',
  'python',
  'python3',
  'ruby',
  'perl',
  'bundle',
  'php',
  'lua',
  'npx',
  'bunx',
  'pnpx',
  'exec',
  'uv',
  'run',
  'env',
]);

/** Runners whose next word (not an option) is a script, a target or a program they run in turn. */
const continuing = new Set([
  'npm',
  'pnpm',
  'yarn',
  'make',
  'just',
  'rake',
  'mise',
  'pipenv',
  'poetry',
  'pdm',
  'hatch',
  'direnv',
]);

/** Options of those programs whose value is the next word: a folder to search, a file to preload. */
const optionsWithValue = new Set(['-I', '-r', '--require', '--import']);

/**
 * The words of `command` that name what runs: each simple command's program, and the script an
 * interpreter or runner is given (`sh x.sh`, `node s.mjs`, `npx eslint`, `npm run lint`). Files
 * a hook is given to work on (`prettier --write src.js`) are left out: the model changes those
 * as its work, and a formatter run on them is the point of the hook.
 */
function executedWords(command: string): string[] {
  const executed: string[] = [];
  for (const segment of command.split(/&&|\|\||[;&|\n()`]/)) {
    const words = segment
      .trim()
      .split(/\s+/)
      .filter((word) => word !== '');
    // Assignments before the program (`FOO=1 ./x.sh`) are not it.
    let at = words.findIndex((word) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(word));
    while (at !== -1 && at < words.length) {
      const word = words[at] ?? '';
      executed.push(word);
      const program = word.replace(/^.*\//, '').replace(/['"]/g, '');
      if (!interpreters.has(program) && !continuing.has(program)) break;
      // The next word that is not an option is what it runs (a script, a bin, a target); an
      // option's own value (`ruby -I lib x.rb`, `node -r ./setup.cjs x.js`) is not, though what
      // it preloads runs too.
      let next = at + 1;
      for (; next < words.length && (words[next] ?? '').startsWith('-'); next++)
        if (optionsWithValue.has(words[next] ?? '') && next + 1 < words.length) {
          next++;
          if (words[next - 1] !== '-I') executed.push(words[next] ?? '');
        }
      at = next;
    }
  }
  return executed;
}

/**
 * Where PATH finds the programs `words` names bare (`black`) in the project: a PATH entry inside
 * it (an activated `.venv/bin`, a `node_modules/.bin` put there) finds a file a sandboxed command
 * could write, which the hook then runs outside the sandbox. Each such candidate, there or not.
 */
function onWorkspacePath(words: readonly string[], projectRoot: string): string[] {
  const entries = workspacePath(projectRoot);
  return words
    .filter((word) => /^[\w][\w.+-]*$/.test(word))
    .flatMap((word) => entries.map((entry) => join(entry, word)));
}

/** PATH's folders inside the project (an activated `.venv/bin`), where a sandboxed command may write. */
function workspacePath(projectRoot: string): string[] {
  return (process.env.PATH ?? '')
    .split(delimiter)
    .filter((entry) => isAbsolute(entry) && isWithin(projectRoot, entry));
}

function isWithin(root: string, path: string): boolean {
  const rest = relative(root, path);
  return rest === '' || (rest !== '..' && !rest.startsWith(`..${sep}`) && !isAbsolute(rest));
}

/**
 * Variables whose value makes a program load code before its own, or decide what it runs:
 * `NODE_OPTIONS=--require ./preload.cjs`, `BASH_ENV=./env.sh`, `GIT_CONFIG_GLOBAL=./gitconfig`
 * (its `core.fsmonitor`), `PYTHONPATH=.` (its `sitecustomize.py`), `LD_PRELOAD`, `PERL5OPT`…
 */
const loaderVariable =
  /^(LD_|DYLD_|GIT_|BASH_ENV$|ENV$|PERL5|PYTHON|NODE_OPTIONS$|NODE_PATH$|RUBYOPT$|RUBYLIB$|JAVA_TOOL_OPTIONS$|_JAVA_OPTIONS$|JDK_JAVA_OPTIONS$|npm_config_|NPM_CONFIG_|ZDOTDIR$)/;

/**
 * What `env` — the environment a hook or server runs with, a trusted project's `env` applied —
 * makes its programs load of the project: the words of each loader variable's value, and
 * Python's `sitecustomize.py` and `usercustomize.py` in each `PYTHONPATH` folder (there or not: a
 * planted one counts). A sandboxed command rewrote the `./preload.cjs` of a trusted
 * `NODE_OPTIONS=--require ./preload.cjs`, and the next `node` hook ran it outside the sandbox.
 */
export function environmentWords(env: Readonly<Record<string, string | undefined>>): string[] {
  const found: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || !loaderVariable.test(name)) continue;
    found.push(value, ...pythonStartupFiles(name, value));
  }
  return found;
}

/**
 * The files `command` runs in `projectRoot` and their digests, as one comparable text; `looked`
 * is filled with every path tried for it (there or not). `environment`: what the environment it
 * runs with makes it load ({@link environmentWords}).
 */
export function commandPin(
  command: string,
  projectRoot: string,
  looked?: Set<string>,
  environment: readonly string[] = [],
  search: Omit<SearchFolders, 'programs'> = { python: [], node: [], perl: [], ruby: [] },
): string {
  const executed = executedWords(command);
  const digests = projectFileDigests(
    [[...executed, ...onWorkspacePath(executed, projectRoot)].join(' '), ...environment],
    projectRoot,
    {
      ...(looked === undefined ? {} : { looked }),
      // And what its scripts run by name there (`ruff` in a `make lint` recipe), and import
      // from PYTHONPATH's and NODE_PATH's folders there.
      search: { programs: workspacePath(projectRoot), ...search },
      // What its inline code loads (`python3 -c "import json…"`), which its words do not hold.
      inline: [command],
    },
  );
  const repository = join(projectRoot, '.git');
  looked?.add(repository);
  const entry = repositoryEntry(repository);
  // And the workspace files its configuration includes (none, the usual case: nothing added).
  const includes = gitConfigIncludes(projectRoot, looked);
  // A repository's own folder, the usual case, is left out: the pin is what it always was.
  return JSON.stringify(
    entry === 'directory'
      ? { ...digests, ...includes }
      : { ...digests, ...includes, '.git': entry },
  );
}

/**
 * What git finds at the project root, where hooks and servers start: no `.git` (git looks in the
 * folders above, which no sandboxed command can write), a folder, or a `.git` file or link and
 * where it points. A sandbox keeps an existing `.git` read-only, but where there was none a
 * sandboxed command made one — its `config` saying `core.fsmonitor = <command>` — and a trusted
 * hook's `git status` ran that command as the user, outside the sandbox, right after the call.
 * Pinned for every command: any hook may run git (a script, lint-staged, husky).
 */
function repositoryEntry(entry: string): string {
  let stats: Stats;
  try {
    stats = lstatSync(entry);
  } catch {
    return 'none';
  }
  if (stats.isDirectory()) return 'directory';
  if (stats.isSymbolicLink()) return `link to ${readlinkSync(entry)}`;
  if (!stats.isFile()) return 'other';
  const outcome = readRegularFileSync(entry, { maxBytes: 4096 });
  return outcome.kind === 'read'
    ? `file ${Buffer.from(outcome.bytes).toString('utf8')}`
    : `file (${outcome.kind})`;
}

/**
 * The record's entry for the `.git` a session found made at the project root (no command has
 * this name: a command line holds no NUL).
 */
const madeRepository = '\0.git made during a session';

/**
 * Call at each tool call and at the end of any session, with hooks or none: remembers in `record`
 * a `.git` at the project root that was not what the session started with (a folder a sandboxed
 * command made where there was none, a `.git` file pointing elsewhere). A session with no hook
 * pinned nothing, so the next one — after a pull or the user added a hook that runs git, or after
 * the folder was trusted — pinned the planted `.git` as the user's, and the hook's `git status`
 * ran its `core.fsmonitor` as the user, outside the sandbox.
 */
export function repositoryWatch(projectRoot: string, record: HookPinRecord): () => void {
  const repository = join(projectRoot, '.git');
  const atStart = repositoryEntry(repository);
  return () => {
    const now = repositoryEntry(repository);
    if (now !== atStart && now !== 'none') record.add(madeRepository, now);
  };
}

/** The names of the files whose digests differ between two pins. */
export function changedFiles(before: string, after: string): string[] {
  const old = JSON.parse(before) as Record<string, string>;
  const now = JSON.parse(after) as Record<string, string>;
  return [...new Set([...Object.keys(old), ...Object.keys(now)])].filter(
    (name) => old[name] !== now[name],
  );
}

/**
 * What the stats of `paths` say, as one text — undefined when it proves nothing. A change to a
 * file's content changes its ctime, which no process can set (utimes sets it to now), and its
 * inode or size when it is replaced. But a file changed twice within one tick of the file
 * system's clock (a few ms; 2 s on FAT) keeps its ctime: stats taken that close to a change are
 * not kept, and the next look reads the files again (git's "racy" index entries).
 */
function statsOf(paths: Iterable<string>): string | undefined {
  const takenNs = BigInt(Date.now()) * 1_000_000n;
  const parts: string[] = [];
  for (const path of paths)
    for (const stat of [statSync, lstatSync]) {
      let stats: BigIntStats;
      try {
        stats = stat(path, { bigint: true });
      } catch {
        parts.push('-');
        continue;
      }
      if (takenNs - stats.ctimeNs < racyNs) return undefined;
      parts.push(
        `${stats.dev}:${stats.ino}:${stats.mode}:${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}`,
      );
    }
  return parts.join(' ');
}

const racyNs = 3_000_000_000n;

/** A session's pins of the project files its hooks run. */
export interface HookFilePins {
  /**
   * The `refuseOutside` of `CommandHooks` (asked for hooks outside the sandbox and for every
   * PreToolUse hook): why a hook must not run now — a project file its command runs was changed,
   * made or removed since the session started, or is as an earlier session found it changed —
   * or undefined.
   */
  refuse(hook: CommandHook): string | undefined;
  /**
   * After each tool call and at the session's end: remembers each hook whose files changed
   * during the session, for the next one — then, not only at a close that a SIGKILL or an OOM
   * kill never reaches. Reads a hook's files only when a stat of those it tried says one changed.
   */
  recordChanges(): void;
}

/** Pins the project files of `config`'s hooks now; `record` keeps what sessions found changed. */
export function hookFilePins(
  config: HooksConfig,
  projectRoot: string,
  record: HookPinRecord,
  env: Readonly<Record<string, string | undefined>> = process.env,
): HookFilePins {
  // The hooks' environment is this process's (a trusted project's `env` applied at start).
  // And, where PATH runs programs through a version manager's shims, what those read of the project.
  const environment = [...environmentWords(env), ...shimSettingsFiles(env.PATH)];
  const search = {
    python: pythonPathFolders(env.PYTHONPATH, projectRoot),
    node: pythonPathFolders(env.NODE_PATH, projectRoot),
    perl: pythonPathFolders(env.PERL5LIB ?? env.PERLLIB, projectRoot),
    ruby: pythonPathFolders(env.RUBYLIB, projectRoot),
  };
  const pinOf = (command: string, root: string, looked?: Set<string>) =>
    commandPin(command, root, looked, environment, search);
  const watchRepository = repositoryWatch(projectRoot, record);
  const pins = new Map<string, string>();
  // Per command: the paths its pin tried, and their stats when last its files were read.
  const looks = new Map<string, { paths: Set<string>; stats: string | undefined }>();
  for (const entries of Object.values(config))
    for (const entry of entries ?? [])
      for (const hook of entry.hooks)
        if (!pins.has(hook.command)) {
          const paths = new Set<string>();
          pins.set(hook.command, pinOf(hook.command, projectRoot, paths));
          looks.set(hook.command, { paths, stats: statsOf(paths) });
        }
  const acts = (hook: CommandHook) =>
    hook.sandbox === false
      ? 'this hook runs outside the sandbox'
      : 'this hook answers for you whether a call may run (outside the sandbox too)';
  const changedNow = (
    command: string,
    looked?: Set<string>,
  ): { pin: string; files: string[] } | undefined => {
    const before = pins.get(command);
    if (before === undefined) return undefined;
    const pin = pinOf(command, projectRoot, looked);
    const files = changedFiles(before, pin);
    return files.length === 0 ? undefined : { pin, files };
  };
  return {
    refuse(hook) {
      const before = pins.get(hook.command);
      if (before === undefined) return undefined;
      const changed = changedNow(hook.command);
      if (changed !== undefined) {
        record.add(hook.command, changed.pin);
        return `the project files it runs changed during this session (${changed.files.join(', ')}) — a command or the model may have written them, and ${acts(hook)}; look at them: once you change them, or remove ${record.file}, a new session runs it`;
      }
      if (record.has(hook.command, before)) {
        // A `.git` that is not there is no file to look at.
        const files = Object.entries(JSON.parse(before) as Record<string, string>)
          .filter(([, digest]) => digest !== 'none')
          .map(([name]) => name);
        return `the project files it runs are as an earlier session left them, changed during it (${files.join(', ')}) — a command or the model may have written them, and ${acts(hook)}; look at them: once you change them, or remove ${record.file}, a new session runs it`;
      }
      if (record.has(madeRepository, repositoryEntry(join(projectRoot, '.git'))))
        return `the .git at the project root was made during an earlier session — a command or the model may have written its config (core.fsmonitor, core.hooksPath run commands), and ${acts(hook)}, where any command may run git; look at .git/config: once you have, remove ${record.file} and a new session runs it`;
      return undefined;
    },
    recordChanges() {
      watchRepository();
      for (const [command, last] of looks) {
        if (last.stats !== undefined && statsOf(last.paths) === last.stats) continue;
        const paths = new Set<string>();
        const changed = changedNow(command, paths);
        if (changed !== undefined) record.add(command, changed.pin);
        looks.set(command, { paths, stats: statsOf(paths) });
      }
    },
  };
}
