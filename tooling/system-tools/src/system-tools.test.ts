// The no-bubblewrap path of `npm test`, on a PATH that really lacks bwrap (a temp dir of symlinks
// to the other tools): the line `scripts/run.mjs` prints up front, a real child vitest that skips
// and records, the summary of those records, and CI=true turning each into a failure.
import { spawnSync } from 'node:child_process';
import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import {
  installableTools,
  installCommand,
  missingSystemTools,
  preflightMessage,
  preflightTools,
  readSkipRecords,
  type SystemToolCommand,
  summarizeSkips,
} from './system-tools.mjs';

const repositoryRoot = fileURLToPath(new URL('../../..', import.meta.url));
const fixtures = fileURLToPath(new URL('./__fixtures__', import.meta.url));
const vitestBin = path.join(repositoryRoot, 'node_modules', 'vitest', 'vitest.mjs');
const work = mkdtempSync(path.join(tmpdir(), 'system-tools-test-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The absolute path of `command` on this process's PATH, if any. */
function onPath(command: string): string | undefined {
  for (const directory of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(directory, command);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {}
  }
  return undefined;
}

/** Where a tool really is: a version manager's python3 is a shim that needs its own PATH. */
function executableOf(command: string): string | undefined {
  const found = onPath(command);
  if (command !== 'python3' || found === undefined) return found;
  const result = spawnSync(found, ['-c', 'import sys; print(sys.executable)'], {
    encoding: 'utf8',
  });
  return result.status === 0 ? result.stdout.trim() : undefined;
}

// A PATH with every other tool this machine has, and no bwrap.
const bin = path.join(work, 'bin');
mkdirSync(bin);
const linked = preflightTools.filter((command) => {
  // bwrap is the one left out; the others are linked where this machine has them.
  const target = command === 'bwrap' ? undefined : executableOf(command);
  if (target !== undefined) symlinkSync(target, path.join(bin, command));
  return target !== undefined;
});
const withoutBubblewrap = { ...process.env, PATH: bin, CI: '' };
// What run.mjs says of bubblewrap here: not installed on Linux, not there at all on macOS.
const bubblewrap = missingSystemTools(['bwrap'], { env: withoutBubblewrap });
const problem = bubblewrap[0]?.problem ?? 'bwrap found';
const install = installCommand(installableTools(bubblewrap));
const expectedStart = `run: missing system tools: ${problem}`;
/** The reason and install command, as a skipped test and the summary say them. */
const reasonLine = `${problem}${install === undefined ? '' : ` (${install})`}`;

function runScript(args: string[], env: NodeJS.ProcessEnv) {
  return spawnSync(process.execPath, args, {
    cwd: repositoryRoot,
    env: { ...env, AGENT_SKIP_INSTALL: '1' },
    encoding: 'utf8',
    timeout: 120_000,
  });
}

describe('the preflight on a PATH without bwrap', () => {
  it('finds bubblewrap missing and nothing it was given', () => {
    const missing = missingSystemTools(preflightTools, { env: withoutBubblewrap });
    expect(missing).toContainEqual({ command: 'bwrap', problem: 'bubblewrap not installed' });
    for (const command of linked)
      expect(missing.map((entry) => entry.command)).not.toContain(command);
  });

  it('scripts/run.mjs prints one line: what is missing, the install command, that tests skip', () => {
    const result = runScript(['scripts/run.mjs', 'check-tools'], withoutBubblewrap);
    expect(result.status, result.stderr).toBe(0);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]?.startsWith(expectedStart), lines[0]).toBe(true);
    if (install !== undefined) expect(lines[0]).toContain(`install: ${install}`);
    expect(lines[0]).toContain('the tests that need them are skipped (CI=true fails instead)');
  });

  it('under CI=true the same line is a failure', () => {
    const result = runScript(['scripts/run.mjs', 'check-tools'], {
      ...withoutBubblewrap,
      CI: 'true',
    });
    expect(result.status).toBe(1);
    expect(result.stderr.startsWith(expectedStart), result.stderr).toBe(true);
    if (install !== undefined) expect(result.stderr).toContain(`install: ${install}`);
    expect(result.stderr).toContain('CI=true runs every suite, so this is a failure');
  });
});

describe('the message for each platform', () => {
  const bubblewrap = { command: 'bwrap', problem: 'bubblewrap not installed' } as const;
  const tmux = { command: 'tmux', problem: 'tmux not installed' } as const;

  it.each([
    [
      'Debian/Ubuntu, a user',
      [bubblewrap, tmux],
      { platform: 'linux', root: false, ci: false },
      'missing system tools: bubblewrap not installed; tmux not installed — install: sudo apt-get install bubblewrap tmux (Debian/Ubuntu) — the tests that need them are skipped (CI=true fails instead)',
    ],
    [
      'Debian/Ubuntu, root under CI',
      [bubblewrap],
      { platform: 'linux', root: true, ci: true },
      'missing system tools: bubblewrap not installed — install: apt-get install bubblewrap (Debian/Ubuntu) — CI=true runs every suite, so this is a failure',
    ],
    [
      'macOS: bubblewrap cannot be installed',
      [{ command: 'bwrap', problem: 'bubblewrap is Linux-only (no bubblewrap on macOS)' }, tmux],
      { platform: 'darwin', root: false, ci: false },
      'missing system tools: bubblewrap is Linux-only (no bubblewrap on macOS); tmux not installed — install: brew install tmux — bubblewrap does not exist on macOS: the OS sandbox suites are skipped there — the tests that need them are skipped (CI=true fails instead)',
    ],
    [
      'bubblewrap installed but without namespaces: nothing to install',
      [
        {
          command: 'bwrap',
          problem: 'bubblewrap cannot create namespaces here (bwrap: No permissions)',
        },
      ],
      { platform: 'linux', root: false, ci: false },
      'missing system tools: bubblewrap cannot create namespaces here (bwrap: No permissions) — the tests that need them are skipped (CI=true fails instead)',
    ],
  ] as const)('%s', (_label, missing, options, expected) => {
    expect(preflightMessage(missing, options)).toBe(expected);
  });

  it('says nothing when nothing is missing', () => {
    expect(preflightMessage([], { platform: 'linux' })).toBeUndefined();
  });

  it('on macOS bubblewrap is missing by platform, whatever PATH holds', () => {
    expect(missingSystemTools(['bwrap'], { platform: 'darwin' })).toEqual([
      { command: 'bwrap', problem: 'bubblewrap is Linux-only (no bubblewrap on macOS)' },
    ]);
  });
});

describe('a suite that needs bubblewrap, run without it', () => {
  function runFixture(records: string, ci: boolean) {
    return spawnSync(process.execPath, [vitestBin, 'run', '--root', fixtures], {
      cwd: fixtures,
      env: {
        ...withoutBubblewrap,
        CI: ci ? 'true' : '',
        AGENT_SKIP_RECORDS: records,
        NO_COLOR: '1',
      },
      encoding: 'utf8',
      timeout: 120_000,
    });
  }

  it('skips those tests visibly, runs the rest, and the summary counts them with the reason', () => {
    const records = path.join(work, 'records');
    const result = runFixture(records, false);
    const output = `${result.stdout}${result.stderr}`;
    expect(result.status, output).toBe(0);
    expect(output).toMatch(/Tests\s+1 passed \| 3 skipped \(4\)/);
    const skipped = readSkipRecords([records]);
    expect(skipped.map((record) => record.test).sort()).toEqual([
      'first',
      'one test of its own',
      'second',
    ]);
    for (const record of skipped) {
      expect(record).toMatchObject({
        file: 'tooling/system-tools/src/__fixtures__/needs-bubblewrap.test.ts',
        tools: ['bwrap'],
        install: installableTools(bubblewrap),
        reason: problem,
      });
    }
    expect(summarizeSkips(skipped)).toEqual([`skipped 3 tests in 1 file: ${reasonLine}`]);
  });

  it('under CI=true fails each of those tests with the same reason', () => {
    const records = path.join(work, 'records-ci');
    const result = runFixture(records, true);
    const output = `${result.stdout}${result.stderr}`;
    expect(result.status).toBe(1);
    expect(output).toMatch(/Tests\s+3 failed \| 1 passed \(4\)/);
    expect(output).toContain(
      `${reasonLine}: CI=true runs every test, so a missing tool is a failure`,
    );
    expect(readSkipRecords([records])).toEqual([]);
  });
});

describe('the summary', () => {
  const record = (file: string, test: string, tools: SystemToolCommand[], reason: string) => ({
    file,
    test,
    tools,
    install: tools,
    reason,
  });

  it('groups by reason, most tests first, and counts a test recorded twice once', () => {
    const lines = summarizeSkips(
      [
        record('a.test.ts', 'one', ['tmux'], 'tmux not installed'),
        record('b.test.ts', 'two', ['bwrap'], 'bubblewrap not installed'),
        record('b.test.ts', 'three', ['bwrap'], 'bubblewrap not installed'),
        record('c.test.ts', 'four', ['bwrap'], 'bubblewrap not installed'),
        record('c.test.ts', 'four', ['bwrap'], 'bubblewrap not installed'),
      ],
      { platform: 'linux', root: false },
    );
    expect(lines).toEqual([
      'skipped 3 tests in 2 files: bubblewrap not installed (sudo apt-get install bubblewrap)',
      'skipped 1 test in 1 file: tmux not installed (sudo apt-get install tmux)',
    ]);
  });
});

describe('a tool slow to start', () => {
  it('is not called missing: a probe that outlasts 10 s is tried again with room (the official CI at load 18)', () => {
    // A curl that takes 11 s the first time it is asked, then answers at once.
    const slow = path.join(work, 'slow-bin');
    mkdirSync(slow);
    const marker = path.join(work, 'slow-asked');
    writeFileSync(
      path.join(slow, 'curl'),
      `#!/bin/sh\n[ -e '${marker}' ] || { : > '${marker}'; exec /bin/sleep 11; }\necho 'curl 8.0.0'\n`,
      { mode: 0o755 },
    );
    expect(missingSystemTools(['curl'], { env: { ...process.env, PATH: slow } })).toEqual([]);
    expect(existsSync(marker)).toBe(true);
  }, 60_000);
});
