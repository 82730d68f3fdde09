import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Attempt } from './escape-attempts.js';
import { type Fixture, makeFixture, type RunReport, runAs } from './escape-harness.js';
import { explainFailure } from './explain-failure.js';
import { rlimitBackstopMargin } from './resource-limits.js';
import { runnerSuite } from './runner-suite.js';
import { createSandbox } from './sandbox.js';

// A fork bomb in a command took process ids from the whole machine (pid_max is 32,768 on many
// kernels): nothing else — this program included — could start a process until it was killed.
// Now RLIMIT_NPROC is set inside each sandbox's user namespace, where the kernel counts the
// sandbox's own processes and threads. Tried by the built package, as nobody and as root (whom the
// kernel exempts: the documented limit), with a sandbox per command and a long-lived one. The
// attempts fork a bounded number of children (100), never an unbounded bomb: before the limit
// existed that would have taken this shared machine down.

const { available, isRoot, users, parent, runner } = runnerSuite('the process limit', 'processes');

const limit = 32;
const attempts: Attempt[] = [
  {
    name: 'fork 100 children from one process',
    script: `perl -e 'my ($n, @k) = (0); for (1..100) { my $p = fork; if (!defined $p) { print "refused: $!\\n"; last } if ($p == 0) { sleep 30; exit 0 } push @k, $p; $n++ } print "started $n\\n"; kill 9, @k'`,
  },
  {
    name: 'start 100 threads',
    script: `python3 -c '
import threading, time
stop = threading.Event()
started = 0
try:
    for _ in range(100):
        threading.Thread(target=stop.wait, daemon=True).start()
        started += 1
except RuntimeError as error:
    print("refused:", error)
print("started", started)
stop.set()'`,
  },
  {
    name: 'raise the limit again',
    script: `ulimit -u; ulimit -S -u unlimited 2>&1; ulimit -H -u unlimited 2>&1; ulimit -u`,
  },
];

const started = (output: string) => Number(/started (\d+)/.exec(output)?.[1] ?? Number.NaN);

describe.runIf(available).each(users)('the process limit, as $label', (user) => {
  const exempt = user.uid === undefined && isRoot;
  const fixtures: Fixture[] = [];
  const reports = new Map<string, RunReport>();
  const modes = [
    { label: 'a sandbox per command', host: false },
    { label: 'one long-lived sandbox', host: true },
  ];

  beforeAll(async () => {
    for (const mode of modes) {
      for (const maxProcesses of [limit, Number.POSITIVE_INFINITY]) {
        const fixture = await makeFixture(parent, {
          ...user,
          label: `${user.label}-${fixtures.length}`,
        });
        fixtures.push(fixture);
        const label = `${mode.label}, ${maxProcesses}`;
        const [report] = await runAs(user, runner, fixture, [
          {
            label,
            host: mode.host,
            // JSON carries no Infinity: the control leaves the option out and forks fewer than the default.
            options: {
              writableRoots: [fixture.workspace],
              ...(maxProcesses === limit ? { maxProcesses } : {}),
            },
            cwd: fixture.workspace,
            env: {},
            attempts,
          },
        ]);
        if (report === undefined) throw new Error(`no report for ${label}`);
        reports.set(label, report);
      }
    }
  }, 300_000);
  afterAll(async () => {
    for (const fixture of fixtures) await fixture.close();
  });

  const output = (label: string, index: number) =>
    reports.get(label)?.results[index]?.output ?? `no result ${index} for ${label}`;

  describe.each(modes)('$label', (mode) => {
    // Root is exempt from RLIMIT_NPROC (the kernel checks the user, not a capability): a pids
    // cgroup bounds it where one can be made (resource-limits.test.ts), else nothing does.
    it(
      exempt
        ? `as root, stops processes and threads at ${limit} by a cgroup, or says it cannot`
        : `stops processes and threads at ${limit}, and cannot be raised`,
      () => {
        const label = `${mode.label}, ${limit}`;
        const bounded = reports.get(label)?.status.limits.maxProcesses !== undefined;
        if (exempt && !bounded) {
          expect(started(output(label, 0))).toBe(100);
          expect(reports.get(label)?.status.limitations.join('\n')).toMatch(
            /processes are NOT bounded: root is exempt from RLIMIT_NPROC/,
          );
          return;
        }
        for (const index of [0, 1]) {
          expect(output(label, index)).toMatch(
            /refused: .*(Resource temporarily unavailable|can't start new thread)/,
          );
          expect(started(output(label, index))).toBeLessThan(limit);
          expect(started(output(label, index))).toBeGreaterThan(limit / 2);
        }
        // Root has no RLIMIT_NPROC to raise; its cgroup cannot be written (resource-limits.test.ts).
        if (exempt) return;
        const raised = output(label, 2);
        // Under a pids cgroup (a user with a delegated one), the rlimit is a backstop above it.
        const rlimit = reports.get(label)?.status.limits.mechanism.startsWith('cgroup')
          ? limit + rlimitBackstopMargin
          : limit;
        expect(raised.split('\n')[0]).toBe(String(rlimit));
        expect(raised).toMatch(/Operation not permitted|cannot modify limit/);
        expect(raised.trim().split('\n').at(-1)).toBe(String(rlimit));
      },
    );

    it('without the option, 100 children and threads start (the default is far above)', () => {
      const label = `${mode.label}, ${Number.POSITIVE_INFINITY}`;
      expect(started(output(label, 0))).toBe(100);
      expect(started(output(label, 1))).toBe(100);
    });
  });
});

describe('maxProcesses', () => {
  it('refuses what is not an integer of at least 16, or Infinity', () => {
    for (const bad of [0, 3, 15, 16.5, -1, Number.NaN]) {
      expect(() => createSandbox({ mode: 'off', writableRoots: ['/'], maxProcesses: bad })).toThrow(
        /maxProcesses: expected an integer of at least 16 or Infinity/,
      );
    }
    for (const good of [16, 4096, Number.POSITIVE_INFINITY]) {
      expect(() =>
        createSandbox({ mode: 'off', writableRoots: ['/'], maxProcesses: good }),
      ).not.toThrow();
    }
  });

  it('explains a refused fork or thread, only when a limit is in force', () => {
    const context = {
      writableRoots: ['/w'],
      network: 'off' as const,
      hiddenPaths: [],
      unixSockets: 'blocked' as const,
    };
    for (const output of [
      'bash: fork: retry: Resource temporarily unavailable',
      'bash: fork: Resource temporarily unavailable',
      'Error: spawn /usr/bin/node EAGAIN',
      'BlockingIOError: [Errno 11] Resource temporarily unavailable',
      "RuntimeError: can't start new thread",
      'java.lang.OutOfMemoryError: unable to create native thread: possibly out of memory or process/resource limits reached',
    ]) {
      expect(explainFailure(output, { ...context, maxProcesses: 64 }), output).toMatch(
        /at most 64 processes and threads at once/,
      );
      expect(explainFailure(output, context), output).toBeUndefined();
    }
  });
});
