import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Attempt } from './escape-attempts.js';
import { type Fixture, makeFixture, type RunReport, runAs } from './escape-harness.js';
import { runnerSuite } from './runner-suite.js';

// A workspace that is the home (`cd ~ && agent`): besides the shells' startup files, per-user
// code that other programs load at their next start, outside the sandbox — Python's user site
// (a `.pth` line runs at every `python` start), cargo's env script (sourced by `.profile`), an
// editor's user settings and its remote server, Gradle's init scripts, mise's global
// configuration, curl's configuration (`output`, `upload-file`). All were writable before. Built
// package, as root and as nobody, a sandbox per command and one long-lived sandbox.

const { available, users, parent, runner } = runnerSuite('per-user code in the home', 'home-code');

/** What the fixture's home holds, each a comment to what reads it. */
const existing: Record<string, string> = {
  '.local/lib/python3/site-packages/user.pth': '# original\n',
  '.cargo/env': '# original\n',
  '.config/Code/User/settings.json': '// original\n',
  '.vscode-server/bin/commit/server.sh': '# original\n',
  '.gradle/init.d/init.gradle': '// original\n',
  '.config/mise/config.toml': '# original\n',
  '.curlrc': '# original\n',
};

const attempts: Attempt[] = [
  {
    name: 'append to per-user code that programs load later',
    script: `for f in ${Object.keys(existing).join(' ')}; do echo 'touch "$OUT/pwned"' >> "$HOME/$f" && echo "ESCAPED $f"; done; true`,
  },
  {
    name: 'add a .pth to the user site, a gradle init script, a server binary',
    script:
      'echo "import os" > "$HOME/.local/lib/python3/site-packages/evil.pth" && echo ESCAPED pth; echo x > "$HOME/.gradle/init.d/evil.gradle" && echo ESCAPED gradle; mkdir -p "$HOME/.vscode-server/bin/other" && echo ESCAPED server; true',
  },
  {
    name: 'replace them (rename over, remove)',
    script:
      'mv "$HOME/.local/lib" "$HOME/lib-old" && echo ESCAPED moved; rm -rf "$HOME/.cargo/env" && echo ESCAPED removed; mkdir -p "$HOME/x" && mv -T "$HOME/x" "$HOME/.config/mise" && echo ESCAPED renamed; true',
  },
  {
    name: 'the rest of the home is writable',
    kind: 'works',
    script: 'echo ok > "$HOME/notes.txt" && mkdir -p "$HOME/.cache/x" && echo WORKS',
  },
];

describe.runIf(available).each(users)('per-user code in the home, as $label', (user) => {
  let fixture: Fixture;
  let reports: RunReport[] = [];

  beforeAll(async () => {
    fixture = await makeFixture(parent, user);
    for (const [file, text] of Object.entries(existing)) {
      const full = path.join(fixture.home, file);
      fs.mkdirSync(path.dirname(full), { recursive: true });
      fs.writeFileSync(full, text);
    }
    if (user.uid !== undefined) chownTree(fixture.home, user.uid, user.gid ?? user.uid);
    reports = await runAs(
      user,
      runner,
      fixture,
      [false, true].map((host) => ({
        label: host ? 'one long-lived sandbox' : 'a sandbox per command',
        host,
        options: { writableRoots: [fixture.home] },
        cwd: fixture.home,
        env: { OUT: fixture.outside },
        attempts,
      })),
    );
  }, 300_000);
  afterAll(async () => {
    await fixture?.close();
  });

  it.each([0, 1])('stay as they were (run %i)', (index) => {
    const report = reports[index];
    expect(report?.results.length).toBe(attempts.length);
    for (const result of report?.results ?? []) {
      if (result.name.startsWith('the rest')) expect(result.output).toContain('WORKS');
      else expect(result.output, result.name).not.toContain('ESCAPED');
    }
    for (const [file, text] of Object.entries(existing))
      expect(fs.readFileSync(path.join(fixture.home, file), 'utf8'), file).toBe(text);
    expect(fs.existsSync(path.join(fixture.outside, 'pwned'))).toBe(false);
  });
});

function chownTree(root: string, uid: number, gid: number): void {
  fs.chownSync(root, uid, gid);
  for (const entry of fs.readdirSync(root, { withFileTypes: true })) {
    const full = path.join(root, entry.name);
    if (entry.isDirectory() && !entry.isSymbolicLink()) chownTree(full, uid, gid);
    else fs.lchownSync(full, uid, gid);
  }
}
