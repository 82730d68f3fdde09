import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Attempt } from './escape-attempts.js';
import {
  type Fixture,
  makeFixture,
  prepareRunner,
  type RunnerUser,
  type RunReport,
  runAs,
  victimText,
} from './escape-harness.js';
import { bubblewrapProblem } from './sandbox.js';

// Attacks across commands on what the sandbox binds. A mount point cannot be renamed, but a
// directory above it can: the mount goes with it, and the command puts a directory of its own at
// the old path — which the next command's bwrap binds (a writable root: through a link, anywhere),
// or the user's git and shell read (a repository or startup file no longer covered). Run by the
// built package, as root and as nobody, a sandbox per command and one long-lived sandbox.

const available = bubblewrapProblem() === undefined;
if (!available) {
  describe('swaps of bound paths between commands', () => {
    beforeEach(skipWithout('bwrap'));
    it('run inside bubblewrap', () => undefined);
  });
}
const isRoot = process.getuid?.() === 0;
if (available && isRoot && spawnSync('setpriv', ['--version']).status !== 0) {
  throw new Error('this suite runs its unprivileged half through setpriv (util-linux)');
}
const users: RunnerUser[] = isRoot
  ? [{ label: 'root' }, { label: 'nobody', uid: 65534, gid: 65534 }]
  : [{ label: `uid ${process.getuid?.()}` }];

const parent = fs.mkdtempSync(path.join('/var/tmp', 'agent-sandbox-swaps-'));
fs.chmodSync(parent, 0o755);
const runner = prepareRunner(parent);
afterAll(() => fs.rmSync(parent, { recursive: true, force: true }));

/** A relative link (it resolves inside bubblewrap's new root, where an absolute one would not). */
const linkTo = (target: string, link: string) =>
  `ln -s "$(realpath -m --relative-to="$(dirname "${link}")" "${target}")" "${link}"`;

const nestedRootAttempts: Attempt[] = [
  {
    name: 'move the directory above a nested writable root away, put a link to outside in its place',
    script: `mv "$WS/a" "$WS/a-moved" && mkdir "$WS/a" && ${linkTo('$OUT', '$WS/a/b')} && echo SWAPPED`,
  },
  {
    name: 'write outside through the swapped root',
    evidence: /Read-only file system/,
    script: 'echo "ESCAPED through a/b" >> "$WS/a/b/victim.txt"; echo pwned > "$OUT/planted"; true',
  },
  {
    name: 'the same with the root itself a link planted in a fresh directory above it',
    script: `rm -f "$WS/a/b" && mv "$WS/a" "$WS/a-again" && mkdir "$WS/a" && ${linkTo('$OUT', '$WS/a/b')} && echo SWAPPED`,
  },
  {
    name: 'write outside again',
    evidence: /Read-only file system/,
    script: 'echo "ESCAPED again" >> "$OUT/victim.txt"; true',
  },
];

const repositoryAttempts: Attempt[] = [
  {
    // Into node_modules, which the search skips: the set of protected paths stays the same.
    name: 'move the directory above a nested repository away, make one of its own there',
    script:
      'mkdir -p "$WS/node_modules" && mv "$WS/vendor" "$WS/node_modules/vendor-moved" && mkdir -p "$WS/vendor/lib" && git init -q "$WS/vendor/lib" && git -C "$WS/vendor/lib" config core.fsmonitor "touch $OUT/pwned" && echo SWAPPED',
  },
  {
    name: 'the repository put in its place is read-only from the next command on',
    evidence: /Read-only file system/,
    script:
      'git -C "$WS/vendor/lib" config core.hooksPath "$OUT" && echo ESCAPED; echo "[core] pager = touch $OUT/p" >> "$WS/vendor/lib/.git/config" && echo ESCAPED; true',
  },
  {
    name: 'the same four levels down',
    script:
      'mv "$WS/a" "$WS/a-moved" && mkdir -p "$WS/a/b/c/d/deep" && git init -q "$WS/a/b/c/d/deep" && echo SWAPPED',
  },
  {
    name: 'a separate git directory: move its folder away, put a bare repository there',
    script:
      'mv "$WS/store" "$WS/store-moved" && mkdir "$WS/store" && git init -q --bare "$WS/store/separate.git" && echo SWAPPED',
  },
];

const startupAttempts: Attempt[] = [
  {
    name: 'move ~/.config away, put a fish configuration of its own in its place',
    script:
      'mv "$HOME/.config" "$HOME/.config-moved" && mkdir -p "$HOME/.config/fish" && echo "touch $OUT/pwned" > "$HOME/.config/fish/config.fish" && echo SWAPPED',
  },
  {
    name: 'the fish configuration put in its place is read-only from the next command on',
    evidence: /Read-only file system/,
    script: 'echo "touch $OUT/pwned" >> "$HOME/.config/fish/config.fish" && echo ESCAPED; true',
  },
  {
    name: 'move ~/.local away, put a git of its own on the PATH',
    script:
      'mv "$HOME/.local" "$HOME/.local-moved" && mkdir -p "$HOME/.local/bin" && printf "#!/bin/sh\\ntouch $OUT/pwned\\n" > "$HOME/.local/bin/git" && echo SWAPPED',
  },
];

describe.runIf(available).each(users)(
  'swaps of bound paths between commands, as $label',
  (user) => {
    const modes = [
      { label: 'a sandbox per command', host: false },
      { label: 'one long-lived sandbox', host: true },
    ];
    // One fixture per mode and kind of run: each run changes its fixture for good.
    const fixtures: Fixture[] = [];
    const reports = new Map<string, { report: RunReport; fixture: Fixture }>();

    beforeAll(async () => {
      for (const mode of modes) {
        for (const kind of ['nested roots', 'repositories', 'startup files'] as const) {
          // Its own label: the fixture's abstract socket is named after it.
          const fixture = await makeFixture(parent, {
            ...user,
            label: `${user.label}-${fixtures.length}`,
          });
          fixtures.push(fixture);
          const env = { WS: fixture.workspace, OUT: fixture.outside };
          const label = `${kind}, ${mode.label}`;
          const run =
            kind === 'nested roots'
              ? {
                  options: {
                    writableRoots: [fixture.workspace, path.join(fixture.workspace, 'a/b')],
                  },
                  cwd: fixture.workspace,
                  attempts: nestedRootAttempts,
                }
              : kind === 'repositories'
                ? {
                    options: { writableRoots: [fixture.workspace] },
                    cwd: fixture.workspace,
                    attempts: repositoryAttempts,
                  }
                : {
                    options: { writableRoots: [fixture.home] },
                    cwd: fixture.home,
                    attempts: startupAttempts,
                  };
          const [report] = await runAs(user, runner, fixture, [
            { label, host: mode.host, env, ...run },
          ]);
          if (report === undefined) throw new Error(`no report for ${label}`);
          reports.set(label, { report, fixture });
        }
      }
    }, 300_000);
    afterAll(async () => {
      for (const fixture of fixtures) await fixture.close();
    });

    const result = (label: string, index: number) => {
      const entry = reports.get(label);
      if (entry === undefined) throw new Error(`no report for ${label}`);
      const found = entry.report.results[index];
      if (found === undefined) throw new Error(`no result ${index} for ${label}`);
      return { ...found, fixture: entry.fixture };
    };

    describe.each(modes)('$label', (mode) => {
      it('a writable root inside another cannot be swapped for a link to outside', () => {
        const label = `nested roots, ${mode.label}`;
        for (const index of [0, 2]) expect(result(label, index).output).toContain('SWAPPED');
        for (const index of [1, 3]) {
          const { output, name } = result(label, index);
          expect(output, name).toMatch(/Read-only file system/);
        }
        const { fixture } = result(label, 0);
        expect(fs.readFileSync(path.join(fixture.outside, 'victim.txt'), 'utf8')).toBe(victimText);
        expect(fs.existsSync(path.join(fixture.outside, 'planted'))).toBe(false);
      });

      it('a repository put where a protected one was is reported, and read-only from then on', () => {
        const label = `repositories, ${mode.label}`;
        const { fixture } = result(label, 0);
        const workspace = fs.realpathSync(fixture.workspace);
        const expected = [
          path.join(workspace, 'vendor/lib/.git'),
          undefined,
          path.join(workspace, 'a/b/c/d/deep/.git'),
          path.join(workspace, 'store/separate.git'),
        ];
        for (const [index, planted] of expected.entries()) {
          const attempt = result(label, index);
          if (planted === undefined) continue;
          expect(attempt.output, attempt.name).toContain('SWAPPED');
          expect(attempt.planted, attempt.name).toContain(planted);
        }
        const after = result(label, 1);
        expect(after.output).not.toContain('ESCAPED');
        expect(after.output).toMatch(/Read-only file system/);
        const config = fs.readFileSync(path.join(workspace, 'vendor/lib/.git/config'), 'utf8');
        expect(config).not.toMatch(/hooksPath|pager/);
      });

      it('a startup file put where a protected one was is reported, and read-only from then on', () => {
        const label = `startup files, ${mode.label}`;
        const { fixture } = result(label, 0);
        const home = fs.realpathSync(fixture.home);
        const first = result(label, 0);
        expect(first.output).toContain('SWAPPED');
        expect(first.planted).toContain(path.join(home, '.config/fish'));
        const second = result(label, 1);
        expect(second.output).not.toContain('ESCAPED');
        expect(second.output).toMatch(/Read-only file system/);
        const third = result(label, 2);
        expect(third.output).toContain('SWAPPED');
        expect(third.planted).toContain(path.join(home, '.local/bin'));
      });
    });
  },
);
