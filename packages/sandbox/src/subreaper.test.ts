// The subreaper on its own (the bash tool's escaped-daemons.test.ts, tools-mcp's process-exit.test.ts
// and the CLI's orphaned-daemons.test.ts drive it through their callers): a daemon that left the
// command's group and cleared its environment ends with the command, and the command's exit is
// reported as its own.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import * as fs from 'node:fs';
import { LeftoverProcesses } from '@agent/tooling-system-tools';
import { afterEach, describe, expect, it } from 'vitest';
import { killGroupButLeader, prctlSyscallNumber, subreaperSource } from './subreaper.js';

// Killed only while still the processes they were: their numbers may be another's by now.
const leftovers = new LeftoverProcesses();
afterEach(() => {
  leftovers.killAll();
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A zombie is dead: killed, and waiting for whoever inherited it to reap it (under a CI's
  // load that took a while, and `kill -0` still found it: run85).
  try {
    return fs.readFileSync(`/proc/${pid}/stat`, 'latin1').split(') ')[1]?.[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Whether `pid` is gone within a few seconds (a SIGKILL is delivered asynchronously). */
async function ended(pid: number): Promise<boolean> {
  const deadline = Date.now() + 5_000;
  while (isAlive(pid)) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
}

/** Runs `sh -c script` under the subreaper; its output, exit code and signal. */
async function underSubreaper(
  script: string,
): Promise<{ output: string; code: number | null; signal: NodeJS.Signals | null }> {
  const prctl = prctlSyscallNumber();
  expect(prctl, 'the subreaper runs on Linux x86-64 and arm64').toBeDefined();
  const child = spawn(
    '/usr/bin/perl',
    ['-e', subreaperSource, '--', String(prctl), '/bin/sh', '-c', script],
    { stdio: ['ignore', 'pipe', 'inherit'], detached: true },
  );
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  const [code, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
  return { output, code, signal };
}

const pidsOf = (text: string) =>
  [...text.matchAll(/pid ([0-9]+)/g)].map((match) => Number(match[1]));

const daemons = [
  ['env -i setsid', 'env -i setsid sleep 600 > /dev/null 2>&1 & echo "pid $!"'],
  [
    'a double fork into a new session',
    `env -i setsid sh -c 'sleep 600 > /dev/null 2>&1 & echo "pid $!"'; sleep 0.2`,
  ],
  [
    'a new process group (setpgid), from the background',
    `env -i perl -e 'setpgrp(0, 0); exec "sleep", "600"' > /dev/null 2>&1 & echo "pid $!"`,
  ],
  [
    'deaf to SIGTERM and SIGHUP',
    `env -i setsid sh -c 'trap "" TERM HUP; exec sleep 600' > /dev/null 2>&1 & echo "pid $!"`,
  ],
] as const;

describe('the subreaper', () => {
  it.each(daemons)('%s: the daemon is gone once the subreaper exits', async (_name, script) => {
    const { output, code } = await underSubreaper(script);
    const pids = pidsOf(output);
    leftovers.add(...pids);
    expect(pids, output).toHaveLength(1);
    expect(code).toBe(0);
    for (const pid of pids) expect(await ended(pid), `pid ${pid}`).toBe(true);
  });

  it('exits as the command did: its code, or its signal', async () => {
    expect((await underSubreaper('echo out; exit 3')).code).toBe(3);
    expect((await underSubreaper('echo out; exit 3')).output).toBe('out\n');
    expect((await underSubreaper('kill -9 $$')).signal).toBe('SIGKILL');
  });

  it('says so when the command cannot run (127)', async () => {
    const prctl = prctlSyscallNumber();
    const child = spawn(
      '/usr/bin/perl',
      ['-e', subreaperSource, '--', String(prctl), '/no/such/program'],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let errors = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      errors += chunk;
    });
    const [code] = await once(child, 'exit');
    expect(code).toBe(127);
    expect(errors).toMatch(/cannot run \/no\/such\/program/);
  });

  it('killGroupButLeader leaves the subreaper, which then ends what left the group', async () => {
    const prctl = prctlSyscallNumber();
    const child = spawn(
      '/usr/bin/perl',
      [
        '-e',
        subreaperSource,
        '--',
        String(prctl),
        '/bin/sh',
        '-c',
        'env -i setsid sleep 600 > /dev/null 2>&1 & echo "pid $!"; exec sleep 600',
      ],
      { stdio: ['ignore', 'pipe', 'inherit'], detached: true },
    );
    const exited = once(child, 'exit');
    let output = '';
    child.stdout.setEncoding('utf8');
    for await (const chunk of child.stdout) {
      output += chunk;
      if (output.includes('\n')) break;
    }
    const pids = pidsOf(output);
    leftovers.add(...pids);
    expect(pids).toHaveLength(1);
    expect(child.pid).toBeDefined();
    expect(killGroupButLeader(child.pid ?? 0)).toBe(true);
    const [, signal] = await exited;
    expect(signal).toBe('SIGKILL');
    for (const pid of pids) expect(await ended(pid), `pid ${pid}`).toBe(true);
  });
});
