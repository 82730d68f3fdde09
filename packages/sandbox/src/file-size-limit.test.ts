import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Attempt } from './escape-attempts.js';
import { type Fixture, makeFixture, type RunReport, runAs } from './escape-harness.js';
import { explainFailure } from './explain-failure.js';
import { runnerSuite } from './runner-suite.js';
import { createSandbox } from './sandbox.js';

// Disk writes from inside were unbounded: one command (`yes > out`, a 100 GB `dd`, a sparse
// `truncate -s 100G`, an endless log in the in-memory /tmp) could fill the workspace's disk or the
// machine's memory. Now RLIMIT_FSIZE bounds each file (`maxFileBytes`; by default half the free
// space of the workspace's file system), root included. Tried by the built package, as nobody and
// as root, with a sandbox per command and a long-lived one; 8 MiB against a 4 MiB limit.

const { available, users, parent, runner } = runnerSuite('the file size limit', 'file sizes');

const limit = 4 * 1024 * 1024;
const attempts: Attempt[] = [
  {
    name: 'write 8 MiB with head into the workspace',
    script: `head -c 8388608 /dev/zero > big; echo "exit $?"; echo "size $(stat -c %s big)"`,
  },
  {
    name: 'write 8 MiB into the private /tmp',
    script: `head -c 8388608 /dev/zero > /tmp/big; echo "exit $?"; echo "size $(stat -c %s /tmp/big)"`,
  },
  {
    name: 'a sparse 100 GiB file',
    script: `truncate -s 100G sparse 2>&1; echo "size $(stat -c %s sparse 2>/dev/null || echo 0)"`,
  },
  {
    name: 'Python, which ignores SIGXFSZ',
    script: `python3 -c 'open("py", "wb").write(b"0" * (8 << 20))' 2>&1 | tail -1; echo "size $(stat -c %s py)"`,
  },
  {
    name: 'raise the limit again',
    script: `ulimit -f; ulimit -S -f unlimited 2>&1; ulimit -H -f unlimited 2>&1; ulimit -f`,
  },
  {
    name: 'blocks past the end of a file of size 0 (fallocate --keep-size), in the workspace and /tmp',
    script: `for f in kept /tmp/kept; do : > $f; fallocate --keep-size -l 64M $f 2>&1; echo "exit $?"; echo "blocks $(du -k $f | cut -f1)"; done`,
  },
];

const size = (output: string) => Number(/size (\d+)/.exec(output)?.[1] ?? Number.NaN);

describe.runIf(available).each(users)('the file size limit, as $label', (user) => {
  const fixtures: Fixture[] = [];
  const reports = new Map<string, RunReport>();
  const modes = [
    { label: 'a sandbox per command', host: false },
    { label: 'one long-lived sandbox', host: true },
  ];

  beforeAll(async () => {
    for (const mode of modes) {
      for (const maxFileBytes of [limit, undefined]) {
        const fixture = await makeFixture(parent, {
          ...user,
          label: `${user.label}-${fixtures.length}`,
        });
        fixtures.push(fixture);
        const label = `${mode.label}, ${maxFileBytes ?? 'default'}`;
        const [report] = await runAs(user, runner, fixture, [
          {
            label,
            host: mode.host,
            options: {
              writableRoots: [fixture.workspace],
              ...(maxFileBytes === undefined ? {} : { maxFileBytes }),
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
    it('stops every file at 4 MiB, root too, and the limit cannot be raised', () => {
      const label = `${mode.label}, ${limit}`;
      expect(reports.get(label)?.status.limits.maxFileBytes).toBe(limit);
      for (const index of [0, 1]) {
        expect(output(label, index)).toMatch(/exit (153|1)\b/);
        expect(size(output(label, index))).toBeLessThanOrEqual(limit);
      }
      expect(output(label, 2)).toMatch(/File too large|File size limit exceeded/);
      expect(size(output(label, 2))).toBeLessThanOrEqual(limit);
      expect(output(label, 3)).toMatch(/File too large/);
      expect(size(output(label, 3))).toBeLessThanOrEqual(limit);
      // bash counts `ulimit -f` in KiB.
      const raised = output(label, 4).trim().split('\n');
      expect(raised[0]).toBe(String(limit / 1024));
      expect(output(label, 4)).toMatch(/Operation not permitted|cannot modify limit/);
      expect(raised.at(-1)).toBe(String(limit / 1024));
      // fallocate's KEEP_SIZE allocated 64 MiB to a file RLIMIT_FSIZE saw as empty.
      const kept = output(label, 5);
      expect(kept).toMatch(
        /fallocate failed: (Operation not supported|keep size mode is unsupported)[\s\S]*exit 1/,
      );
      for (const [, blocks] of kept.matchAll(/blocks (\d+)/g))
        expect(Number(blocks)).toBeLessThanOrEqual(limit / 1024);
      expect([...kept.matchAll(/blocks (\d+)/g)]).toHaveLength(2);
    });

    it('by default, an 8 MiB file is written whole (the bound is half the free space)', () => {
      const label = `${mode.label}, default`;
      expect(reports.get(label)?.status.limits.maxFileBytes).toBeGreaterThanOrEqual(1024 ** 3);
      expect(size(output(label, 0))).toBe(8 * 1024 * 1024);
      expect(size(output(label, 1))).toBe(8 * 1024 * 1024);
    });
  });
});

describe('maxFileBytes', () => {
  it('refuses what is not an integer of at least 1 MiB, or Infinity', () => {
    for (const bad of [0, 1000, 1_048_576.5, -1, Number.NaN]) {
      expect(() => createSandbox({ mode: 'off', writableRoots: ['/'], maxFileBytes: bad })).toThrow(
        /maxFileBytes: expected an integer of at least 1048576 \(1 MiB\) or Infinity/,
      );
    }
  });

  it('a command stopped by it is told why', () => {
    const context = {
      writableRoots: ['/w'],
      network: 'off' as const,
      hiddenPaths: [],
      unixSockets: 'blocked' as const,
      maxFileBytes: limit,
    };
    for (const output of [
      'bash: line 1: 12 File size limit exceeded (core dumped) head -c 8M /dev/zero > big',
      'OSError: [Errno 27] File too large',
      'Error: EFBIG: file too large, write',
    ])
      expect(explainFailure(output, context)).toMatch(/a file may grow to at most 4 MiB/);
    expect(
      explainFailure('fallocate: fallocate failed: keep size mode is unsupported', context),
    ).toMatch(/fallocate --keep-size .* is refused/);
  });
});
