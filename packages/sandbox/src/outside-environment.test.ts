import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Attempt } from './escape-attempts.js';
import { type Fixture, makeFixture, type RunReport, runAs } from './escape-harness.js';
import {
  carryEnvironment,
  environmentArguments,
  withEnvironmentDescriptor,
} from './outside-environment.js';
import { closingShellOptions } from './outside-shells.js';
import { runnerSuite } from './runner-suite.js';

// The programs that start a sandbox run outside it: the shells that enter the cgroups, open the
// filter and pin directories, bwrap, and for the allow-listed network an outer bwrap, its shell
// and socat. They were started with the command's environment: LD_PRELOAD loaded a library into
// each of them, LD_DEBUG_OUTPUT made the loader write files, PATH named their programs, BASH_ENV
// and ENV named start-up scripts — outside the sandbox, with the whole file system in view.
// Whoever sets a command's environment (a user's config, a project's .mcp.json) must not thereby
// run code outside it. Tried by the built package as root and as nobody; every hostile variable
// must still reach the command inside, with its value.

const { available, users, parent, runner } = runnerSuite(
  'the environment of the programs that start a sandbox',
  'outside-env',
);

/** What the constructor of the preloaded library does: append the program it was loaded into. */
const preloadSource = `#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
__attribute__((constructor)) static void mark(void) {
  const char *file = getenv("AGENT_PRELOAD_MARKER");
  char exe[512];
  ssize_t n;
  FILE *out;
  if (file == NULL) return;
  n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  exe[n < 0 ? 0 : n] = 0;
  out = fopen(file, "a");
  if (out != NULL) { fprintf(out, "%s\\n", exe); fclose(out); }
}
`;

/** A real library to preload where a C compiler exists here, else a missing one (the loader still looks). */
function preloadLibrary(): string {
  const library = path.join(parent, 'marker-preload.so');
  const source = path.join(parent, 'marker-preload.c');
  fs.writeFileSync(source, preloadSource);
  const built = spawnSync('cc', ['-shared', '-fPIC', '-o', library, source], { stdio: 'ignore' });
  if (built.status === 0) fs.chmodSync(library, 0o755);
  return library;
}

/** Programs the outside stages run or could look up on PATH: each fake records itself, then runs the real one. */
const faked = ['sh', 'bash', 'dash', 'bwrap', 'socat', 'sleep', 'umount', 'perl', 'env', 'node'];

/** The hostile environment, with each hook leaving a file in `markers` if it runs outside. */
function hostileEnvironment(base: string, markers: string): Record<string, string> {
  const bin = path.join(base, 'bin');
  const perl = path.join(base, 'perl');
  const tmpdir = path.join(base, 'tmpdir');
  for (const directory of [bin, perl, tmpdir]) fs.mkdirSync(directory, { recursive: true });
  for (const name of faked) {
    fs.writeFileSync(
      path.join(bin, name),
      `#!/bin/sh\necho "$0" >> '${markers}/path-${name}'\nPATH=/usr/bin:/bin exec ${name} "$@"\n`,
      { mode: 0o755 },
    );
  }
  fs.writeFileSync(path.join(base, 'startup.sh'), `echo "$0" >> '${markers}/startup-script'\n`);
  fs.writeFileSync(
    path.join(perl, 'AgentMarker.pm'),
    `package AgentMarker; if (open(my $f, '>>', '${markers}/perl5opt')) { print $f "$0\\n" } print STDERR "AGENT-PERL5OPT-RAN\\n"; 1;\n`,
  );
  return {
    PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}`,
    LD_PRELOAD: preloadLibrary(),
    AGENT_PRELOAD_MARKER: path.join(markers, 'preloaded'),
    LD_DEBUG: 'libs',
    LD_DEBUG_OUTPUT: path.join(markers, 'ld-debug'),
    LD_LIBRARY_PATH: path.join(base, 'lib'),
    GCONV_PATH: path.join(base, 'gconv'),
    GLIBC_TUNABLES: 'glibc.malloc.check=3',
    MALLOC_PERTURB_: '85',
    LOCPATH: path.join(base, 'locale'),
    HOSTALIASES: path.join(base, 'hosts'),
    BASH_ENV: path.join(base, 'startup.sh'),
    ENV: path.join(base, 'startup.sh'),
    PERL5OPT: '-MAgentMarker',
    PERL5LIB: perl,
    SOCAT_DEFAULT_LISTEN_IP: '4',
    TMPDIR: tmpdir,
    // Values the shells must carry intact: quotes, a line break, `=`, a leading dash, nothing.
    AGENT_TEST_AWKWARD: `it's "quoted" $HOME \\ \`x\` --bind / /\nsecond=line`,
    AGENT_TEST_EMPTY: '',
  };
}

/** Prints the command's own environment as it got it (NUL-separated, between markers). */
const printEnvironment: Attempt = {
  name: 'print the environment the command got',
  kind: 'works',
  script: `printf 'BEGIN-ENV\\0'; while IFS= read -r -d '' entry; do printf '%s\\0' "$entry"; done < /proc/$$/environ; printf 'END-ENV\\0WORKS\\n'`,
};

/** The entries a command printed with {@link printEnvironment}. */
function printedEnvironment(output: string): Map<string, string> {
  const start = output.indexOf('BEGIN-ENV\0');
  const end = output.indexOf('\0END-ENV\0');
  const entries = new Map<string, string>();
  if (start < 0 || end < start) return entries;
  for (const entry of output.slice(start + 'BEGIN-ENV\0'.length, end).split('\0')) {
    const equals = entry.indexOf('=');
    if (equals > 0) entries.set(entry.slice(0, equals), entry.slice(equals + 1));
  }
  return entries;
}

describe.runIf(available).each(users)('the programs that start a sandbox, as $label', (user) => {
  let fixture: Fixture;
  let reports: RunReport[] = [];
  let markers: string;
  let hostile: Record<string, string>;

  beforeAll(async () => {
    fixture = await makeFixture(parent, user);
    markers = path.join(fixture.outside, 'markers');
    fs.mkdirSync(markers);
    fs.chmodSync(markers, 0o777);
    hostile = hostileEnvironment(path.join(fixture.outside, 'hostile'), markers);
    const ws = fixture.workspace;
    const common = { cwd: ws, env: hostile, attempts: [printEnvironment] };
    reports = await runAs(user, runner, fixture, [
      { ...common, label: 'a command each', options: { writableRoots: [ws] } },
      { ...common, label: 'a long-lived sandbox', host: true, options: { writableRoots: [ws] } },
      {
        ...common,
        label: 'allow-listed network (socat and an outer bwrap outside)',
        options: { writableRoots: [ws], network: { allowHosts: ['127.0.0.1'] } },
      },
    ]);
  }, 300_000);
  afterAll(async () => {
    await fixture?.close();
  });

  it('nothing outside the sandbox honoured the command’s environment', () => {
    expect(reports).toHaveLength(3);
    // Each marker, by what ran: the loader's log names the programs it started.
    const left: Record<string, string[]> = {};
    for (const name of fs.readdirSync(markers)) {
      const text = fs.readFileSync(path.join(markers, name), 'utf8');
      const programs = [...text.matchAll(/initialize program: (\S+)/g)].map((match) => match[1]);
      left[name.replace(/\.\d+$/, '')] ??= [];
      left[name.replace(/\.\d+$/, '')]?.push(
        ...(programs.length > 0 ? programs : text.trim().split('\n')).map(String),
      );
    }
    expect(left).toEqual({});
    // No outside stage wrote in the TMPDIR the command named.
    expect(fs.readdirSync(hostile.TMPDIR ?? '')).toEqual([]);
    for (const report of reports) {
      expect(report.results[0]?.output, report.label).not.toContain('AGENT-PERL5OPT-RAN');
    }
  });

  it('the command got every variable with its value (TMPDIR is the private /tmp)', () => {
    for (const report of reports) {
      const result = report.results[0];
      expect(report.status.active, report.label).toBe(true);
      expect(result?.output, report.label).toContain('WORKS');
      const seen = printedEnvironment(result?.output ?? '');
      for (const [name, value] of Object.entries(hostile)) {
        expect([report.label, name, seen.get(name)]).toEqual([
          report.label,
          name,
          name === 'TMPDIR' ? '/tmp' : value,
        ]);
      }
      const ours = [...seen.keys()].filter((name) => name.startsWith('AGENT_SANDBOX_'));
      expect(ours, report.label).toEqual([]);
    }
  });
});

describe('carrying the environment to bwrap', () => {
  it('puts no value in argv, and gives the outside stages a system PATH and nothing they read', () => {
    const carried = carryEnvironment({
      PATH: '/ws/bin',
      SECRET_TOKEN: 'hunter2',
      LD_PRELOAD: '/ws/evil.so',
      UNSET: undefined,
      'A=B': 'x',
    });
    expect(carried.env).toEqual({
      PATH: '/usr/sbin:/usr/bin:/sbin:/bin',
      AGENT_SANDBOX_ENV_0: 'PATH=/ws/bin',
      AGENT_SANDBOX_ENV_1: 'SECRET_TOKEN=hunter2',
      AGENT_SANDBOX_ENV_2: 'LD_PRELOAD=/ws/evil.so',
    });
    const script = withEnvironmentDescriptor(carried, 'exec "$@"', 'bash');
    expect(script).not.toContain('hunter2');
  });

  it.each(['bash', 'sh'] as const)(
    'the %s script hands bwrap every entry intact, and keeps standard input',
    (shell) => {
      const environment = {
        PLAIN: 'value',
        AWKWARD: `it's "q" $HOME \\ \`x\` --bind / /\nnext=line`,
        EMPTY: '',
        'BASH_FUNC_echo%%': '() { echo hijacked; }',
        DASHED: '--setenv',
      };
      const carried = carryEnvironment(environment);
      // bwrap's part played by a program that reads descriptor 8 and standard input.
      const reader = [
        '-e',
        `const fs = require('node:fs'); process.stdout.write(JSON.stringify({ args: fs.readFileSync(8, 'latin1'), stdin: fs.readFileSync(0, 'utf8') }));`,
      ];
      const file = shell === 'bash' ? '/bin/bash' : '/bin/sh';
      const result = spawnSync(
        file,
        [
          ...(shell === 'bash' ? closingShellOptions : []),
          '-c',
          withEnvironmentDescriptor(carried, 'exec "$@"', shell),
          'test',
          process.execPath,
          ...reader,
        ],
        { env: carried.env, input: 'standard input\n', encoding: 'utf8' },
      );
      expect(result.stderr).toBe('');
      const { args, stdin } = JSON.parse(result.stdout) as { args: string; stdin: string };
      expect(stdin).toBe('standard input\n');
      const words = args.split('\0');
      expect(words.pop()).toBe('');
      const set = new Map<string, string>();
      for (let index = 0; index < words.length; index += 3) {
        expect(words[index]).toBe('--setenv');
        set.set(words[index + 1] ?? '', words[index + 2] ?? '');
      }
      expect(Object.fromEntries(set)).toEqual(environment);
      expect(environmentArguments).toEqual(['--clearenv', '--args', '8']);
    },
  );
});

describe('a caller that spawns without the environment wrap() returned', () => {
  it.each(['bash', 'sh'] as const)(
    'is refused by the %s script (exit 125), not started with another',
    (shell) => {
      const carried = carryEnvironment({ PATH: '/usr/bin:/bin', SETTING: 'value' });
      const result = spawnSync(
        shell === 'bash' ? '/bin/bash' : '/bin/sh',
        [
          ...(shell === 'bash' ? closingShellOptions : []),
          '-c',
          withEnvironmentDescriptor(carried, 'exec "$@"', shell),
          'test',
          '/bin/echo',
          'started',
        ],
        { env: { PATH: '/usr/bin:/bin' }, encoding: 'utf8' },
      );
      expect(result.status).toBe(125);
      expect(result.stdout).toBe('');
      expect(result.stderr).toContain("the command's environment did not arrive");
    },
  );
});
