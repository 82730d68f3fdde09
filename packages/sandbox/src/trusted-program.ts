import * as fs from 'node:fs';
import * as path from 'node:path';
import { isInside, realPath, realPathOrResolved } from './real-paths.js';

/** A program found where commands cannot replace it, or why none was. */
export type TrustedProgram = { path: string } | { problem: string };

/**
 * The real path of `name` (bubblewrap, socat) as this process will run it outside the sandbox,
 * found once and never looked up by name again: the sandbox itself starts through it, so a
 * program of the same name put earlier on PATH by a sandboxed command — `npx` and `pnpm exec`
 * put the project's `node_modules/.bin` first — would start every later command unsandboxed
 * while the status still said sandboxed. Skipped: relative PATH entries, any path with a
 * `node_modules` folder (a package's own bin), anything inside `untrustedRoots` (the writable
 * roots), and a file or folder that other users may write. `name` with a `/` is taken as given,
 * checked the same way.
 */
export function trustedProgram(
  name: string,
  options: { searchPath: string | undefined; untrustedRoots: readonly string[] },
): TrustedProgram {
  const skipped: string[] = [];
  const check = (candidate: string): string | undefined => {
    const why = untrustedBecause(candidate, options.untrustedRoots);
    if (why === undefined) return realPath(candidate);
    skipped.push(`${candidate} (${why})`);
    return undefined;
  };
  if (name.includes('/')) {
    if (!path.isAbsolute(name)) return { problem: `${name} is not an absolute path` };
    if (!isExecutableFile(name)) return { problem: `${name} not found` };
    const found = check(name);
    return found === undefined ? { problem: `not using ${skipped.join('; ')}` } : { path: found };
  }
  for (const directory of (options.searchPath ?? '').split(path.delimiter)) {
    if (directory === '') continue;
    const candidate = path.join(directory, name);
    if (!isExecutableFile(candidate)) continue;
    if (!path.isAbsolute(directory)) {
      skipped.push(`${candidate} (a relative PATH entry: it depends on the working directory)`);
      continue;
    }
    const found = check(candidate);
    if (found !== undefined) return { path: found };
  }
  const not = `${name} not found on PATH`;
  return { problem: skipped.length === 0 ? not : `${not}; not using ${skipped.join('; ')}` };
}

/** Why `candidate` could be replaced by a sandboxed command or another user, or undefined. */
function untrustedBecause(
  candidate: string,
  untrustedRoots: readonly string[],
): string | undefined {
  const real = realPath(candidate);
  if (real === undefined) return 'it cannot be resolved';
  for (const spelling of new Set([path.resolve(candidate), real])) {
    if (spelling.split('/').includes('node_modules'))
      return 'inside node_modules, where installs and commands put programs';
    // A root is compared by its spelling and its real path: `/tmp/x` is `/private/tmp/x` on macOS.
    const root = untrustedRoots.find(
      (entry) => isInside(entry, spelling) || isInside(realPathOrResolved(entry), spelling),
    );
    if (root !== undefined)
      return `inside the writable root ${root}, where sandboxed commands could replace it`;
  }
  // The file and every folder above it: one that others may write (and that is not sticky,
  // as /tmp is) lets them swap the program.
  for (let entry = real; ; entry = path.dirname(entry)) {
    let stat: fs.Stats;
    try {
      stat = fs.statSync(entry);
    } catch {
      return `${entry} cannot be read`;
    }
    const sticky = stat.isDirectory() && (stat.mode & 0o1000) !== 0;
    if ((stat.mode & 0o022) !== 0 && !sticky) return `${entry} may be written by other users`;
    if (entry === path.dirname(entry)) return undefined;
  }
}

function isExecutableFile(candidate: string): boolean {
  try {
    fs.accessSync(candidate, fs.constants.X_OK);
    return fs.statSync(candidate).isFile();
  } catch {
    return false;
  }
}
