import * as fs from 'node:fs';
import * as path from 'node:path';
import { ToolError } from '@agent/core';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BackgroundTasks } from './background-tasks.js';
import { createBashTool } from './bash.js';
import { makeTempDir, resultText, testContext } from './test-helpers.js';

// The sandbox's cgroup limits under the real bash tool: a command killed for memory came back as
// a bare "Exit code: 137"; now the result says the sandbox did it and why. Where no cgroup can be
// made (an ordinary user without a delegated one), the description says memory is not bounded,
// and the hogs are not run: never unbounded on a shared machine.

const maxMemoryBytes = 64 * 1024 * 1024;
const maxProcesses = 64;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

function setup(reuseSandbox: boolean) {
  const ws = makeTempDir('limits-ws-');
  const background = new BackgroundTasks();
  cleanups.push(async () => {
    await background.close();
    fs.rmSync(ws, { recursive: true, force: true });
  });
  const bash = createBashTool({
    cwd: ws,
    spillDir: path.join(ws, '.spill'),
    backgroundTasks: background,
    reuseSandbox,
    sandbox: { maxMemoryBytes, maxProcesses, onWarning: () => undefined },
  });
  return { bash, background };
}

async function run(bash: ReturnType<typeof setup>['bash'], command: string, signal?: AbortSignal) {
  const result = await bash.execute(
    { command },
    testContext(signal === undefined ? {} : { signal }),
  );
  return { text: resultText(result), details: result.details, isError: result.isError === true };
}

/** The cgroups this process made that still exist. */
function cgroupsLeft(): string[] {
  const roots = [
    '/sys/fs/cgroup/pids',
    '/sys/fs/cgroup/memory',
    '/sys/fs/cgroup/unified',
    '/sys/fs/cgroup',
  ];
  const found: string[] = [];
  const walk = (directory: string, depth: number) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(directory, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (!entry.isDirectory()) continue;
      const full = path.join(directory, entry.name);
      if (entry.name.startsWith(`agent-sandbox-${process.pid}-`) && !entry.name.includes('-self-'))
        found.push(full);
      else if (depth < 3) walk(full, depth + 1);
    }
  };
  for (const root of roots) walk(root, 0);
  return found;
}

describe.each([
  { label: 'a sandbox per command', reuseSandbox: false },
  { label: 'the session sandbox', reuseSandbox: true },
])('bash under the sandbox limits, $label', ({ reuseSandbox }) => {
  beforeEach(skipWithout('bwrap'));

  it('a command filling /tmp past maxMemoryBytes is killed, and the result says why; the next one runs', async () => {
    const { bash } = setup(reuseSandbox);
    if (!bash.description.includes('64 MiB of memory')) {
      expect(bash.description).toMatch(/memory NOT bounded/);
      return;
    }
    const filled = await run(bash, 'head -c 1G /dev/zero > /tmp/x; echo "exit $?"');
    expect(filled.isError).toBe(true);
    expect(filled.text).not.toContain('exit 0');
    expect(filled.text).toContain(
      'Killed by the sandbox: its commands used more than 64 MiB of memory together (maxMemoryBytes)',
    );
    expect(filled.details?.sandboxBlocked).toMatch(/^Killed by the sandbox/);
    // The session's sandbox is replaced for the next command, and the result says so.
    if (reuseSandbox) expect(filled.text).toMatch(/The next command starts (in )?a new sandbox/);
    // A new sandbox (or the session's, replaced after the kill): its /tmp is empty again.
    const next = await run(bash, 'test -e /tmp/x && echo still-there; echo alive');
    expect(next.isError, next.text).toBe(false);
    expect(next.text).toMatch(/^alive\n/);
    expect(next.text).not.toContain('Killed by the sandbox');
  });

  it('a memory hog is killed with the explanation; output alone ("Killed") would not say it', async () => {
    const { bash } = setup(reuseSandbox);
    if (!bash.description.includes('64 MiB of memory')) return;
    const hog = await run(bash, `perl -e '$x = "a" x (1 << 30); print "allocated\\n"'`);
    expect(hog.text).not.toContain('allocated');
    expect(hog.text).toMatch(/Killed by the sandbox: .*64 MiB/);
  });

  it('a fork bomb is refused at maxProcesses (root too), explained once', async () => {
    const { bash } = setup(reuseSandbox);
    // Run only when bounded: as root that takes a pids cgroup.
    if (!bash.description.includes(`at most ${maxProcesses} processes`)) {
      expect(bash.description).toMatch(/processes NOT bounded|processes and memory NOT bounded/);
      return;
    }
    const bomb = await run(
      bash,
      'mkfifo /tmp/wait; exec 9<>/tmp/wait; b() { b | b & }; b; read -t 2 -u 9; echo over',
    );
    const note = `Blocked by the sandbox: commands may run at most ${maxProcesses} processes and threads at once (all of them together).`;
    expect(bomb.text).toContain(note);
    expect(bomb.text.split(note).length).toBe(2);
    const next = await run(bash, 'echo alive');
    expect(next.text).toMatch(/^alive\n/);
  });

  it('an aborted command leaves no process and no cgroup behind', async () => {
    const { bash, background } = setup(reuseSandbox);
    const tag = `4${process.pid % 1000}.${Date.now() % 1000}`;
    const controller = new AbortController();
    // Aborted once it runs: its first output ("started") says so.
    let onStarted: () => void = () => {};
    const started = new Promise<void>((resolve) => {
      onStarted = resolve;
    });
    const context = {
      ...testContext({ signal: controller.signal }),
      onUpdate: () => onStarted(),
    };
    const running = bash.execute(
      { command: `setsid sh -c 'exec sleep ${tag}' & echo started; exec sleep ${tag}` },
      context,
    );
    await started;
    controller.abort();
    await expect(running).rejects.toSatisfy((error) => ToolError.isInstance(error));
    expect(processesTagged(tag)).toEqual([]);
    // The session's sandbox keeps its cgroup until the session ends.
    await background.close();
    expect(cgroupsLeft()).toEqual([]);
  });
});

function processesTagged(tag: string): string[] {
  return fs
    .readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
        return (
          !/\) Z /.test(stat) && fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(tag)
        );
      } catch {
        return false;
      }
    });
}
