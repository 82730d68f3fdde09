import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { removeAtExit } from './exit-cleanup.js';
import { buildSeccompFilter, type SeccompFilterOptions } from './seccomp-filter.js';

/**
 * bubblewrap reads its seccomp program from a file descriptor; the wrapped command opens it from
 * this file (`9<file`). One private directory (0700, from mkdtemp) per process holds the few
 * variants, written once and removed at exit; only this user can replace what bwrap loads.
 */
let directory: string | undefined;
const files = new Map<string, string>();

/** The path of a file holding the filter for `options` (written on first use, rewritten if a temp cleaner removed it). */
export function seccompFilterFile(options: SeccompFilterOptions): string {
  const key = `${options.architecture}-${options.allowUnixSockets === true ? 'unix-allowed' : 'unix-blocked'}`;
  const known = files.get(key);
  if (known !== undefined && fs.existsSync(known)) return known;
  if (directory === undefined || !fs.existsSync(directory)) {
    directory = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sandbox-seccomp-'));
    removeAtExit(directory);
    files.clear();
  }
  const file = path.join(directory, `${key}.bpf`);
  fs.writeFileSync(file, buildSeccompFilter(options), { mode: 0o600 });
  files.set(key, file);
  return file;
}

/**
 * The command that starts `bwrap` with the filter on descriptor {@link seccompDescriptor}: a
 * `/bin/sh` that opens the file and execs bwrap (the same process, so callers' process-group
 * kills and exit codes are unchanged).
 */
export function withSeccompDescriptor(
  filterFile: string,
  bwrapPath: string,
  bwrapArgs: readonly string[],
): { file: string; args: string[] } {
  return {
    file: '/bin/sh',
    args: [
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
