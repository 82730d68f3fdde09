import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Attempt } from './escape-attempts.js';
import {
  type Fixture,
  makeFixture,
  type RunReport,
  runAs,
  startupFileText,
  victimText,
} from './escape-harness.js';
import { runnerSuite } from './runner-suite.js';

// Attacks across commands on what the sandbox binds. A mount point cannot be renamed, but a
// directory above it can: the mount goes with it, and the command puts a directory of its own at
// the old path — which the next command's bwrap binds (a writable root: through a link, anywhere),
// or the user's git and shell read (a repository or startup file no longer covered). Run by the
// built package, as root and as nobody, a sandbox per command and one long-lived sandbox.

const { available, users, parent, runner } = runnerSuite(
  'swaps of bound paths between commands',
  'swaps',
);

/** A relative link (it resolves inside bubblewrap's new root, where an absolute one would not). */
const linkTo = (target: string, link: string) =>
  `ln -s "$(realpath -m --relative-to="$(dirname "${link}")" "${target}")" "${link}"`;

const nestedRootAttempts: Attempt[] = [
  {
    name: 'move the directory above a nested writable root away, put a link to outside in its place',
    script: `mv "$WS/x" "$WS/x-moved" && mkdir "$WS/x" && ${linkTo('$OUT', '$WS/x/y')} && echo SWAPPED`,
  },
  {
    name: 'write outside through the swapped root',
    evidence: /Read-only file system/,
    script: 'echo "ESCAPED through x/y" >> "$WS/x/y/victim.txt"; echo pwned > "$OUT/planted"; true',
  },
  {
    name: 'the same again, from the root the first swap left',
    script: `rm -f "$WS/x/y" && mv "$WS/x" "$WS/x-again" && mkdir "$WS/x" && ${linkTo('$OUT', '$WS/x/y')} && echo SWAPPED`,
  },
  {
    name: 'write outside again',
    evidence: /Read-only file system/,
    script: 'echo "ESCAPED again" >> "$OUT/victim.txt"; true',
  },
];

/** Renames `from` to `to` (both relative to the cwd) with renameat2 and RENAME_EXCHANGE (2). */
const exchange = (from: string, to: string) =>
  `python3 -c 'import ctypes, os, sys; libc = ctypes.CDLL(None, use_errno=True); r = libc.renameat2(-100, sys.argv[1].encode(), -100, sys.argv[2].encode(), 2); print("ESCAPED exchanged" if r == 0 else "refused: " + os.strerror(ctypes.get_errno()))' "${from}" "${to}"`;

const repositoryAttempts: Attempt[] = [
  {
    // Into node_modules too, which the search skips: the set of protected paths would stay the same.
    name: 'move the directories above nested repositories away',
    evidence: /Device or resource busy/,
    script:
      'mkdir -p "$WS/node_modules"; i=0; for d in vendor a a/b/c store; do i=$((i+1)); mv "$WS/$d" "$WS/node_modules/moved-$i" && echo "ESCAPED moved $d"; done; mv "$WS/vendor" "$WS/vendor-moved" && echo ESCAPED; true',
  },
  {
    name: 'exchange the directory above a nested repository with one of its own (renameat2 RENAME_EXCHANGE)',
    evidence: /refused: Device or resource busy/,
    script: `mkdir -p "$WS/fake/lib" && git init -q "$WS/fake/lib" && cd "$WS" && ${exchange('vendor', 'fake')}; true`,
  },
  {
    name: 'the nested repositories are where they were, and read-only',
    evidence: /Read-only file system/,
    script:
      'git -C "$WS/vendor/lib" config core.fsmonitor "touch $OUT/pwned" && echo ESCAPED; test -f "$WS/store/separate.git/HEAD" && echo STILL-THERE; true',
  },
];

const startupAttempts: Attempt[] = [
  {
    name: 'move ~/.config and ~/.local away',
    evidence: /Device or resource busy/,
    script:
      'mv "$HOME/.config" "$HOME/.config-moved" && echo ESCAPED; mv "$HOME/.local" "$HOME/.local-moved" && echo ESCAPED; true',
  },
  {
    name: 'exchange ~/.config with a directory holding a fish configuration of its own',
    evidence: /refused: Device or resource busy/,
    script: `mkdir -p "$HOME/mine/fish" && echo "touch $OUT/pwned" > "$HOME/mine/fish/config.fish" && cd "$HOME" && ${exchange('.config', 'mine')}; true`,
  },
  {
    name: 'the fish configuration is where it was, and read-only',
    evidence: /Read-only file system/,
    script: 'echo "touch $OUT/pwned" >> "$HOME/.config/fish/config.fish" && echo ESCAPED; true',
  },
];

// More new directories than one check reads (10,000), the repository among the last of them.
const floodAttempts: Attempt[] = [
  {
    name: 'hide a new repository among more directories than a check reads',
    script:
      'mkdir "$WS/flood" && cd "$WS/flood" && seq -f d%05.0f 1 10100 | xargs mkdir && git init -q d10100/x && echo FLOODED',
  },
  // Each check reads for at most 400 ms: on a loaded machine six were not enough to reach the
  // last of 10,100 directories (run79). Two dozen are, at any load the suite survives.
  ...Array.from({ length: 24 }, (_, index) => ({
    name: `a later command (${index + 1})`,
    script: 'true',
  })),
];

const secretAttempts: Attempt[] = [
  {
    name: 'move the directories above hidden credential stores away (~/.config holds gh, gcloud, …)',
    evidence: /Device or resource busy/,
    script:
      'i=0; for d in .config .docker .m2 .cargo .gem .mozilla .mozilla/firefox .password-store; do i=$((i+1)); mv "$HOME/$d" "$HOME/moved-$i" 2>&1 && echo "ESCAPED moved $d"; done; true',
  },
  {
    name: 'read them where they would have gone, and where they are',
    script:
      'cat "$HOME"/moved-*/gh/hosts.yml "$HOME"/moved-*/config.json "$HOME/.config/gh/hosts.yml" "$HOME/.docker/config.json" 2>&1; grep -rs SECRET "$HOME"; true',
  },
];

describe.runIf(available).each(users)(
  'swaps of bound paths between commands, as $label',
  (user) => {
    const modes = [
      { label: 'a sandbox per command', host: false },
      { label: 'one long-lived sandbox', host: true },
    ];
    const kinds = [
      'nested roots',
      'repositories',
      'startup files',
      'hidden credentials',
      'flood',
    ] as const;
    // One fixture per mode and kind of run: each run changes its fixture for good.
    const fixtures: Fixture[] = [];
    const reports = new Map<string, { report: RunReport; fixture: Fixture }>();

    beforeAll(async () => {
      for (const mode of modes) {
        for (const kind of kinds) {
          // The search runs in this process whatever the mode: once is enough (10,000 directories).
          if (kind === 'flood' && mode.host) continue;
          // Its own label: the fixture's abstract socket is named after it.
          const fixture = await makeFixture(parent, {
            ...user,
            label: `${user.label}-${fixtures.length}`,
          });
          fixtures.push(fixture);
          // A plain directory (nothing protected below it) for the nested root.
          const nested = path.join(fixture.workspace, 'x', 'y');
          fs.mkdirSync(nested, { recursive: true });
          if (user.uid !== undefined) {
            for (const directory of [path.dirname(nested), nested])
              fs.chownSync(directory, user.uid, user.gid ?? user.uid);
          }
          const env = { WS: fixture.workspace, OUT: fixture.outside };
          const label = `${kind}, ${mode.label}`;
          const inWorkspace = {
            options: { writableRoots: [fixture.workspace] },
            cwd: fixture.workspace,
          };
          const inHome = { options: { writableRoots: [fixture.home] }, cwd: fixture.home };
          const run =
            kind === 'nested roots'
              ? {
                  // Without the auto-run files: the folder made for x/y/.vscode would pin x (the
                  // swap could not even start), and the swap is what this run tries.
                  options: {
                    writableRoots: [fixture.workspace, nested],
                    protectAutoRunFiles: false,
                  },
                  cwd: fixture.workspace,
                  attempts: nestedRootAttempts,
                }
              : kind === 'repositories'
                ? { ...inWorkspace, attempts: repositoryAttempts }
                : kind === 'startup files'
                  ? { ...inHome, attempts: startupAttempts }
                  : kind === 'flood'
                    ? { ...inWorkspace, attempts: floodAttempts }
                    : { ...inHome, attempts: secretAttempts };
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

    it('a repository hidden among more directories than a check reads: the cut is said, and later checks find it', () => {
      const label = 'flood, a sandbox per command';
      const first = result(label, 0);
      expect(first.output).toContain('FLOODED');
      expect(first.unread).toMatch(/stopped after/);
      const workspace = fs.realpathSync(first.fixture.workspace);
      const planted = floodAttempts.flatMap((_, index) => result(label, index).planted);
      expect(planted).toContain(path.join(workspace, 'flood/d10100/x/.git'));
      expect(result(label, floodAttempts.length - 1).unread).toBeUndefined();
    });

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

      it('the directories above nested repositories cannot be moved or exchanged', () => {
        const label = `repositories, ${mode.label}`;
        const workspaceReal = fs.realpathSync(result(label, 0).fixture.workspace);
        // Only the repository the exchange attempt made for itself, where it made it.
        const planted = [[], [path.join(workspaceReal, 'fake/lib/.git')], []];
        for (const index of [0, 1, 2]) {
          const attempt = result(label, index);
          expect(attempt.output, attempt.name).not.toContain('ESCAPED');
          expect(attempt.planted, attempt.name).toEqual(planted[index]);
        }
        expect(result(label, 1).output).toMatch(/refused: Device or resource busy/);
        expect(result(label, 2).output).toContain('STILL-THERE');
        const workspace = result(label, 0).fixture.workspace;
        const config = fs.readFileSync(path.join(workspace, 'vendor/lib/.git/config'), 'utf8');
        expect(config).not.toMatch(/fsmonitor/);
      });

      it('the directories above the home’s startup files cannot be moved or exchanged', () => {
        const label = `startup files, ${mode.label}`;
        for (const index of [0, 1, 2]) {
          const attempt = result(label, index);
          expect(attempt.output, attempt.name).not.toContain('ESCAPED');
          expect(attempt.planted, attempt.name).toEqual([]);
        }
        expect(result(label, 1).output).toMatch(/refused: Device or resource busy/);
        const home = result(label, 0).fixture.home;
        expect(fs.readFileSync(path.join(home, '.config/fish/config.fish'), 'utf8')).toBe(
          startupFileText,
        );
      });

      it('hidden credential stores in a home that is the workspace cannot be carried out from under their masks', () => {
        const label = `hidden credentials, ${mode.label}`;
        const moved = result(label, 0);
        expect(moved.output).not.toContain('ESCAPED');
        expect(moved.output).toMatch(/Device or resource busy/);
        const read = result(label, 1);
        expect(read.output).not.toMatch(/SECRET-/);
        const home = moved.fixture.home;
        expect(fs.readFileSync(path.join(home, '.config/gh/hosts.yml'), 'utf8')).toContain(
          'SECRET-',
        );
      });
    });
  },
);
