import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { anyUserDirectory, LeftoverProcesses, nodeForAnyUser } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  assertBuilt,
  cleanEnv,
  cliPath,
  cliPathForAnyUser,
  writeScript,
} from '../testing/test-support.js';

// With the sandbox off, a command's daemon that left its process group and cleared its
// environment (`env -i setsid …`, a double fork, setpgid) outlived the call and the CLI: neither
// the group kill nor the environment marker finds it (measured as root and as nobody). The bash
// tool now starts unsandboxed commands under an orphan reaper (perl as their subreaper).

beforeAll(assertBuilt);
const cleanups: (() => void)[] = [];
// Killed only while still the processes they were: their numbers may be another's by now.
const leftovers = new LeftoverProcesses();
afterEach(() => {
  leftovers.killAll();
  for (const cleanup of cleanups.splice(0)) cleanup();
});

const isRoot = process.getuid?.() === 0;
const users = isRoot
  ? [
      { label: 'root', uid: undefined },
      { label: 'nobody', uid: 65534 },
    ]
  : [{ label: `uid ${process.getuid?.()}`, uid: undefined }];

/** Starts five daemons that clear their environment and leave the group; their pids in pids.txt. */
const startDaemons = [
  'env -i setsid sleep 600 > /dev/null 2>&1 & echo $! >> pids.txt',
  'env -i setsid nohup sleep 600 > /dev/null 2>&1 & echo $! >> pids.txt',
  `env -i setsid sh -c 'sleep 600 > /dev/null 2>&1 & echo $! >> pids.txt'`,
  `env -i perl -e 'setpgrp(0, 0); exec "sleep", "600"' > /dev/null 2>&1 & echo $! >> pids.txt`,
  `env -i setsid sh -c 'trap "" TERM HUP; exec sleep 600' > /dev/null 2>&1 & echo $! >> pids.txt`,
  'sleep 0.2',
  'echo started > started.txt',
].join('\n');

/** Writes the pids of pids.txt still running to alive.txt. */
const checkDaemons =
  'for pid in $(cat pids.txt); do kill -0 $pid 2>/dev/null && echo $pid; done > alive.txt; echo checked';

interface Place {
  workspace: string;
  home: string;
  node: string;
}

function place(): Place {
  const dir = anyUserDirectory('agent-cli-orphans-');
  cleanups.push(() => dir.dispose());
  const workspace = join(dir.path, 'ws');
  const home = join(dir.path, 'home');
  fs.mkdirSync(workspace, { recursive: true });
  fs.mkdirSync(home, { recursive: true });
  fs.writeFileSync(join(workspace, 'start.sh'), `${startDaemons}\n`);
  fs.writeFileSync(join(workspace, 'check.sh'), `${checkDaemons}\n`);
  const node = join(dir.path, 'node');
  nodeForAnyUser(node);
  return { workspace, home, node };
}

function startCli(uid: number | undefined, at: Place, script: string) {
  if (uid !== undefined) spawnSync('chown', ['-R', `${uid}:${uid}`, join(at.workspace, '..')]);
  const command = [
    at.node,
    uid === undefined ? cliPath : cliPathForAnyUser(),
    '-p',
    'go',
    '--scripted',
    script,
    '--cwd',
    at.workspace,
    '--sandbox',
    'off',
    '--mode',
    'full-access',
  ];
  const child = spawn(
    uid === undefined ? at.node : 'setpriv',
    uid === undefined
      ? command.slice(1)
      : [`--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', ...command],
    {
      env: cleanEnv({ HOME: at.home, AGENT_HOME: join(at.home, '.agent') }),
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  return { child, output: () => output };
}

function pidsIn(file: string): number[] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => /^[0-9]+$/.test(line))
    .map(Number);
}

function running(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/** Waits (bounded) until none of `pids` runs; the ones still running then. */
async function stillRunningAfterWait(pids: readonly number[]): Promise<number[]> {
  const deadline = Date.now() + 10_000;
  while (pids.some(running) && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 50));
  return pids.filter(running);
}

describe.each(users)('daemons an unsandboxed command leaves, as $label', ({ uid }) => {
  it('are gone when the call ends: the next call finds none, nor does anyone after the exit', async () => {
    const at = place();
    const script = await writeScript(join(at.workspace, '..'), [
      { toolCalls: [{ name: 'bash', arguments: { command: 'sh start.sh' } }] },
      { toolCalls: [{ name: 'bash', arguments: { command: 'sh check.sh' } }] },
      { text: 'done' },
    ]);
    const cli = startCli(uid, at, script);
    const [code] = (await once(cli.child, 'close')) as [number | null];
    const pids = pidsIn(join(at.workspace, 'pids.txt'));
    leftovers.add(...pids);
    expect(code, cli.output()).toBe(0);
    expect(pids).toHaveLength(5);
    expect(fs.readFileSync(join(at.workspace, 'alive.txt'), 'utf8')).toBe('');
    expect(pids.filter(running)).toEqual([]);
  });

  it('are gone when the CLI is killed (SIGKILL) during the call', async () => {
    const at = place();
    const script = await writeScript(join(at.workspace, '..'), [
      { toolCalls: [{ name: 'bash', arguments: { command: 'sh start.sh; sleep 600' } }] },
      { text: 'done' },
    ]);
    const cli = startCli(uid, at, script);
    const started = join(at.workspace, 'started.txt');
    const exited = once(cli.child, 'close');
    const deadline = Date.now() + 60_000;
    while (!fs.existsSync(started) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    const pids = pidsIn(join(at.workspace, 'pids.txt'));
    leftovers.add(...pids);
    expect(pids, cli.output()).toHaveLength(5);
    // setpriv execs the CLI: the child's pid is the CLI's.
    cli.child.kill('SIGKILL');
    await exited;
    expect(await stillRunningAfterWait(pids)).toEqual([]);
  });
});
