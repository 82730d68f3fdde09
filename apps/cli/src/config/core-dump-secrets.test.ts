// A command of the model (here unsandboxed: any process of the user will do) crashed the CLI
// with kill -SEGV, and the kernel wrote a core dump — the CLI's whole memory, the API key 32 times
// over — into its working directory, the workspace (measured: 630 MB core, as root). Where only
// the soft limit was 0 (most systems' default) the command raised it first with prlimit. The CLI
// now runs with both core-file limits at 0, which a process without CAP_SYS_RESOURCE cannot
// raise again.
import { chmodSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, testUsers } from '../testing/test-support.js';
import { runUnsandboxedCommand } from '../testing/unsandboxed-command.js';
import { coreFileLimits } from './core-dumps.js';

beforeAll(assertBuilt);
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

const providerKey = `sk-ant-api03-${'Cd5_'.repeat(20)}`;
/** Only where the kernel writes a core into the crashing process's folder can it be looked for. */
const coresInWorkingDirectory = (() => {
  try {
    return readFileSync('/proc/sys/kernel/core_pattern', 'utf8').trim() === 'core';
  } catch {
    return false;
  }
})();

/**
 * The model's command: finds the CLI among its ancestors, writes its core-file limits, raises the
 * soft one as far as the hard one lets it, writes them again, and crashes it (when `crash`).
 */
function attack(crash: boolean): string {
  return [
    'p=$$',
    'while [ "$p" -gt 1 ]; do',
    `  tr '\\0' '\\n' < /proc/$p/cmdline | grep -q 'main.js$' && break`,
    "  p=$(awk '/^PPid/ { print $2 }' /proc/$p/status)",
    'done',
    'cat /proc/$p/limits > limits-before.txt',
    // What prlimit --pid $p --core=unlimited: does: the soft limit up to the hard one.
    `python3 -c 'import resource as r, sys; p = int(sys.argv[1]); h = r.prlimit(p, r.RLIMIT_CORE)[1]; r.prlimit(p, r.RLIMIT_CORE, (h, h))' $p`,
    'cat /proc/$p/limits > limits-after.txt',
    ...(crash ? ['kill -SEGV $p'] : []),
  ].join('\n');
}

describe
  .runIf(
    process.platform === 'linux' &&
      existsSync('/usr/bin/prlimit') &&
      existsSync('/usr/bin/python3'),
  )
  .each(testUsers)('core dumps of the CLI, as $label', ({ uid }) => {
  it('are off, for good: a command cannot raise the limit, and a crash writes no core', async () => {
    const { run, workspace } = await runUnsandboxedCommand({
      uid,
      prefix: 'agent-cli-core-dump-',
      command: attack(coresInWorkingDirectory),
      env: { ANTHROPIC_API_KEY: providerKey },
      // The user's shell allows core files (ulimit -c unlimited, soft and hard).
      launcher: (node, dir) => {
        const launcher = join(dir, 'node-with-cores');
        writeFileSync(launcher, `#!/bin/sh\nulimit -c unlimited\nexec '${node}' "$@"\n`);
        chmodSync(launcher, 0o755);
        return launcher;
      },
      disposeLater: (dispose) => cleanups.push(dispose),
    });
    const ran = existsSync(join(workspace, 'limits-before.txt'));
    expect(ran, `${run.stdout}\n${run.stderr}`).toBe(true);
    const before = coreFileLimits(readFileSync(join(workspace, 'limits-before.txt'), 'utf8'));
    expect(before, `${run.stdout}\n${run.stderr}`).toEqual({ soft: '0', hard: '0' });
    expect(coreFileLimits(readFileSync(join(workspace, 'limits-after.txt'), 'utf8'))).toEqual({
      soft: '0',
      hard: '0',
    });
    if (coresInWorkingDirectory) {
      expect(run.signal).toBe('SIGSEGV');
      expect(readdirSync(workspace).filter((name) => /^core/.test(name))).toEqual([]);
    } else expect(run.code, run.stderr).toBe(0);
    // Said nothing: prlimit was there.
    expect(run.stderr).not.toContain('core dumps stay possible');
  });
});

describe('coreFileLimits', () => {
  it('reads both limits of a /proc/<pid>/limits text', () => {
    const text = [
      'Limit                     Soft Limit           Hard Limit           Units     ',
      'Max file size             unlimited            unlimited            bytes     ',
      'Max core file size        0                    unlimited            bytes     ',
    ].join('\n');
    expect(coreFileLimits(text)).toEqual({ soft: '0', hard: 'unlimited' });
    expect(coreFileLimits('Max open files 1024 4096 files')).toBeUndefined();
  });
});
