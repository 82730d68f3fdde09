import { spawnSync } from 'node:child_process';
import * as os from 'node:os';
import { credentialFreeEnvironment } from '@agent/core/credentials';
import { seccompDescriptor, seccompFilterFile, withSeccompDescriptor } from './seccomp-file.js';
import { type SeccompArchitecture, seccompArchitecture } from './seccomp-filter.js';

/** What bubblewrap can enforce on this machine, found by running it. */
export interface BubblewrapFeatures {
  /** Why bubblewrap cannot run at all; undefined when it can. */
  problem?: string;
  /** `--unshare-user --disable-userns` (bubblewrap ≥ 0.8): no nested user namespaces. */
  disableUserNamespaces: boolean;
  /** `--cap-drop ALL` (accepted unless a setuid bwrap runs for an ordinary user, who has none to drop). */
  dropCapabilities: boolean;
  /** The architecture the seccomp filter is loaded for; undefined when it cannot be. */
  seccomp?: SeccompArchitecture;
  /** `--size` before `--tmpfs` (bubblewrap ≥ 0.7): the in-memory file systems can be bounded. */
  tmpfsSize?: boolean;
  /** What cannot be enforced here, each with the reason. */
  limitations: string[];
}

/** The flags a sandboxed command gets for the features found, before `--seccomp`. */
export function hardeningArguments(
  features: Pick<BubblewrapFeatures, 'disableUserNamespaces' | 'dropCapabilities'>,
): string[] {
  return [
    ...(features.disableUserNamespaces ? ['--unshare-user', '--disable-userns'] : []),
    ...(features.dropCapabilities ? ['--cap-drop', 'ALL'] : []),
  ];
}

const cache = new Map<string, BubblewrapFeatures>();

const probeMounts = ['--ro-bind', '/', '/', '--dev', '/dev', '--unshare-all', '--die-with-parent'];

interface Attempt {
  disableUserNamespaces: boolean;
  dropCapabilities: boolean;
  seccomp: boolean;
}

/**
 * Runs `bwrap … true` once per binary with every hardening flag; when that fails, finds which
 * feature this bubblewrap or kernel lacks by dropping them one at a time (only then: the usual
 * case costs one run). Cached.
 */
export function bubblewrapFeatures(bwrapPath = 'bwrap'): BubblewrapFeatures {
  const known = cache.get(bwrapPath);
  if (known !== undefined) return known;
  const features = probe(bwrapPath);
  cache.set(bwrapPath, features);
  return features;
}

function probe(bwrapPath: string): BubblewrapFeatures {
  if (process.platform !== 'linux') {
    return unavailable(`no OS sandbox on ${process.platform} yet (bubblewrap is Linux-only)`);
  }
  const architecture = seccompArchitecture();
  const limitations: string[] = [];
  if (architecture === undefined) {
    limitations.push(
      `no seccomp filter for ${os.machine()}: Unix sockets, io_uring and the kernel keyring are not blocked`,
    );
  }
  const full: Attempt = {
    disableUserNamespaces: true,
    dropCapabilities: true,
    seccomp: architecture !== undefined,
  };
  const first = run(bwrapPath, full, architecture);
  if (first === undefined)
    return { ...chosen(full, architecture), ...tmpfsSizeOf(bwrapPath), limitations };
  // Something is missing. Is bubblewrap there at all?
  const plain = spawnSync(bwrapPath, [...probeMounts, 'true'], {
    env: credentialFreeEnvironment(process.env),
    timeout: 10_000,
    encoding: 'utf8',
  });
  if (plain.error !== undefined) {
    return unavailable(
      (plain.error as NodeJS.ErrnoException).code === 'ENOENT'
        ? `bubblewrap is not installed (${bwrapPath} not found; apt-get install bubblewrap)`
        : `bubblewrap could not start: ${plain.error.message}`,
    );
  }
  if (plain.status !== 0) {
    return unavailable(
      `bubblewrap cannot create namespaces here: ${(plain.stderr ?? '').trim() || `exit ${plain.status}`}`,
    );
  }
  // Find the most this bubblewrap and kernel accept, dropping features in order of preference.
  const fallbacks: Attempt[] = [
    { ...full, disableUserNamespaces: false },
    { ...full, seccomp: false },
    { ...full, disableUserNamespaces: false, seccomp: false },
    // A setuid bwrap refuses --cap-drop for an ordinary user; it drops every capability itself.
    ...(process.getuid?.() === 0
      ? []
      : [{ disableUserNamespaces: false, dropCapabilities: false, seccomp: false }]),
  ];
  const tried = new Set([attemptKey(full)]);
  for (const attempt of fallbacks) {
    // Without a filter for this architecture, some fallbacks are the same command as another.
    const key = attemptKey(attempt);
    if (tried.has(key)) continue;
    tried.add(key);
    if (run(bwrapPath, attempt, architecture) !== undefined) continue;
    if (!attempt.disableUserNamespaces) {
      limitations.push(
        `bubblewrap cannot disable nested user namespaces (${first})${attempt.seccomp ? '; the seccomp filter refuses them instead' : ''}`,
      );
    }
    if (full.seccomp && !attempt.seccomp) {
      limitations.push(
        `the seccomp filter could not be loaded (${first}): Unix sockets, io_uring and the kernel keyring are not blocked`,
      );
    }
    return { ...chosen(attempt, architecture), ...tmpfsSizeOf(bwrapPath), limitations };
  }
  return unavailable(`bubblewrap cannot apply the sandbox's hardening here: ${first}`);
}

/** Whether this bubblewrap sizes a tmpfs (`--size`, bubblewrap ≥ 0.7), from its own help. */
function tmpfsSizeOf(bwrapPath: string): { tmpfsSize?: true } {
  const help = spawnSync(bwrapPath, ['--help'], {
    env: credentialFreeEnvironment(process.env),
    timeout: 10_000,
    encoding: 'utf8',
  });
  return /^\s*--size\b/m.test(`${help.stdout ?? ''}`) ? { tmpfsSize: true } : {};
}

function attemptKey(attempt: Attempt): string {
  return `${attempt.disableUserNamespaces}/${attempt.dropCapabilities}/${attempt.seccomp}`;
}

function chosen(
  attempt: Attempt,
  architecture: SeccompArchitecture | undefined,
): Omit<BubblewrapFeatures, 'limitations'> {
  return {
    disableUserNamespaces: attempt.disableUserNamespaces,
    dropCapabilities: attempt.dropCapabilities,
    ...(attempt.seccomp && architecture !== undefined ? { seccomp: architecture } : {}),
  };
}

/** The features of a bubblewrap that cannot run, and why. */
export function unavailable(problem: string): BubblewrapFeatures {
  return { problem, disableUserNamespaces: false, dropCapabilities: false, limitations: [] };
}

/** Runs one attempt; undefined when it worked, else what bwrap said. */
function run(
  bwrapPath: string,
  attempt: Attempt,
  architecture: SeccompArchitecture | undefined,
): string | undefined {
  const args = [
    ...probeMounts,
    ...hardeningArguments(attempt),
    ...(attempt.seccomp ? ['--seccomp', String(seccompDescriptor)] : []),
    'true',
  ];
  let command = { file: bwrapPath, args };
  if (attempt.seccomp && architecture !== undefined) {
    try {
      command = withSeccompDescriptor(seccompFilterFile({ architecture }), bwrapPath, args);
    } catch (error) {
      return `the filter file could not be written: ${(error as Error).message}`;
    }
  }
  // Like every program run for the sandbox's own ends: none of the user's keys (its environ is
  // readable by any process of the user, and `true` runs with it inside).
  const result = spawnSync(command.file, command.args, {
    env: credentialFreeEnvironment(process.env),
    timeout: 10_000,
    encoding: 'utf8',
  });
  if (result.error !== undefined) return result.error.message;
  if (result.status === 0) return undefined;
  return (result.stderr ?? '').trim() || `exit ${result.status ?? result.signal}`;
}
