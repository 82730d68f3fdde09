import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Attempt,
  capabilityAttempts,
  descriptorAttempts,
  gitPlantingAttempts,
  homeStartupFixture,
  nestedGitAttempts,
  secretAttempts,
  socketAttempts,
  startupFileAttempts,
} from './escape-attempts.js';
import {
  containmentLimitations,
  type Fixture,
  inheritedDescriptorNumbers,
  int80Program,
  makeFixture,
  type RunnerRun,
  type RunReport,
  runAs,
  socketGreeting,
  startupFileText,
  syscallNumbers,
  victimText,
} from './escape-harness.js';
import { runnerSuite } from './runner-suite.js';

// The three escape classes of issue 24 — capabilities (root inside unmounting the masks),
// Unix-domain sockets outside the hidden directories, `.env` files and credential stores — tried
// from inside real sandboxes, by the built package, as root and as nobody, with every network
// mode. The fixture lives under /var/tmp: outside the private /tmp and /run the sandbox hides
// wholesale, so only the new defences stand between an attempt and the host.

const { available, users, parent, runner } = runnerSuite('sandbox escapes', 'escapes');
const programs = path.join(parent, 'programs');
fs.mkdirSync(programs);
fs.chmodSync(programs, 0o755);
const int80 = os.machine() === 'x86_64';
if (int80) {
  for (const call of ['socket', 'socketcall'] as const) {
    fs.writeFileSync(path.join(programs, `int80-${call}`), int80Program(call), { mode: 0o755 });
  }
}
let httpServer: http.Server;
let httpPort: number;

beforeAll(async () => {
  httpServer = http.createServer((_request, response) => response.end('WORKS-FROM-HOST-HTTP\n'));
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  httpPort = (httpServer.address() as AddressInfo).port;
});
afterAll(async () => {
  httpServer.closeAllConnections();
  await new Promise<void>((resolve) => httpServer.close(() => resolve()));
});

// Each network mode twice: a sandbox per attempt, and every attempt in one long-lived sandbox
// (the bash tool's default: a helper inside forks each command).
const networks = (
  [
    { label: 'network off', network: 'off' },
    { label: 'network on', network: 'on' },
    { label: 'allow-listed network', network: { allowHosts: ['127.0.0.1'] } },
  ] as const
).flatMap((entry) => [
  { ...entry, host: false },
  { ...entry, label: `${entry.label}, long-lived sandbox`, host: true },
]);

/** Runs whose workspace is the home directory, in a sandbox per attempt and in a long-lived one. */
const homeWorkspaces = [
  { label: 'the home as the workspace', host: false },
  { label: 'the home as the workspace, long-lived sandbox', host: true },
];

const attackAttempts: readonly Attempt[] = [
  ...capabilityAttempts,
  ...socketAttempts,
  ...secretAttempts,
  ...descriptorAttempts,
  ...gitPlantingAttempts,
  ...nestedGitAttempts,
  {
    name: 'the proxy relay (socat, outside the filter) is out of sight and reach',
    script: `ps ax -o pid=,args= | grep '[s]ocat' && echo ESCAPED; true`,
  },
];

function environment(fixture: Fixture, hostPid: number): Record<string, string> {
  return {
    WS: fixture.workspace,
    ANCESTOR: fixture.ancestor,
    BASE: fixture.base,
    OUT: fixture.outside,
    SOCK: fixture.socketPath,
    ABSTRACT: fixture.abstractName,
    HOSTPID: String(hostPid),
    NODE: runner.node,
    HTTP_PORT: String(httpPort),
    ...(int80
      ? {
          INT80_SOCKET: path.join(programs, 'int80-socket'),
          INT80_SOCKETCALL: path.join(programs, 'int80-socketcall'),
        }
      : {}),
    ...syscallNumbers(),
  };
}

/**
 * A process outside every sandbox, with a secret in its environment. It outlives the longest
 * set-up (25 min) and is stopped after the suite: `sleep 600` ended by itself in a set-up past
 * 10 min, and the check that no attempt killed it failed (run81).
 */
function startHostProcess(): { pid: number; state(): string; stop(): void } {
  const child = spawn('sleep', ['3600'], {
    env: { PATH: process.env.PATH, HOST_SECRET: 'SECRET-HOST-ENVIRON' },
    stdio: 'ignore',
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error('could not start the host process');
  return {
    pid,
    state: () => {
      try {
        return fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] ?? 'gone';
      } catch {
        return 'gone';
      }
    },
    stop: () => child.kill('SIGKILL'),
  };
}

function expectNoEscape(report: RunReport, attempt: Attempt): void {
  const result = report.results.find((entry) => entry.name === attempt.name);
  expect(result, `no result for ${attempt.name}`).toBeDefined();
  const output = result?.output ?? '';
  if (attempt.kind === 'works') {
    expect(output, `${report.label}: ${attempt.name}`).toContain('WORKS');
    return;
  }
  expect(output, `${report.label}: ${attempt.name}`).not.toMatch(/ESCAPED|SECRET-/);
  if (attempt.evidence !== undefined) {
    expect(output, `${report.label}: ${attempt.name}`).toMatch(attempt.evidence);
  }
}

describe.runIf(available).each(users)('sandbox escapes, as $label', (user) => {
  let fixture: Fixture;
  let host: ReturnType<typeof startHostProcess>;
  let reports: RunReport[] = [];
  let controls: RunReport[] = [];
  let connectionsDuringAttacks = -1;

  beforeAll(async () => {
    fixture = await makeFixture(parent, user);
    host = startHostProcess();
    const env = environment(fixture, host.pid);
    const runs: RunnerRun[] = networks.map(({ label, network, host: inHost }) => ({
      label,
      host: inHost,
      options: { writableRoots: [fixture.workspace], network },
      cwd: fixture.workspace,
      env,
      attempts: [
        ...attackAttempts,
        ...(typeof network === 'object'
          ? [
              {
                name: 'an allowed host is reached through the proxy',
                kind: 'works' as const,
                script: 'curl -sS -m 10 "http://127.0.0.1:$HTTP_PORT/"',
              },
            ]
          : []),
      ],
    }));
    // A workspace that is the home directory: its startup files stay read-only.
    const homeRuns: RunnerRun[] = homeWorkspaces.map(({ label, host: inHost }) => ({
      label,
      host: inHost,
      options: { writableRoots: [fixture.home] },
      cwd: fixture.home,
      env,
      attempts: startupFileAttempts,
    }));
    reports = await runAs(user, runner, fixture, [...runs, ...homeRuns]);
    // ESCAPE_REPORT=dir keeps what every attempt printed, to read why each one failed.
    const keep = process.env.ESCAPE_REPORT;
    if (keep !== undefined) {
      fs.writeFileSync(
        path.join(keep, `escapes-${user.label}.json`),
        JSON.stringify(reports, null, 1),
      );
    }
    connectionsDuringAttacks = fixture.connections();
    // Controls: the same attempts find what they look for once the defence is lifted, so the
    // checks above can fail.
    controls = await runAs(user, runner, fixture, [
      {
        label: 'allowUnixSockets',
        options: { writableRoots: [fixture.workspace], allowUnixSockets: [fixture.socketPath] },
        cwd: fixture.workspace,
        env,
        attempts: socketAttempts.slice(0, 4),
      },
      {
        label: 'allowUnixSockets with the allow-listed network',
        options: {
          writableRoots: [fixture.workspace],
          allowUnixSockets: [fixture.socketPath],
          network: { allowHosts: ['127.0.0.1'] },
        },
        cwd: fixture.workspace,
        env,
        attempts: [...socketAttempts.slice(0, 1), ...capabilityAttempts.slice(0, 2)],
      },
      {
        label: 'no secret paths',
        options: {
          writableRoots: [fixture.workspace],
          secretPaths: [],
          hideEnvironmentFiles: false,
        },
        cwd: fixture.workspace,
        env,
        attempts: secretAttempts,
      },
      {
        label: 'no .git protection',
        options: { writableRoots: [fixture.workspace], protectGitDirectories: false },
        cwd: fixture.workspace,
        env,
        attempts: [
          {
            name: 'write in .git',
            kind: 'works' as const,
            script: 'touch "$WS/.git/control-marker" && rm "$WS/.git/control-marker" && echo WORKS',
          },
          {
            name: 'write in a nested .git',
            kind: 'works' as const,
            script:
              'touch "$WS/vendor/lib/.git/control-marker" && rm "$WS/vendor/lib/.git/control-marker" && echo WORKS',
          },
        ],
      },
      {
        label: 'no startup file protection',
        options: { writableRoots: [fixture.home], protectStartupFiles: false },
        cwd: fixture.home,
        env,
        attempts: [
          {
            name: 'write ~/.bashrc',
            kind: 'works' as const,
            script:
              'cp "$HOME/.bashrc" "$HOME/.bashrc-saved" && echo "# control" >> "$HOME/.bashrc" && mv "$HOME/.bashrc-saved" "$HOME/.bashrc" && echo WORKS',
          },
        ],
      },
    ]);
    // Some 650 attempts and 8 controls, one at a time (they share the fixture): 4–9 minutes a
    // user on a loaded 2-core machine (run79, ESCAPE_REPORT's per-attempt times).
  }, 1_500_000);

  afterAll(async () => {
    host?.stop();
    await fixture?.close();
  });

  describe.each(networks)('$label', ({ label }) => {
    const report = () => {
      const found = reports.find((entry) => entry.label === label);
      if (found === undefined) throw new Error(`no report for ${label}`);
      return found;
    };

    it('is active, and its status says Unix sockets are blocked', () => {
      expect(report().status.active).toBe(true);
      expect(report().status.unixSockets).toBe('blocked');
      // Memory (and root's processes) where no cgroup can be made: resource-limits.test.ts.
      expect(containmentLimitations(report().status.limitations)).toEqual([]);
      expect(report().description).toContain('no Unix sockets');
    });

    it.each(capabilityAttempts)('capabilities: $name', (attempt) => {
      expectNoEscape(report(), attempt);
    });
    it.each(socketAttempts)('sockets: $name', (attempt) => {
      expectNoEscape(report(), attempt);
    });
    it.each(secretAttempts)('secrets: $name', (attempt) => {
      expectNoEscape(report(), attempt);
    });
    it.each(descriptorAttempts)('inherited descriptors: $name', (attempt) => {
      expectNoEscape(report(), attempt);
    });
    it.each(gitPlantingAttempts)('planting in .git: $name', (attempt) => {
      expectNoEscape(report(), attempt);
    });
    it.each(nestedGitAttempts)('planting in a nested repository: $name', (attempt) => {
      expectNoEscape(report(), attempt);
    });
    it('checkPlanted() reports the repositories an attempt made, and nothing after the others', () => {
      for (const result of report().results) {
        if (result.name.startsWith('plant new repositories')) {
          expect(
            result.planted.map((entry) => path.relative(fixture.workspace, entry)).sort(),
          ).toEqual([
            expect.stringMatching(/^planted-\d+\/bare\.git$/),
            expect.stringMatching(/^planted-\d+\/gitfile\/\.git$/),
            expect.stringMatching(/^planted-\d+\/repo\/\.git$/),
          ]);
        } else {
          expect(result.planted, result.name).toEqual([]);
        }
      }
    });
    it.each(attackAttempts.slice(-1))('proxy relay: $name', (attempt) => {
      expectNoEscape(report(), attempt);
    });
  });

  it('hides the .env files above the workspace and in the home, not the project’s own', () => {
    const hidden = reports[0]?.status.hiddenPaths ?? [];
    expect(hidden).toEqual(
      expect.arrayContaining([
        path.join(fixture.ancestor, '.env'),
        path.join(fixture.ancestor, '.envrc'),
        path.join(fixture.base, '.envs'),
        path.join(fixture.home, '.env'),
        path.join(fixture.home, '.ssh'),
        path.join(fixture.home, '.docker/config.json'),
      ]),
    );
    expect(hidden).not.toContain(path.join(fixture.workspace, '.env'));
  });

  it("the repository's .git is as it was: its config sets nothing, no hook, no commondir", () => {
    const git = path.join(fixture.workspace, '.git');
    expect(fs.readFileSync(path.join(git, 'config'), 'utf8')).not.toMatch(/fsmonitor/);
    expect(fs.readdirSync(path.join(git, 'hooks'))).not.toContain('pre-commit');
    expect(fs.existsSync(path.join(git, 'commondir'))).toBe(false);
    expect(fs.readFileSync(path.join(git, 'hooks', 'pre-commit.sample'), 'utf8')).toBe(
      '#!/bin/sh\n',
    );
  });

  describe.each(homeWorkspaces)('$label', ({ label }) => {
    const report = () => {
      const found = reports.find((entry) => entry.label === label);
      if (found === undefined) throw new Error(`no report for ${label}`);
      return found;
    };
    it('is active with nothing it cannot enforce', () => {
      expect(report().status.active).toBe(true);
      expect(containmentLimitations(report().status.limitations)).toEqual([]);
    });
    it.each(startupFileAttempts)('startup files: $name', (attempt) => {
      expectNoEscape(report(), attempt);
    });
    it('checkPlanted() reports the startup file the first run planted, and nothing else', () => {
      const planted = report().results.flatMap((result) => result.planted);
      expect(planted).toEqual(
        label === homeWorkspaces[0]?.label ? [path.join(fixture.home, '.zshrc')] : [],
      );
    });
  });

  it('the nested repositories are as they were: no fsmonitor, no hook, the .git file unchanged', () => {
    const workspace = fixture.workspace;
    for (const config of [
      'vendor/lib/.git/config',
      'a/b/c/d/deep/.git/config',
      'mirror.git/config',
      'store/separate.git/config',
    ]) {
      expect(fs.readFileSync(path.join(workspace, config), 'utf8'), config).not.toMatch(
        /fsmonitor/,
      );
    }
    for (const hooks of [
      'vendor/lib/.git/hooks',
      'a/b/c/d/deep/.git/hooks',
      'mirror.git/hooks',
      'store/separate.git/hooks',
    ]) {
      expect(fs.readdirSync(path.join(workspace, hooks)), hooks).not.toContain('post-checkout');
    }
    expect(fs.readFileSync(path.join(workspace, 'separate/.git'), 'utf8')).toBe(
      `gitdir: ${path.join(workspace, 'store/separate.git')}\n`,
    );
    expect(fs.existsSync(path.join(workspace, 'vendor/lib/.git-old'))).toBe(false);
  });

  it('the home’s startup files are as they were, and nothing was planted in ~/.local/bin', () => {
    for (const file of homeStartupFixture) {
      expect(fs.readFileSync(path.join(fixture.home, file), 'utf8'), file).toBe(startupFileText);
    }
    expect(fs.readdirSync(path.join(fixture.home, '.local/bin'))).toEqual([]);
    // Planted by the first run (reported); the later runs found it protected.
    expect(fs.readFileSync(path.join(fixture.home, '.zshrc'), 'utf8')).toBe(
      `touch ${fixture.outside}/pwned\n`,
    );
    expect(fs.existsSync(path.join(fixture.home, '.profile-old'))).toBe(false);
  });

  it('control: without protectGitDirectories, .git and the nested ones are writable (the attempts above could succeed)', () => {
    const control = controls[3];
    expect(control?.results.map((result) => result.output)).toEqual([
      expect.stringContaining('WORKS'),
      expect.stringContaining('WORKS'),
    ]);
  });

  it('control: without protectStartupFiles, ~/.bashrc is writable', () => {
    expect(controls[4]?.results[0]?.output).toContain('WORKS');
  });

  it('the host is untouched: no write outside, the outside process alive, no connection to the host sockets', () => {
    expect(fs.readFileSync(path.join(fixture.outside, 'victim.txt'), 'utf8')).toBe(victimText);
    expect(fs.readdirSync(fixture.outside)).toEqual(['victim.txt']);
    expect(host.state()).toMatch(/^[SR]$/);
    expect(connectionsDuringAttacks).toBe(0);
    // The runner removed its proxy socket when it exited; the user's filter directory stays.
    expect(fs.readdirSync(fixture.temporary)).toEqual([
      `agent-sandbox-seccomp-${user.uid ?? process.getuid?.()}`,
    ]);
  });

  it('control: an allow-listed socket is reached (by each client), also next to the allow-listed network', () => {
    const [allowed, withProxy] = controls;
    expect(allowed?.status.unixSockets).toBe('allowed');
    expect(allowed?.description).toContain(`Unix sockets allowed (${fixture.socketPath})`);
    for (const result of allowed?.results ?? []) {
      expect(result.output, result.name).toContain(socketGreeting.trim());
    }
    expect(withProxy?.results[0]?.output).toContain(socketGreeting.trim());
    // Still no way back to capabilities in the nested sandbox.
    for (const result of withProxy?.results.slice(1) ?? []) {
      expect(result.output, result.name).not.toMatch(/ESCAPED|SECRET-home/);
    }
    expect(fixture.connections()).toBeGreaterThan(connectionsDuringAttacks);
  });

  it('control: the runner did hold the descriptors the descriptor attempts look for', () => {
    const inherited = reports[0]?.inherited ?? {};
    for (const [index, fd] of inheritedDescriptorNumbers.entries())
      expect(inherited[String(fd)], `descriptor ${fd}`).toBe(
        index % 2 === 0 ? path.join(fixture.outside, 'victim.txt') : fixture.home,
      );
  });

  it('control: with no secret paths, the same attempts read the secrets', () => {
    const control = controls[2];
    expect(control?.status.hiddenPaths).toEqual([]);
    const outputs = (control?.results ?? []).map((result) => result.output).join('\n');
    expect(outputs).toContain('SECRET-home/.ssh/id_ed25519');
    expect(outputs).toContain('SECRET-monorepo/.env');
    expect(outputs).toContain('SECRET-.envs/prod');
  });
});

// The hand-made x86-64 programs work: outside the sandbox their 32-bit call returns a socket.
if (int80) {
  describe('the int 0x80 programs, outside the sandbox', () => {
    it('reach the 32-bit socket calls (unless this kernel has no ia32 emulation)', () => {
      for (const call of ['socket', 'socketcall']) {
        const result = spawnSync(path.join(programs, `int80-${call}`));
        // 42: a descriptor came back; a SIGSEGV means this kernel has no ia32 emulation at all.
        expect([42, null]).toContain(result.status);
        if (result.status === null) expect(result.signal).toBe('SIGSEGV');
      }
    });
  });
}
