import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Attempt } from './escape-attempts.js';
import type { Fixture } from './escape-harness.js';
import { expectAttemptsHeld, runInEachMode, runnerSuite, sandboxModes } from './runner-suite.js';

// In read-only and plan mode, the bash tool ran the lines its analysis judged to only read in
// the writable sandbox: each analysis mistake (git grep -O, xxd -ps, an arithmetic expansion that
// runs a command) wrote the workspace. `readOnlyView()` binds the writable roots read-only; only
// the private /tmp takes writes. The directories pinned over protected paths (bound writable, so
// they cannot be renamed) are not bound in it. Tried by the built package, as root and as
// nobody, per command and long-lived.

const suite = runnerSuite('read-only view', 'read-only-view');
const { available, users } = suite;

const original = 'the project\n';
/** A nested repository: its `.git` is protected, so the directories above it are pinned. */
const files = ['notes.txt', 'nested/repo/src/main.txt', 'nested/repo/.git/HEAD'];

const attempts: Attempt[] = [
  {
    name: 'write, append, remove, rename, chmod and retime files of the workspace',
    script: `cd "$WS"; echo x > new.txt && echo ESCAPED new; echo x >> notes.txt && echo ESCAPED appended; : > notes.txt && echo ESCAPED truncated; rm -f notes.txt && echo ESCAPED removed; mv notes.txt moved.txt && echo ESCAPED renamed; chmod 777 notes.txt && echo ESCAPED chmod; touch -d 2000-01-01 notes.txt && echo ESCAPED touched; mkdir dir && echo ESCAPED mkdir; ln -s notes.txt link && echo ESCAPED link; true`,
    evidence: /Read-only file system/,
  },
  {
    name: 'write in the directories pinned above a protected .git',
    script: `cd "$WS"; echo x > nested/new.txt && echo ESCAPED nested; echo x > nested/repo/new.txt && echo ESCAPED repo; echo x >> nested/repo/src/main.txt && echo ESCAPED src; mv nested/repo nested/moved && echo ESCAPED moved; true`,
    evidence: /Read-only file system/,
  },
  {
    name: 'remount the workspace writable, or bind over it',
    script: `cd "$WS"; mount -o remount,rw "$WS" 2>&1 && echo x > new.txt && echo ESCAPED remount; mount --bind /tmp "$WS" 2>&1 && echo ESCAPED bind; unshare -m sh -c 'mount -o remount,rw "$WS" && echo x > "$WS/new.txt" && echo ESCAPED unshare' 2>&1; true`,
    evidence: /permission denied|Operation not permitted|must be superuser/i,
  },
  {
    name: 'the workspace reads, and /tmp takes writes',
    kind: 'works',
    script:
      'cd "$WS"; grep -q project notes.txt && echo scratch > /tmp/s.txt && grep -q scratch /tmp/s.txt && echo WORKS',
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
  for (const entry of ['notes.txt', 'nested', 'nested/repo', 'nested/repo/src/main.txt'])
    fs.chownSync(path.join(fixture.workspace, entry), uid, gid ?? uid);
}

/** The workspace's entries (relative paths), and each file's text and mode. */
function snapshot(workspace: string): Record<string, string> {
  const found: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      const relative = path.relative(workspace, full);
      if (entry.isDirectory()) {
        found[relative] = 'dir';
        walk(full);
      } else {
        const stat = fs.lstatSync(full);
        found[relative] =
          `${(stat.mode & 0o7777).toString(8)} ${stat.mtime.getFullYear() > 2000} ${fs.readFileSync(full, 'utf8')}`;
      }
    }
  };
  walk(workspace);
  return found;
}

describe.runIf(available).each(users)('read-only view, as $label', (user) => {
  const setup = {
    options: (fixture: Fixture) => ({ writableRoots: [fixture.workspace] }),
    prepare: (fixture: Fixture) => prepare(fixture, user.uid, user.gid),
    env: (fixture: Fixture) => ({ WS: fixture.workspace }),
  };
  const before = new Map<string, Record<string, string>>();
  const { reports, fixtures } = runInEachMode(
    suite,
    user,
    {
      ...setup,
      readOnlyView: true,
      prepare: (fixture) => {
        setup.prepare(fixture);
        before.set(fixture.workspace, snapshot(fixture.workspace));
      },
    },
    attempts,
  );
  // The sandbox it is a view of still writes there.
  const writable = runInEachMode(suite, user, setup, [
    {
      name: 'the writable sandbox writes the workspace and the pinned directories',
      kind: 'works',
      script: 'cd "$WS"; echo x > new.txt && echo x > nested/repo/new.txt && echo WORKS',
    },
  ]);

  describe.each(sandboxModes)('$label', (mode) => {
    it('nothing in the workspace changes; /tmp is writable', () => {
      const report = reports.get(mode.label);
      expect(report?.description).toContain('read-only: writes only in a private /tmp');
      expectAttemptsHeld(report, attempts);
      const workspace = fixtures[sandboxModes.indexOf(mode)]?.workspace ?? '/nonexistent';
      expect(snapshot(workspace)).toEqual(before.get(workspace));
    });

    it('the sandbox it is a view of still writes', () => {
      const result = writable.reports.get(mode.label)?.results[0];
      expect(result?.output).toContain('WORKS');
      const workspace = writable.fixtures[sandboxModes.indexOf(mode)]?.workspace ?? '/nonexistent';
      expect(fs.readFileSync(path.join(workspace, 'nested/repo/new.txt'), 'utf8')).toBe('x\n');
    });
  });
});
