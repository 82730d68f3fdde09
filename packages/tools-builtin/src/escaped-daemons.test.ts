import * as fs from 'node:fs';
import { LeftoverProcesses } from '@agent/tooling-system-tools';
import { afterEach, describe, expect, it } from 'vitest';
import { BackgroundTasks } from './background-tasks.js';
import { createBashTool } from './bash.js';
import { isAlive, makeTempDir, resultText, testContext } from './test-helpers.js';

// A command that leaves a daemon behind: `setsid`, `nohup setsid`, a double fork. In the
// sandbox it dies with the call (its pid namespace); outside it the daemon left the process
// group, so it was found by its environment marker only on timeout or abort — after an ordinary
// end it ran on until the CLI exited (measured with the CLI, `--sandbox off`). Now every ended
// call's marked escapees are killed before the call returns, in one pass over /proc for all the
// calls that ended together. Real processes; sandbox off.

const sessions: BackgroundTasks[] = [];
// Killed only while still the processes they were: their numbers may be another's by now.
const leftovers = new LeftoverProcesses();
afterEach(async () => {
  for (const session of sessions.splice(0)) await session.close();
  leftovers.killAll();
});

function bash() {
  const dir = makeTempDir('escaped-daemons-');
  const backgroundTasks = new BackgroundTasks();
  sessions.push(backgroundTasks);
  const tool = createBashTool({
    cwd: dir,
    sandbox: 'off',
    backgroundTasks,
    spillDir: `${dir}/spill`,
  });
  return Object.assign(tool, { dir, backgroundTasks });
}

/** The pids a command printed, one per line after `pid `. */
function pidsOf(text: string): number[] {
  return [...text.matchAll(/^pid (\d+)$/gm)].map((match) => Number(match[1]));
}

const daemons = [
  ['setsid', 'setsid sleep 600 > /dev/null 2>&1 & echo "pid $!"'],
  ['nohup setsid', 'nohup setsid sleep 600 > /dev/null 2>&1 & echo "pid $!"'],
  [
    'a double fork into a new session',
    `setsid sh -c 'sleep 600 > /dev/null 2>&1 & echo "pid $!"' > pid.txt; sleep 0.2; cat pid.txt`,
  ],
  ['a new process group (set -m)', 'set -m; sleep 600 > /dev/null 2>&1 & echo "pid $!"'],
] as const;

describe('a daemon left by an unsandboxed command', () => {
  it.each(daemons)('%s: gone when the call returns', async (_name, command) => {
    const tool = bash();
    const result = await tool.execute({ command }, testContext());
    const pids = pidsOf(resultText(result));
    leftovers.add(...pids);
    expect(pids, resultText(result)).toHaveLength(1);
    for (const pid of pids) expect(isAlive(pid), `pid ${pid}`).toBe(false);
  });

  it('many calls ending together: each one’s daemon is gone when it returns', async () => {
    const tool = bash();
    const results = await Promise.all(
      Array.from({ length: 12 }, () => tool.execute({ command: daemons[0][1] }, testContext())),
    );
    const pids = results.flatMap((result) => pidsOf(resultText(result)));
    leftovers.add(...pids);
    expect(pids).toHaveLength(12);
    for (const pid of pids) expect(isAlive(pid), `pid ${pid}`).toBe(false);
  });

  it("a background command's daemon is gone once the command ends", async () => {
    const tool = bash();
    const started = await tool.execute(
      { command: `${daemons[0][1]} > bg-pid.txt`, run_in_background: true },
      testContext(),
    );
    expect(started.isError, resultText(started)).not.toBe(true);
    const [task] = tool.backgroundTasks.list();
    await task?.handle.done;
    const pids = pidsOf(fs.readFileSync(`${tool.dir}/bg-pid.txt`, 'utf8'));
    leftovers.add(...pids);
    expect(pids).toHaveLength(1);
    for (const pid of pids) expect(isAlive(pid), `pid ${pid}`).toBe(false);
  });
});

// The same daemons with their environment cleared (`env -i`): neither the group kill nor the
// marker reaches them, and they outlived the call and the CLI (measured). The orphan reaper
// (orphan-reaper.ts, perl as the command's subreaper) ends them with the call.
const clearedDaemons = [
  ['env -i setsid', 'env -i setsid sleep 600 > /dev/null 2>&1 & echo "pid $!"'],
  ['env -i setsid nohup', 'env -i setsid nohup sleep 600 > /dev/null 2>&1 & echo "pid $!"'],
  [
    'env -i, a double fork into a new session',
    `env -i setsid sh -c 'sleep 600 > /dev/null 2>&1 & echo "pid $!"' > pid.txt; sleep 0.2; cat pid.txt`,
  ],
  [
    'env -i, a new process group (setpgid)',
    `env -i perl -e 'setpgrp(0, 0); exec "sleep", "600"' > /dev/null 2>&1 & echo "pid $!"`,
  ],
  [
    'env -i setsid, deaf to SIGTERM and SIGHUP',
    `env -i setsid sh -c 'trap "" TERM HUP; exec sleep 600' > /dev/null 2>&1 & echo "pid $!"`,
  ],
  [
    'env -i setsid, from a child still in the group',
    `(env -i setsid sleep 600 > /dev/null 2>&1 & echo "pid $!" > pid.txt; sleep 600) & until [ -s pid.txt ]; do sleep 0.05; done; cat pid.txt`,
  ],
] as const;

describe('a daemon that cleared its environment, left by an unsandboxed command', () => {
  it.each(clearedDaemons)('%s: gone when the call returns', async (_name, command) => {
    const tool = bash();
    const result = await tool.execute({ command }, testContext());
    const pids = pidsOf(resultText(result));
    leftovers.add(...pids);
    expect(pids, resultText(result)).toHaveLength(1);
    for (const pid of pids) expect(isAlive(pid), `pid ${pid}`).toBe(false);
  });

  it.each(['timeout', 'abort'] as const)('gone when the call ends by %s', async (how) => {
    const tool = bash();
    const abort = new AbortController();
    const command = `env -i setsid sleep 600 > /dev/null 2>&1 & echo "pid $!" > pid.txt; sleep 600`;
    const call = tool.execute(
      // Long enough for the daemon to start on a loaded machine.
      { command, ...(how === 'timeout' ? { timeout: 5_000 } : {}) },
      testContext({ signal: abort.signal }),
    );
    if (how === 'abort') {
      while (!fs.existsSync(`${tool.dir}/pid.txt`) || fs.statSync(`${tool.dir}/pid.txt`).size === 0)
        await new Promise((resolve) => setTimeout(resolve, 20));
      abort.abort();
    }
    await call.catch(() => undefined);
    const pids = pidsOf(fs.readFileSync(`${tool.dir}/pid.txt`, 'utf8'));
    leftovers.add(...pids);
    expect(pids).toHaveLength(1);
    for (const pid of pids) expect(isAlive(pid), `pid ${pid}`).toBe(false);
  });

  it('the command’s exit code, signal and output are its own', async () => {
    const tool = bash();
    const exited = resultText(
      await tool.execute({ command: 'echo out; echo err >&2; exit 3' }, testContext()),
    );
    expect(exited).toMatch(/out/);
    expect(exited).toMatch(/err/);
    expect(exited).toMatch(/Exit code: 3/);
    const killed = resultText(await tool.execute({ command: 'kill -9 $$' }, testContext()));
    expect(killed).toMatch(/137|SIGKILL/);
  });
});
