import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bubblewrapProblem } from './bubblewrap-lookup.js';
import type { Attempt } from './escape-attempts.js';
import {
  type Fixture,
  makeFixture,
  prepareRunner,
  type RunnerUser,
  type RunReport,
  runAs,
} from './escape-harness.js';

/** What a suite that runs attempts through the built package's runner starts from. */
export interface RunnerSuite {
  /** Whether bubblewrap works here (else the suite is one test skipped with the reason). */
  available: boolean;
  isRoot: boolean;
  /** Root and nobody when run as root (nobody through setpriv), else the current user. */
  users: RunnerUser[];
  /** A private directory under /var/tmp every user can enter; removed after the suite. */
  parent: string;
  /** The runner: the built package, its core dependency and a node binary each user can run. */
  runner: ReturnType<typeof prepareRunner>;
}

/**
 * The start every runner-based sandbox suite shares (test support, not exported by the package):
 * without bubblewrap, one test named `title` skipped with the reason (a failure under CI=true);
 * as root, setpriv is required for the unprivileged half; a fresh parent directory (prefix
 * `agent-sandbox-<name>-`) with the runner in it, removed when the file's tests end.
 */
export function runnerSuite(title: string, name: string): RunnerSuite {
  const available = bubblewrapProblem() === undefined;
  if (!available) {
    describe(title, () => {
      beforeEach(skipWithout('bwrap'));
      it('run inside bubblewrap', () => undefined);
    });
  }
  const isRoot = process.getuid?.() === 0;
  if (available && isRoot && spawnSync('setpriv', ['--version']).status !== 0) {
    throw new Error(`${title}: this suite runs its unprivileged half through setpriv (util-linux)`);
  }
  const users: RunnerUser[] = isRoot
    ? [{ label: 'root' }, { label: 'nobody', uid: 65534, gid: 65534 }]
    : [{ label: `uid ${process.getuid?.()}` }];
  const parent = fs.mkdtempSync(path.join('/var/tmp', `agent-sandbox-${name}-`));
  fs.chmodSync(parent, 0o755);
  const runner = prepareRunner(parent);
  afterAll(() => fs.rmSync(parent, { recursive: true, force: true }));
  return { available, isRoot, users, parent, runner };
}

/** Fixtures made by {@link runInEachMode} in this file: their sockets are named after it. */
let fixtureCount = 0;

/** The two ways commands run: a sandbox each, and one long-lived sandbox (`createHost`). */
export const sandboxModes = [
  { label: 'a sandbox per command', host: false },
  { label: 'one long-lived sandbox', host: true },
] as const;

/** One of {@link sandboxModes}. */
export type SandboxModeCase = (typeof sandboxModes)[number];

/**
 * Runs `attempts` as `user` once per {@link sandboxModes} entry, each in a fixture of its own
 * (in a `beforeAll` of the calling `describe`; the fixtures are closed after it): `prepare` adds
 * to the fixture first, `options` are the sandbox's, `env` the commands'. The reports by mode
 * label, and the fixtures in mode order.
 */
export function runInEachMode(
  suite: Pick<RunnerSuite, 'parent' | 'runner'>,
  user: RunnerUser,
  setup: {
    options: (fixture: Fixture) => Record<string, unknown>;
    prepare?: (fixture: Fixture) => void;
    env?: (fixture: Fixture) => Record<string, string>;
    /** Run the attempts in the sandbox's `readOnlyView()` [false]. */
    readOnlyView?: boolean;
  },
  attempts: readonly Attempt[],
): { reports: Map<string, RunReport>; fixtures: Fixture[] } {
  const reports = new Map<string, RunReport>();
  const fixtures: Fixture[] = [];
  beforeAll(async () => {
    for (const mode of sandboxModes) {
      const fixture = await makeFixture(suite.parent, {
        ...user,
        // Unique per call too: a file may run its attempts in more than one sandbox.
        label: `${user.label}-${mode.host}-${++fixtureCount}`,
      });
      fixtures.push(fixture);
      setup.prepare?.(fixture);
      const [report] = await runAs(user, suite.runner, fixture, [
        {
          label: mode.label,
          host: mode.host,
          options: setup.options(fixture),
          cwd: fixture.workspace,
          env: setup.env?.(fixture) ?? {},
          attempts,
          ...(setup.readOnlyView === true ? { readOnlyView: true } : {}),
        },
      ]);
      if (report === undefined) throw new Error(`no report for ${mode.label}`);
      reports.set(mode.label, report);
    }
  }, 300_000);
  afterAll(async () => {
    for (const fixture of fixtures) await fixture.close();
  });
  return { reports, fixtures };
}

/**
 * Asserts that `report` has a result for each of `attempts`: a `works` one printed WORKS, any
 * other printed no ESCAPED and shows its evidence (that it ran and was refused).
 */
export function expectAttemptsHeld(
  report: RunReport | undefined,
  attempts: readonly Attempt[],
): void {
  expect(report?.results.length).toBe(attempts.length);
  for (const [index, result] of (report?.results ?? []).entries()) {
    const attempt = attempts[index];
    if (attempt?.kind === 'works') expect(result.output, result.name).toContain('WORKS');
    else {
      expect(result.output, result.name).not.toContain('ESCAPED');
      expect(result.output, result.name).toMatch(attempt?.evidence ?? /./);
    }
  }
}
