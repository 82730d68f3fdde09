// Finding a bubblewrap this process may trust, and whether it runs here.
import type { Bubblewrap } from './bubblewrap-command.js';
import { bubblewrapFeatures } from './bubblewrap-probe.js';
import type { SandboxMode } from './sandbox-options.js';
import { trustedProgram } from './trusted-program.js';

/**
 * Whether bubblewrap can actually run here (it may be installed yet refused by the kernel):
 * runs `bwrap … true` once per binary and caches the answer. Undefined when it works, else why not.
 */
export function bubblewrapProblem(bwrapPath = 'bwrap'): string | undefined {
  const found = trustedProgram(bwrapPath, { searchPath: process.env.PATH, untrustedRoots: [] });
  return 'problem' in found ? notInstalled(found.problem) : bubblewrapFeatures(found.path).problem;
}

/**
 * The bubblewrap a sandbox runs its commands with, or why there is none (`mode` off, not
 * installed, or refused here). Found once, by real path, where no command can put one of its
 * own: outside the writable roots (see trustedProgram).
 */
export function findBubblewrap(options: {
  mode: SandboxMode;
  bwrapPath: string | undefined;
  writableRoots: readonly string[];
}): { bubblewrap: Bubblewrap; problem?: undefined } | { bubblewrap?: undefined; problem: string } {
  if (options.mode === 'off') return { problem: 'the sandbox is off' };
  const found = trustedProgram(options.bwrapPath ?? 'bwrap', {
    searchPath: process.env.PATH,
    untrustedRoots: options.writableRoots,
  });
  if ('problem' in found) return { problem: notInstalled(found.problem) };
  const features = bubblewrapFeatures(found.path);
  if (features.problem !== undefined) return { problem: features.problem };
  return { bubblewrap: { path: found.path, features } };
}

/** What to tell the user when no bubblewrap this process may trust was found. */
function notInstalled(problem: string): string {
  return `bubblewrap is not installed (${problem}; apt-get install bubblewrap)`;
}
