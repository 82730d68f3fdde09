import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Attempt } from './escape-attempts.js';
import { type Fixture, makeFixture, type RunReport, runAs } from './escape-harness.js';
import { runnerSuite } from './runner-suite.js';
import { createSandbox } from './sandbox.js';
import { SandboxUnavailableError } from './sandbox-errors.js';
import { trustedProgram } from './trusted-program.js';

// The sandbox starts through programs outside it: bubblewrap, and for the allow-listed network
// an outer stage that runs socat, sleep and umount with the whole file system (secrets
// included) in view. They were looked up by name on PATH at every start, and `npx`/`pnpm exec`
// put the project's node_modules/.bin first: a sandboxed command that wrote a `bwrap` there ran
// every later command — the same session's, and the next session's — unsandboxed, while the
// status still said sandboxed. Tried by the built package as root and as nobody.

const { available, users, parent, runner } = runnerSuite('programs planted on PATH', 'planted');

const planted = ['bwrap', 'socat', 'sleep', 'umount'];

/** A fake of each program in two PATH folders of the workspace: it records itself, then runs what follows `--` (unsandboxed). */
const plant: Attempt = {
  name: 'plant bwrap, socat, sleep and umount in node_modules/.bin and bin',
  kind: 'works',
  script: `mkdir -p node_modules/.bin bin; for name in ${planted.join(' ')}; do for dir in node_modules/.bin bin; do printf '#!/bin/sh\\necho "ran $0" >> "%s/FAKE-%s"\\ncat "$HOME"/.netrc "$HOME"/.ssh/* >> "%s/FAKE-%s" 2>/dev/null\\nwhile [ $# -gt 0 ]; do if [ "$1" = -- ]; then shift; exec "$@"; fi; shift; done\\n' "$WS" "$name" "$WS" "$name" > "$dir/$name"; chmod 755 "$dir/$name"; done; done; echo WORKS`,
};

const writeOutside: Attempt = {
  name: 'write outside the workspace',
  evidence: /Read-only file system/,
  script: 'touch "$OUT/escaped" && echo ESCAPED; cat /proc/1/comm; true',
};

/** Ends the long-lived sandbox's helper: the next command starts a new one. */
const killHelper: Attempt = {
  name: 'kill the long-lived sandbox’s helper',
  script:
    'for p in /proc/[0-9]*; do tr "\\0" " " < "$p/cmdline" 2>/dev/null | grep -q exec-helper && kill -9 "$(basename "$p")"; done; true',
};

describe.runIf(available).each(users)('programs planted on PATH, as $label', (user) => {
  let fixture: Fixture;
  let reports: RunReport[] = [];

  beforeAll(async () => {
    fixture = await makeFixture(parent, user);
    const ws = fixture.workspace;
    const common = {
      cwd: ws,
      env: { WS: ws, OUT: fixture.outside },
      // As npx puts it, and a project's own bin (direnv's PATH_add), and relative to the runner's cwd.
      pathFirst: [
        path.join(ws, 'node_modules', '.bin'),
        path.join(ws, 'bin'),
        path.relative(fixture.base, path.join(ws, 'bin')),
      ],
    };
    reports = await runAs(user, runner, fixture, [
      // The sandbox was made before the plant: each later start looked bwrap up again.
      {
        ...common,
        label: 'the same sandbox, a command each',
        options: { writableRoots: [ws] },
        attempts: [plant, writeOutside],
      },
      {
        ...common,
        label: 'the same long-lived sandbox, its helper killed',
        host: true,
        options: { writableRoots: [ws] },
        attempts: [killHelper, writeOutside],
      },
      // The next session: a new sandbox, the planted programs first on PATH.
      {
        ...common,
        label: 'the next session',
        options: { writableRoots: [ws] },
        attempts: [writeOutside],
      },
      {
        ...common,
        label: 'the next session, allow-listed network (socat, sleep, umount outside)',
        options: { writableRoots: [ws], network: { allowHosts: ['127.0.0.1'] } },
        attempts: [writeOutside],
      },
    ]);
  }, 300_000);
  afterAll(async () => {
    await fixture?.close();
  });

  it('every command still runs in the real sandbox, and no planted program ran', () => {
    expect(reports.map((report) => report.label)).toHaveLength(4);
    for (const report of reports) {
      expect(report.status.active, report.label).toBe(true);
      for (const result of report.results) {
        const where = `${report.label}: ${result.name}`;
        expect(result.output, where).not.toMatch(/ESCAPED|SECRET-/);
        if (result.name === writeOutside.name)
          expect(result.output, where).toMatch(/Read-only file system/);
      }
    }
    expect(reports[0]?.results[0]?.output).toContain('WORKS');
    expect(fs.existsSync(path.join(fixture.outside, 'escaped'))).toBe(false);
    const fakes = fs.readdirSync(fixture.workspace).filter((name) => name.startsWith('FAKE-'));
    expect(fakes).toEqual([]);
  });
});

describe('trustedProgram', () => {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sandbox-trusted-'));
  afterAll(() => fs.rmSync(base, { recursive: true, force: true }));
  const program = (directory: string, mode = 0o755) => {
    fs.mkdirSync(directory, { recursive: true });
    const file = path.join(directory, 'tool');
    fs.writeFileSync(file, '#!/bin/sh\n', { mode });
    fs.chmodSync(file, mode);
    return file;
  };
  const workspace = path.join(base, 'ws');
  const inWorkspace = program(path.join(workspace, 'bin'));
  const inModules = program(path.join(base, 'elsewhere', 'node_modules', '.bin'));
  const open = program(path.join(base, 'open'));
  fs.chmodSync(path.join(base, 'open'), 0o777);
  const othersMayWrite = program(path.join(base, 'group'), 0o775);
  const good = program(path.join(base, 'system'));

  it('skips a PATH entry in a writable root, in node_modules, relative, or writable by others, and finds the next', () => {
    const relative = path.relative(process.cwd(), path.dirname(program(path.join(base, 'rel'))));
    const searchPath = [
      path.dirname(inWorkspace),
      path.dirname(inModules),
      relative,
      path.dirname(open),
      path.dirname(othersMayWrite),
      path.dirname(good),
    ].join(':');
    expect(trustedProgram('tool', { searchPath, untrustedRoots: [workspace] })).toEqual({
      path: fs.realpathSync(good),
    });
  });

  it.each([
    [inWorkspace, 'inside the writable root'],
    [inModules, 'inside node_modules'],
    [open, 'may be written by other users'],
    [othersMayWrite, 'may be written by other users'],
  ])('refuses %s given by path: %s', (file, why) => {
    const found = trustedProgram(file, { searchPath: '', untrustedRoots: [workspace] });
    expect(found).toEqual({ problem: expect.stringContaining(why) });
  });

  it('names what it skipped when nothing else is found', () => {
    const found = trustedProgram('tool', {
      searchPath: path.dirname(inWorkspace),
      untrustedRoots: [workspace],
    });
    expect(found).toEqual({
      problem: `tool not found on PATH; not using ${inWorkspace} (inside the writable root ${workspace}, where sandboxed commands could replace it)`,
    });
  });

  it.runIf(available)(
    'a bwrapPath inside the workspace: required refuses, auto says it runs unsandboxed and why',
    () => {
      const bwrapPath = path.join(workspace, 'bin', 'bwrap');
      fs.symlinkSync('/usr/bin/bwrap', bwrapPath);
      const required = () =>
        createSandbox({ mode: 'required', writableRoots: [workspace], bwrapPath });
      expect(required).toThrow(SandboxUnavailableError);
      expect(required).toThrow(
        `The sandbox is required but cannot run: bubblewrap is not installed (not using ${bwrapPath} (inside the writable root ${workspace}, where sandboxed commands could replace it); apt-get install bubblewrap)`,
      );
      const warnings: string[] = [];
      const auto = createSandbox({
        mode: 'auto',
        writableRoots: [workspace],
        bwrapPath,
        onWarning: (message) => warnings.push(message),
      });
      expect(auto.status.active).toBe(false);
      expect(warnings).toEqual([expect.stringContaining(`not using ${bwrapPath}`)]);
    },
  );
});
