import * as fs from 'node:fs';
import * as path from 'node:path';

/** Directories the sandbox replaces with empty ones: a program that lives there would vanish. */
const replacedDirectories = ['/tmp', '/dev/shm', '/run'];

function isInside(root: string, entry: string): boolean {
  const relative = path.relative(root, entry);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

function realPath(entry: string): string | undefined {
  try {
    return fs.realpathSync(entry);
  } catch {
    return undefined;
  }
}

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

/** The interpreter a script names on its `#!` line (through `env`), if any. */
function interpreterOf(
  script: string,
  cwd: string,
  searchPath: string | undefined,
): string | undefined {
  let head: string;
  try {
    const handle = fs.openSync(script, 'r');
    try {
      const buffer = Buffer.alloc(256);
      const read = fs.readSync(handle, buffer, 0, buffer.length, 0);
      head = buffer.subarray(0, read).toString('utf8');
    } finally {
      fs.closeSync(handle);
    }
  } catch {
    return undefined;
  }
  if (!head.startsWith('#!')) return undefined;
  const words = (head.slice(2).split('\n')[0] ?? '').trim().split(/\s+/);
  const [program, ...rest] = words;
  if (program === undefined || program === '') return undefined;
  if (path.basename(program) === 'env') {
    const name = rest.find((word) => !word.startsWith('-'));
    return name === undefined ? undefined : resolveExecutable(name, cwd, searchPath);
  }
  return resolveExecutable(program, cwd, searchPath);
}

/**
 * The directory to show for an executable: its installation (`…/node-24/bin/node` → `…/node-24`,
 * where its libraries sit beside `bin`), else its own directory.
 */
function installationOf(executable: string): string {
  const directory = path.dirname(executable);
  return path.basename(directory) === 'bin' ? path.dirname(directory) : directory;
}

/**
 * Directories to bind read-only so that the program a command launches — and the interpreter of
 * a script — is there inside the sandbox, when it lives where the sandbox puts an empty
 * directory (`/tmp`, `/dev/shm`, `/run`: a toolchain unpacked under a temporary home, say).
 * Resolved through symlinks; nothing already visible is returned.
 */
export function launchRoots(command: {
  file: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
}): string[] {
  const roots = new Set<string>();
  const searchPath = command.env.PATH;
  const executable = resolveExecutable(command.file, command.cwd, searchPath);
  const programs = [executable];
  if (executable !== undefined) programs.push(interpreterOf(executable, command.cwd, searchPath));
  for (const program of programs) {
    if (program === undefined) continue;
    if (!replacedDirectories.some((directory) => isInside(directory, program))) continue;
    const installation = installationOf(program);
    // Never the replaced directory itself: that would undo the private /tmp.
    roots.add(replacedDirectories.includes(installation) ? program : installation);
  }
  return [...roots];
}
