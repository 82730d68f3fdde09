// A core dump holds the whole memory of the process: the CLI's keys (they live only in its heap
// after the credential handover), an MCP server's OAuth token, the conversation. Any process of
// the user can have one written — `kill -SEGV` (or -ABRT, -QUIT…) to the CLI, after
// `prlimit --pid <cli> --core=unlimited` where only the soft limit is 0 (most systems' default) —
// and with the kernel's default core_pattern it lands in the CLI's working directory: the
// workspace, where the model reads it. So the CLI runs with both core-file limits at 0: a child
// cannot raise them again without CAP_SYS_RESOURCE. The commands it starts inherit them.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';

/** Where util-linux's prlimit is, never PATH's (a program planted there would run at start). */
const prlimitPaths = ['/usr/bin/prlimit', '/bin/prlimit', '/usr/sbin/prlimit', '/sbin/prlimit'];

/** The core-file limits a /proc/<pid>/limits text states (`0`, `unlimited`, a size), if it has them. */
export function coreFileLimits(text: string): { soft: string; hard: string } | undefined {
  const match = /^Max core file size\s+(\S+)\s+(\S+)/m.exec(text);
  return match === null ? undefined : { soft: match[1] ?? '', hard: match[2] ?? '' };
}

function ownCoreFileLimits(): { soft: string; hard: string } | undefined {
  try {
    return coreFileLimits(readFileSync('/proc/self/limits', 'utf8'));
  } catch {
    return undefined; // Not Linux, or no /proc: nothing to read, nothing done.
  }
}

/**
 * Sets this process's core-file limits to 0 (soft and hard) where they are not, with prlimit;
 * a notice when the soft one stays above 0 (no prlimit), undefined otherwise.
 */
export function turnOffCoreDumps(): string | undefined {
  const before = ownCoreFileLimits();
  if (before === undefined || (before.soft === '0' && before.hard === '0')) return undefined;
  const prlimit = prlimitPaths.find((file) => existsSync(file));
  if (prlimit !== undefined)
    spawnSync(prlimit, ['--pid', String(process.pid), '--core=0:0'], {
      env: { PATH: '/usr/bin:/bin' },
      stdio: 'ignore',
    });
  const after = ownCoreFileLimits();
  // A soft limit of 0 still takes a raise first; said only where a crash writes a core as it is
  // (no prlimit on a minimal system would otherwise be a line at every start).
  if (after === undefined || after.soft === '0') return undefined;
  return `core dumps stay possible (core-file limit ${after?.soft ?? '?'}, at most ${after?.hard ?? '?'}; no prlimit to lower it): a process of yours that crashes agent (kill -SEGV) gets a core file holding the keys agent read — run agent under ulimit -c 0 -H, or install util-linux's prlimit`;
}
