import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { removeAtExit } from './exit-cleanup.js';
import { systemShellOptions } from './outside-shells.js';
import { buildSeccompFilter, type SeccompFilterOptions } from './seccomp-filter.js';

/**
 * bubblewrap reads its seccomp program from a file descriptor; the wrapped command opens it from
 * a file (`9<file`). The files live in one directory per user (`agent-sandbox-seccomp-<uid>` in
 * the temporary directory, 0700 and owned by us, or it is not used), shared by every process and
 * never removed: a process killed by a signal leaves nothing behind, and the few variants (a
 * few hundred bytes each) are written once. Only this user can change what bwrap loads.
 */
let directory: string | undefined;
const programs = new Map<string, Buffer>();

/**
 * The path of a file holding the filter for `options`: written on first use, and read back on
 * every call and rewritten unless it holds exactly the program (a temp cleaner removed it; or a
 * process of this user changed it — sandboxed ones cannot: see {@link seccompFilterDirectory}).
 */
export function seccompFilterFile(options: SeccompFilterOptions): string {
  const key = `${options.architecture}-${options.allowUnixSockets === true ? 'unix-allowed' : 'unix-blocked'}`;
  if (directory === undefined || !fs.existsSync(directory)) directory = privateDirectory();
  let bytes = programs.get(key);
  if (bytes === undefined) {
    bytes = buildSeccompFilter(options);
    programs.set(key, bytes);
  }
  const file = path.join(directory, `${key}.bpf`);
  let current: Buffer | undefined;
  try {
    current = fs.readFileSync(file);
  } catch {
    current = undefined;
  }
  if (current === undefined || !current.equals(bytes)) {
    // Written aside and renamed: another process never opens a half-written program.
    const partial = `${file}.${process.pid}.partial`;
    fs.writeFileSync(partial, bytes, { mode: 0o600 });
    fs.renameSync(partial, file);
  }
  return file;
}

/**
 * The directory the filter files are in (made if missing). Where a writable root holds it (the
 * workspace is the temporary directory, or holds it), every sandbox binds it read-only: a
 * command that rewrote a filter there would lift it for the next command of every sandbox.
 */
export function seccompFilterDirectory(): string {
  if (directory === undefined || !fs.existsSync(directory)) directory = privateDirectory();
  return directory;
}

/**
 * This user's directory for the filters: created 0700 if missing; used only if it is a real
 * directory (not a link), owned by us, and closed to everyone else. Otherwise (someone else made
 * it first in a shared /tmp) a private one for this process, removed at exit.
 */
function privateDirectory(): string {
  // TMPDIR first; /tmp when TMPDIR cannot be written (a TMPDIR inherited from another user, one
  // that was removed): without a filter file the sandbox loses its seccomp filter (Unix sockets,
  // io_uring and the kernel keyring open), for want of a folder.
  const bases = [...new Set([os.tmpdir(), '/tmp'])];
  let firstError: unknown;
  for (const base of bases) {
    try {
      return privateDirectoryIn(base);
    } catch (error) {
      firstError ??= error;
    }
  }
  throw firstError;
}

function privateDirectoryIn(base: string): string {
  const uid = process.getuid?.() ?? 0;
  const shared = path.join(base, `agent-sandbox-seccomp-${uid}`);
  try {
    fs.mkdirSync(shared, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return processDirectory(base);
  }
  const stat = fs.lstatSync(shared);
  if (stat.isDirectory() && stat.uid === uid && (stat.mode & 0o077) === 0) return shared;
  return processDirectory(base);
}

function processDirectory(base: string): string {
  const dir = fs.mkdtempSync(path.join(base, 'agent-sandbox-seccomp-'));
  removeAtExit(dir);
  return dir;
}

/**
 * The command that starts `bwrap` with the filter on descriptor {@link seccompDescriptor}: a
 * `/bin/sh` that opens the file and execs bwrap (the same process, so callers' process-group
 * kills and exit codes are unchanged). Used by the probe; a sandbox's own commands start through
 * bubblewrap-command.ts's launch, which also closes inherited descriptors.
 */
export function withSeccompDescriptor(
  filterFile: string,
  bwrapPath: string,
  bwrapArgs: readonly string[],
): { file: string; args: string[] } {
  return {
    file: '/bin/sh',
    args: [
      ...systemShellOptions(),
      '-c',
      `filter=$1; shift; exec "$@" ${seccompDescriptor}<"$filter"`,
      'agent-sandbox',
      filterFile,
      bwrapPath,
      ...bwrapArgs,
    ],
  };
}

/** The descriptor bwrap's `--seccomp` reads (bwrap closes it before the command starts). */
export const seccompDescriptor = 9;
