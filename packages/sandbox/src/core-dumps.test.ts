import * as fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Attempt } from './escape-attempts.js';
import { runInEachMode, runnerSuite, sandboxModes } from './runner-suite.js';

// The hard core-dump limit inside was the host's (unlimited): `ulimit -c unlimited` and a crash
// wrote a core file of the crashed process's memory where kernel.core_pattern says — the
// workspace with this machine's relative `core` — or handed it to a piping pattern's helper
// (systemd-coredump, apport), run as root on the host, which stores it outside the sandbox unless
// the process's RLIMIT_CORE says no core. Now RLIMIT_CORE is 0, soft and hard, for every process
// inside. Tried by the built package, as nobody and as root, per command and long-lived.

const suite = runnerSuite('core dumps', 'core-dumps');
const { available, users } = suite;

// A relative pattern (`core`, `core.%p`) names a file in the crashed process's directory.
const corePattern = fs.readFileSync('/proc/sys/kernel/core_pattern', 'utf8').trim();
const writesFiles = !corePattern.startsWith('|') && !corePattern.startsWith('/');

const crash = (where: string) =>
  `(cd ${where} && sleep 60 & wait_for=$!; kill -SEGV $wait_for; wait $wait_for; echo "exit $?")`;
const attempts: Attempt[] = [
  {
    name: 'the limits a command starts with',
    script: 'echo "soft $(ulimit -S -c) hard $(ulimit -H -c)"',
  },
  {
    name: 'raise the limit, then crash in the workspace and in /tmp',
    script: `ws=$PWD; ulimit -S -c unlimited 2>&1; ulimit -H -c unlimited 2>&1; ulimit -c unlimited 2>&1; echo "soft $(ulimit -S -c) hard $(ulimit -H -c)"; ${crash('"$ws"')}; ${crash('/tmp')}; echo "cores: $(find "$ws" /tmp -name 'core*' | wc -l)"`,
  },
  {
    name: 'Python raises it through setrlimit and crashes',
    script: `python3 -c 'import os, resource, signal
try:
    resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
except (OSError, ValueError) as error:
    print("refused:", error, flush=True)
os.kill(os.getpid(), signal.SIGABRT)'; echo "exit $?"; echo "cores: $(find . -name 'core*' | wc -l)"`,
  },
];

describe.runIf(available).each(users)('core dumps, as $label', (user) => {
  const { reports, fixtures } = runInEachMode(
    suite,
    user,
    { options: (fixture) => ({ writableRoots: [fixture.workspace] }) },
    attempts,
  );

  describe.each(sandboxModes)('$label', (mode) => {
    const output = (index: number) =>
      reports.get(mode.label)?.results[index]?.output ?? `no result ${index}`;
    const workspaceCores = () => {
      const workspace = fixtures[sandboxModes.indexOf(mode)]?.workspace ?? '/nonexistent';
      return fs.readdirSync(workspace).filter((name) => name.startsWith('core'));
    };

    it('starts with no core dumps, and cannot turn them on', () => {
      expect(output(0)).toContain('soft 0 hard 0');
      expect(output(1)).toMatch(/Operation not permitted|cannot modify limit/);
      expect(output(1)).toContain('soft 0 hard 0');
      expect(output(2)).toMatch(/refused: .*(not permitted|not allowed)/);
    });

    it('a crash leaves no core file', () => {
      // The crashes happened (SIGSEGV, SIGABRT) and dumped nothing.
      expect(output(1)).toMatch(/exit 139[\s\S]*exit 139/);
      expect(output(2)).toMatch(/exit 134/);
      expect(output(1)).not.toMatch(/core dumped/);
      if (writesFiles) {
        expect(output(1)).toContain('cores: 0');
        expect(output(2)).toContain('cores: 0');
        expect(workspaceCores()).toEqual([]);
      }
    });
  });
});
