import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterAll, beforeEach, describe, it } from 'vitest';
import { bubblewrapProblem } from './bubblewrap-lookup.js';
import { prepareRunner, type RunnerUser } from './escape-harness.js';

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
