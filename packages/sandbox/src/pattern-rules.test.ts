import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Attempt } from './escape-attempts.js';
import { type Fixture, makeFixture, type RunReport, runAs } from './escape-harness.js';
import { PatternPaths, patternSearchLimits } from './pattern-paths.js';
import { runnerSuite } from './runner-suite.js';

// A user's read rule by pattern (`deny Read(*.pem)`, `Read(**/.env)`, `Read(config/*.secret)`)
// names no one path, so the sandbox hid nothing for it: a command the rules cannot see into
// (`grep -r . .`, a script, a name built at run time) read every such file. Now each command
// looks through the workspace (and a pattern's own folder) for what the patterns cover and
// hides it — through a link, a hard link made before, or a file made by the previous command
// too. Write rules by pattern keep what they cover read-only. Tried by the built package as
// root and as nobody, a sandbox per command and one long-lived sandbox.

const { available, users, parent, runner } = runnerSuite('read rules by pattern', 'patterns');

const secret = (name: string) => `SECRET-${name}\n`;

/** The workspace's files, relative to it: covered by a pattern, or not (`PUBLIC-`). */
const files: Record<string, string> = {
  'key.pem': secret('key.pem'),
  'sub/deep/other.pem': secret('other.pem'),
  'sub/.env': secret('sub.env'),
  '.env': secret('root.env'),
  'config/app.secret': secret('app.secret'),
  'config/nested/deeper.secret': secret('deeper.secret'),
  'public.txt': 'PUBLIC-text\n',
  'config/app.json': 'PUBLIC-config\n',
  'yarn.lock': 'original lock\n',
  'packages/a/yarn.lock': 'original lock\n',
};

const attempts: Attempt[] = [
  {
    name: 'grep -r the workspace, tar it, read through links made before (soft and hard)',
    script:
      'grep -rsa SECRET . ; tar cf - . 2>/dev/null | grep -a SECRET; cat prelinked.txt link-out.txt 2>&1; cat "$OUT"/keys/a.key 2>&1; true',
  },
  {
    name: 'names made at run time, a link and a hard link made now, a copy',
    evidence: /Permission denied|Invalid cross-device link|No such file/,
    script:
      'e=pem; cat key.$e sub/deep/other.$e 2>&1; ln -s key.$e soft.txt; cat soft.txt 2>&1; ln key.$e hard.txt 2>&1; cp key.$e copy 2>&1; cat copy 2>&1; python3 -c "print(open(\'config/app.\' + \'secret\').read())" 2>&1; printf "SEC%s" "RET-made" > made.pem; true',
  },
  {
    name: 'a covered file the previous command made',
    evidence: /Permission denied/,
    script: 'cat made.$(echo pem) 2>&1; true',
  },
  {
    name: 'write what a write rule covers, by any name',
    evidence: /Read-only file system|Device or resource busy/,
    script:
      'l=lock; echo changed >> yarn.$l 2>&1; echo changed > packages/a/yarn.$l 2>&1; rm -f yarn.$l 2>&1; mv packages/a/yarn.$l x 2>&1; true',
  },
  {
    name: 'what no pattern covers still reads and writes',
    kind: 'works',
    script: 'cat public.txt config/app.json && echo more >> public.txt && echo WORKS',
  },
];

describe.runIf(available).each(users)('read rules by pattern, as $label', (user) => {
  const fixtures: Fixture[] = [];
  const reports: RunReport[] = [];

  beforeAll(async () => {
    for (const host of [false, true]) {
      const fixture = await makeFixture(parent, { ...user, label: `${user.label}-${host}` });
      fixtures.push(fixture);
      const ws = fixture.workspace;
      const owned = (file: string, text: string) => {
        fs.mkdirSync(path.dirname(file), { recursive: true });
        fs.writeFileSync(file, text);
        if (user.uid !== undefined) fs.chownSync(file, user.uid, user.gid ?? user.uid);
      };
      for (const [name, text] of Object.entries(files)) owned(path.join(ws, name), text);
      // A key outside the workspace, in a folder an absolute pattern names, and one a link points at.
      owned(path.join(fixture.outside, 'keys', 'a.key'), secret('a.key'));
      owned(path.join(fixture.outside, 'elsewhere.pem'), secret('elsewhere.pem'));
      fs.symlinkSync(path.join(fixture.outside, 'elsewhere.pem'), path.join(ws, 'link-out.txt'));
      fs.linkSync(path.join(ws, 'config', 'app.secret'), path.join(ws, 'prelinked.txt'));
      const [report] = await runAs(user, runner, fixture, [
        {
          label: host ? 'one long-lived sandbox' : 'a sandbox per command',
          host,
          options: { writableRoots: [ws] },
          cwd: ws,
          env: { OUT: fixture.outside },
          patterns: {
            hidden: ['*.pem', '**/.env', `${ws}/config/*.secret`, `${fixture.outside}/keys/*.key`],
            readOnly: ['*/yarn.lock'],
          },
          attempts,
        },
      ]);
      if (report === undefined) throw new Error('no report');
      reports.push(report);
    }
  }, 300_000);
  afterAll(async () => {
    for (const fixture of fixtures) await fixture.close();
  });

  it('no covered file is read, none written; the rest reads and writes', () => {
    expect(reports).toHaveLength(2);
    for (const [index, report] of reports.entries()) {
      expect(report.results).toHaveLength(attempts.length);
      for (const [number, attempt] of attempts.entries()) {
        const output = report.results[number]?.output ?? '';
        const where = `${report.label}: ${attempt.name}`;
        expect(output, where).not.toContain('SECRET-');
        if (attempt.evidence !== undefined) expect(output, where).toMatch(attempt.evidence);
        if (attempt.kind === 'works') expect(output, where).toContain('WORKS');
      }
      const ws = fixtures[index]?.workspace ?? '';
      expect(fs.readFileSync(path.join(ws, 'yarn.lock'), 'utf8')).toBe('original lock\n');
      expect(fs.readFileSync(path.join(ws, 'packages/a/yarn.lock'), 'utf8')).toBe(
        'original lock\n',
      );
      expect(fs.readFileSync(path.join(ws, 'public.txt'), 'utf8')).toBe('PUBLIC-text\nmore\n');
    }
  });
});

describe('PatternPaths', () => {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sandbox-patterns-'));
  afterAll(() => fs.rmSync(base, { recursive: true, force: true }));
  const matchesSuffix = (suffix: string) => ({
    patterns: [`*${suffix}`],
    matches: (entry: string) => entry.endsWith(suffix),
  });

  it('finds a file made since the last look, and forgets one removed', () => {
    const root = path.join(base, 'again');
    fs.mkdirSync(path.join(root, 'a', 'b'), { recursive: true });
    const finder = new PatternPaths();
    const look = () => finder.find({ roots: [root], hidden: matchesSuffix('.pem'), linked: [] });
    expect(look()).toEqual([]);
    fs.writeFileSync(path.join(root, 'a', 'b', 'x.pem'), '');
    expect(look()).toEqual([path.join(root, 'a', 'b', 'x.pem')]);
    fs.renameSync(path.join(root, 'a', 'b', 'x.pem'), path.join(root, 'a', 'y.pem'));
    expect(look()).toEqual([path.join(root, 'a', 'y.pem')]);
    fs.rmSync(path.join(root, 'a', 'y.pem'));
    expect(look()).toEqual([]);
  });

  it('refuses, naming the rules, when there are more folders than it may look through', () => {
    const root = path.join(base, 'many');
    for (let index = 0; index < 12; index++)
      fs.mkdirSync(path.join(root, `d${index}`), { recursive: true });
    const saved = patternSearchLimits.directories;
    patternSearchLimits.directories = 10;
    try {
      expect(() =>
        new PatternPaths().find({ roots: [root], hidden: matchesSuffix('.pem'), linked: [] }),
      ).toThrow(
        `the sandbox cannot look through more than 10 folders under ${root} for what the rules "*.pem" cover; not running the command with such a file in view`,
      );
    } finally {
      patternSearchLimits.directories = saved;
    }
  });
});
