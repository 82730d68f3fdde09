import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Attempt } from './escape-attempts.js';
import { type Fixture, makeFixture, type RunReport, runAs } from './escape-harness.js';
import { explainFailure } from './explain-failure.js';
import { runnerSuite } from './runner-suite.js';

// Where no memory cgroup can be made (an ordinary user on cgroup v1, as nobody here) a command's
// memory was unbounded: one runaway process could take the machine's. There each process's
// private memory is now held by RLIMIT_DATA at maxMemoryBytes (at least 1 GiB: Node needs ~640 MiB
// of address space to start). Tried by the built package as root (a memory cgroup: no rlimit)
// and as nobody (none: the rlimit), with the tools an agent runs.

const { available, users, parent, runner } = runnerSuite('per-process memory', 'data-limit');

const kubectl = '/usr/lib/google-cloud-sdk/bin/kubectl';
const attempts: Attempt[] = [
  {
    name: 'the usual tools start and work',
    kind: 'works',
    script: [
      `node -e 'const a = Buffer.alloc(64 << 20, 1); console.log("node", a.length)'`,
      `python3 -c 'print("python3", len(bytearray(64 << 20)))'`,
      'git --version',
      'rg --version | head -1',
      // A Go program, where one is installed (the Go runtime reserves its arenas up front).
      `if [ -x ${kubectl} ]; then ${kubectl} version --client 2>&1 | head -1; else echo "no go program here"; fi`,
      'echo WORKS',
    ].join(' && '),
  },
  {
    name: 'a python process that takes 1.5 GiB',
    script: `python3 -c 'b = bytearray(3 << 29); print("ESCAPED took", len(b))' 2>&1 | tail -1`,
  },
  {
    name: 'a node process that takes 1.5 GiB',
    script: `node -e 'const b = Buffer.alloc(3 << 29, 1); console.log("ESCAPED took", b.length)' 2>&1 | grep -E "ESCAPED|memory|RangeError" | head -2`,
  },
];

describe.runIf(available).each(users)('per-process memory, as $label', (user) => {
  let fixture: Fixture;
  let report: RunReport | undefined;

  beforeAll(async () => {
    fixture = await makeFixture(parent, user);
    [report] = await runAs(user, runner, fixture, [
      {
        label: 'memory',
        options: { writableRoots: [fixture.workspace], maxMemoryBytes: 512 * 1024 * 1024 },
        cwd: fixture.workspace,
        env: {},
        attempts,
      },
    ]);
  }, 120_000);
  afterAll(async () => {
    await fixture?.close();
  });

  it('with a memory cgroup nothing changes; without one, RLIMIT_DATA holds each process, said in the status', () => {
    const limits = report?.status.limits;
    if (limits?.maxMemoryBytes !== undefined) {
      expect(limits.maxMemoryBytes).toBe(512 * 1024 * 1024);
      expect(limits).not.toHaveProperty('maxProcessDataBytes');
      return;
    }
    expect(limits).toMatchObject({ maxProcessDataBytes: 1024 ** 3 });
    expect(report?.status.limitations.join('\n')).toMatch(
      /memory is NOT bounded: .* as a whole: each process's private memory is held to 1 GiB \(RLIMIT_DATA\)/,
    );
    expect(report?.description).toMatch(/memory NOT bounded \(1 GiB per process\)/);
  });

  it('node, python3, git, rg and a Go program work under it', () => {
    const works = report?.results[0];
    expect(works?.output, works?.output).toContain('WORKS');
    expect(works?.output).toMatch(/node 67108864/);
    expect(works?.output).toMatch(/python3 67108864/);
  });

  it('a process that takes more is refused (or killed by the cgroup), and the refusal is explained', () => {
    for (const result of report?.results.slice(1) ?? []) {
      expect(result.output, result.name).not.toContain('ESCAPED');
      if (report?.status.limits.maxProcessDataBytes !== undefined) {
        expect(result.output, result.name).toMatch(/MemoryError|out of memory|RangeError/);
        expect(
          explainFailure(result.output, {
            writableRoots: [],
            network: 'off',
            hiddenPaths: [],
            unixSockets: 'blocked',
            maxProcessDataBytes: 1024 ** 3,
          }),
        ).toMatch(/each process may use at most 1 GiB/);
      }
    }
  });
});
