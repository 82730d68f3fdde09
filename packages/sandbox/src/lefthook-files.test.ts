import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Attempt } from './escape-attempts.js';
import type { Fixture } from './escape-harness.js';
import { expectAttemptsHeld, runInEachMode, runnerSuite, sandboxModes } from './runner-suite.js';

// lefthook's hook in .git/hooks (protected) runs what lefthook's configuration says at the next
// commit, outside any sandbox. Only lefthook.yml, .lefthook.yml and lefthook-local.yml were kept
// read-only: a project configured by lefthook.yaml, lefthook.json, .config/lefthook.yml or a
// .lefthook-local.toml, or whose configuration runs a script of .lefthook/pre-commit/, had a
// sandboxed command add a job (or rewrite the script) that ran with the user's next commit.
// Tried by the built package, as root and as nobody, per command and long-lived.

const suite = runnerSuite('lefthook files', 'lefthook');
const { available, users } = suite;

// Each also extends a file elsewhere in the workspace, which lefthook merges too.
const original = '# the project\nextends:\n  - ci/lefthook-base.yml\n';
/** What the fixture holds: each a lefthook configuration or script a project may have. */
const files = [
  'lefthook.yaml',
  'lefthook.json',
  '.config/lefthook.yml',
  '.lefthook-local.toml',
  '.lefthook/pre-commit/lint.sh',
  '.lefthook-local/pre-push/check.sh',
  'ci/lefthook-base.yml',
];
const job = 'pre-commit:\\n  jobs:\\n    - run: touch $OUT/pwned\\n';
/** `-local` files lefthook would merge that the project does not have. */
const newLocalFiles = [
  'lefthook-local.yml',
  'lefthook-local.yaml',
  'lefthook-local.json',
  '.config/lefthook-local.toml',
  '.config/lefthook-local.jsonc',
];

const attempts: Attempt[] = [
  {
    name: 'append a job to each configuration, and to the scripts',
    script: `cd "$WS"; for f in ${files.join(' ')}; do printf '${job}' >> "$f" && echo "ESCAPED wrote $f"; done; true`,
    evidence: /Read-only file system/,
  },
  {
    name: 'add a script of its own, and replace the ones there',
    script: `cd "$WS"; echo 'touch $OUT/pwned' > .lefthook/pre-commit/new.sh && echo ESCAPED new; rm -f .lefthook/pre-commit/lint.sh && echo ESCAPED removed; mv .lefthook .lefthook-old && echo ESCAPED moved; mv .config .config-old && echo ESCAPED moved-config; mv lefthook.yaml x.yaml && echo ESCAPED renamed; true`,
    evidence: /Read-only file system|Device or resource busy/,
  },
  {
    // lefthook merges the first `-local` file it finds of each name over the configuration: a new
    // one beside the project's added jobs. Each name with no file of the user's has an empty file
    // in every format while the sandbox is open (`.lefthook-local` has the project's .toml).
    name: 'make a -local configuration beside the existing one',
    script: `cd "$WS"; for f in ${newLocalFiles.join(' ')}; do printf '${job}' > "$f" && echo "ESCAPED made $f"; done; rm -f lefthook-local.yml && echo ESCAPED removed; true`,
    evidence: /Read-only file system/,
  },
  {
    name: 'the rest of the workspace is writable',
    kind: 'works',
    script: 'cd "$WS"; echo ok > notes.txt && mkdir -p .config/other && echo WORKS',
  },
];

function prepare(fixture: Fixture, uid: number | undefined, gid: number | undefined): void {
  for (const file of files) {
    const target = path.join(fixture.workspace, file);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, original);
  }
  if (uid === undefined) return;
  // Owned by the user the commands run as: the sandbox is what stops them, not the file's mode.
  const owned = new Set(files.flatMap((file) => [file, ...parents(file)]));
  for (const entry of owned) fs.chownSync(path.join(fixture.workspace, entry), uid, gid ?? uid);
}

function parents(file: string): string[] {
  const found: string[] = [];
  for (let dir = path.dirname(file); dir !== '.'; dir = path.dirname(dir)) found.push(dir);
  return found;
}

describe.runIf(available).each(users)('lefthook files, as $label', (user) => {
  const { reports, fixtures } = runInEachMode(
    suite,
    user,
    {
      options: (fixture) => ({ writableRoots: [fixture.workspace] }),
      prepare: (fixture) => prepare(fixture, user.uid, user.gid),
      env: (fixture) => ({ WS: fixture.workspace, OUT: fixture.outside }),
    },
    attempts,
  );

  describe.each(sandboxModes)('$label', (mode) => {
    it('every configuration and script stays as it was', () => {
      const report = reports.get(mode.label);
      expectAttemptsHeld(report, attempts);
      const workspace = fixtures[sandboxModes.indexOf(mode)]?.workspace ?? '/nonexistent';
      for (const file of files)
        expect(fs.readFileSync(path.join(workspace, file), 'utf8'), file).toBe(original);
      expect(fs.readdirSync(path.join(workspace, '.lefthook/pre-commit'))).toEqual(['lint.sh']);
      // The placeholders went with the sandbox; nothing a command made is left.
      for (const file of newLocalFiles)
        expect(fs.existsSync(path.join(workspace, file)), file).toBe(false);
    });
  });
});
