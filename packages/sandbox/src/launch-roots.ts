import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { readRegularFileSync } from '@agent/core/regular-file';
import { isInside, realPath } from './real-paths.js';

/** Directories the sandbox replaces with empty ones: a program that lives there would vanish. */
const replacedDirectories = ['/tmp', '/dev/shm', '/run'];

/** `file` as the shell would find it: a path (against `cwd`), or a name looked up on PATH. */
function resolveExecutable(
  file: string,
  cwd: string,
  searchPath: string | undefined,
): string | undefined {
  if (file.includes('/')) return realPath(path.resolve(cwd, file));
  for (const directory of (searchPath ?? '').split(path.delimiter)) {
    if (directory === '') continue;
    const candidate = path.join(directory, file);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      if (fs.statSync(candidate).isFile()) return realPath(candidate);
    } catch {
      // Not here: the next directory of PATH.
    }
  }
  return undefined;
}

/**
 * `file`'s first `maxBytes` (`larger: 'head'`), or all of it when it is at most `maxBytes`
 * (`'refuse'`); undefined when it is not a regular file (or too big). Opened without blocking
 * and checked on the descriptor: a FIFO swapped in for a program after its path was resolved
 * would otherwise hold the launch (and the process: these reads are synchronous) for ever.
 */
function readRegular(
  file: string,
  maxBytes: number,
  larger: 'head' | 'refuse',
): Buffer | undefined {
  const outcome = readRegularFileSync(file, { maxBytes, larger });
  return outcome.kind === 'read' ? outcome.bytes : undefined;
}

/** The interpreter a script names on its `#!` line (through `env`), if any. */
function interpreterOf(
  script: string,
  cwd: string,
  searchPath: string | undefined,
): string | undefined {
  const head = readRegular(script, 256, 'head')?.toString('utf8');
  if (head === undefined || !head.startsWith('#!')) return undefined;
  const words = (head.slice(2).split('\n')[0] ?? '').trim().split(/\s+/);
  const [program, ...rest] = words;
  if (program === undefined || program === '') return undefined;
  if (path.basename(program) === 'env') {
    const name = rest.find((word) => !word.startsWith('-'));
    return name === undefined ? undefined : resolveExecutable(name, cwd, searchPath);
  }
  return resolveExecutable(program, cwd, searchPath);
}

/** The replaced directory `entry` lives in, if any. */
function replacedDirectoryOf(entry: string): string | undefined {
  return replacedDirectories.find((directory) => isInside(directory, entry) && directory !== entry);
}

function isFile(entry: string): boolean {
  try {
    return fs.statSync(entry).isFile();
  } catch {
    return false;
  }
}

/** Whether `file` starts with `#!` (a script some interpreter reads, not a binary). */
function isScript(file: string): boolean {
  return readRegular(file, 2, 'head')?.toString('latin1') === '#!';
}

/**
 * What to show for a file the launch needs, living under `replaced`: a program's installation
 * (`…/node-24/bin/node` → `…/node-24`, its libraries beside `bin`); for code (a script, a module
 * given as an argument) the outermost folder with a `package.json` above it — the project it
 * belongs to, whose `node_modules` and sibling files it will load — else its own folder. Never
 * the replaced directory itself (that would undo the private /tmp) and never the home folder or
 * one above it (a home under /tmp: its package root, not all of it).
 */
function rootFor(file: string, replaced: string, code: boolean): string {
  const directory = path.dirname(file);
  if (directory === replaced) return file;
  if (!code)
    return path.basename(directory) === 'bin' && path.dirname(directory) !== replaced
      ? path.dirname(directory)
      : directory;
  const home = os.homedir();
  let project: string | undefined;
  for (let folder = directory; folder !== replaced && isInside(replaced, folder); ) {
    if (isInside(folder, home)) break;
    if (fs.existsSync(path.join(folder, 'package.json'))) project = folder;
    const parent = path.dirname(folder);
    if (parent === folder) break;
    folder = parent;
  }
  return project ?? directory;
}

/** A flag whose next argument is code (`sh -c`, `bash -lc`, `node -e`, `python -c`, `--eval`). */
const inlineCodeFlag = /^(-[A-Za-z]*[ce]|--(eval|print|command))$/;

/** Largest script whose text is read for the absolute paths it runs (a launcher, a shim). */
const scriptScanLimit = 64 * 1024;

/** Absolute paths under a replaced directory that a small script names (`exec "/tmp/x/bin/y"`). */
function pathsNamedBy(script: string): string[] {
  const text = readRegular(script, scriptScanLimit, 'refuse')?.toString('utf8');
  if (text === undefined) return [];
  const found: string[] = [];
  for (const directory of replacedDirectories) {
    const pattern = new RegExp(
      `${directory.replaceAll('/', '\\/')}\\/[^\\s"'\`;|&<>()$\\\\]+`,
      'g',
    );
    for (const match of text.matchAll(pattern)) found.push(match[0]);
  }
  return found;
}

/**
 * Directories to bind read-only so that what a command launches is there inside the sandbox,
 * when it lives where the sandbox puts an empty directory (`/tmp`, `/dev/shm`, `/run`: a
 * toolchain unpacked under a temporary home, a repository cloned under /tmp): the program, a
 * script's interpreter, the absolute paths a small script (a shim) names, and code given as an
 * argument (`node /tmp/repo/server.mjs`). Resolved through symlinks; nothing already visible is
 * returned.
 */
export function launchRoots(command: {
  file: string;
  args?: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
}): string[] {
  const roots = new Set<string>();
  const searchPath = command.env.PATH;
  const add = (entry: string | undefined, code: boolean) => {
    if (entry === undefined) return;
    const replaced = replacedDirectoryOf(entry);
    if (replaced !== undefined) roots.add(rootFor(entry, replaced, code));
  };
  const executable = resolveExecutable(command.file, command.cwd, searchPath);
  if (executable !== undefined) {
    const script = isScript(executable);
    add(executable, script);
    if (script) {
      add(interpreterOf(executable, command.cwd, searchPath), false);
      for (const named of pathsNamedBy(executable)) {
        const real = realPath(named);
        if (real !== undefined)
          add(real, isFile(real) ? isScript(real) || !isExecutable(real) : true);
      }
    }
  }
  for (const argument of command.args ?? []) {
    // What follows `-c`/`-e` is code to run (`bash -c <line>`, a model's command), not a file
    // to show: nothing from there on is read as a path.
    if (inlineCodeFlag.test(argument)) break;
    if (!path.isAbsolute(argument) || replacedDirectoryOf(argument) === undefined) continue;
    const real = realPath(argument);
    if (real !== undefined && isFile(real)) add(real, true);
  }
  return [...roots];
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
