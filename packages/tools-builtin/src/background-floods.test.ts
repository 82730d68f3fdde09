import * as fs from 'node:fs';
import * as path from 'node:path';
import { type AnyAgentTool, executeTool, type ToolResultMessage } from '@agent/core';
import { afterEach, describe, expect, it } from 'vitest';
import { BackgroundTasks, defaultMaxBackgroundTasks } from './background-tasks.js';
import { createBashTool } from './bash.js';
import { createBashOutputTool } from './bash-output-tool.js';
import { defaultMaxSessionSpillBytes, SpillDirectory } from './spill-dir.js';
import { makeTempDir } from './test-helpers.js';

// A model (or a prompt injected into one) can start background commands without end, each
// writing for ever: every stream's spill file stopped at 1 GiB, but nothing bounded their number
// nor their total — 100 `yes &` were 200 GiB in the temporary directory (RAM where it is a
// tmpfs). A session now runs at most `maxRunning` background commands at once (a batch's calls
// counted as they start) and its spill files share one budget. Real processes, in the sandbox
// where there is one (mode auto) and without.

const sessions: BackgroundTasks[] = [];
afterEach(async () => {
  for (const session of sessions.splice(0)) await session.close();
});

const text = (message: ToolResultMessage) =>
  message.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');

function session(options: {
  sandbox: 'auto' | 'off';
  maxRunning?: number;
  spillBytes?: number;
  maxSpillBytes?: number;
}) {
  const dir = makeTempDir('background-floods-');
  const spillDirectory = new SpillDirectory({
    path: path.join(dir, 'spill'),
    ...(options.spillBytes === undefined ? {} : { maxBytes: options.spillBytes }),
  });
  const tasks = new BackgroundTasks({
    spillDirectory,
    ...(options.maxRunning === undefined ? {} : { maxRunning: options.maxRunning }),
  });
  sessions.push(tasks);
  const ws = path.join(dir, 'ws');
  fs.mkdirSync(ws);
  const bash: AnyAgentTool = createBashTool({
    cwd: ws,
    backgroundTasks: tasks,
    sandbox: options.sandbox,
    ...(options.maxSpillBytes === undefined ? {} : { maxSpillBytes: options.maxSpillBytes }),
    headBytes: 1_000,
    tailBytes: 1_000,
  });
  const output: AnyAgentTool = createBashOutputTool({ backgroundTasks: tasks });
  return {
    tasks,
    spill: spillDirectory.path,
    bash: (args: Record<string, unknown>) => executeTool(bash, args),
    output: (args: Record<string, unknown>) => executeTool(output, args),
  };
}

/** Bytes of every file in `directory` (none when it was never made). */
function bytesIn(directory: string): number {
  if (!fs.existsSync(directory)) return 0;
  return fs
    .readdirSync(directory)
    .reduce((sum, name) => sum + fs.statSync(path.join(directory, name)).size, 0);
}

describe.each(['auto', 'off'] as const)('background commands, sandbox %s', (sandbox) => {
  it('at most maxRunning run at once, a batch counted as it starts; one ended makes room', async () => {
    const { bash, output, tasks } = session({ sandbox, maxRunning: 4 });
    const started = await Promise.all(
      Array.from({ length: 7 }, () => bash({ command: 'sleep 600', run_in_background: true })),
    );
    const refused = started.filter((result) => result.isError === true);
    expect(started.filter((result) => result.isError !== true)).toHaveLength(4);
    expect(refused).toHaveLength(3);
    for (const result of refused)
      expect(text(result)).toMatch(
        /background commands are running, the most this session allows \(4\): end one first with bash_output/,
      );
    expect(tasks.list().filter((task) => task.outcome === undefined)).toHaveLength(4);
    const first = tasks.list()[0];
    expect((await output({ task_id: first?.id, kill: true })).isError).not.toBe(true);
    expect((await bash({ command: 'sleep 600', run_in_background: true })).isError).not.toBe(true);
    expect((await bash({ command: 'sleep 600', run_in_background: true })).isError).toBe(true);
    // A command in the foreground is not counted.
    expect(text(await bash({ command: 'echo still' }))).toContain('still');
  });

  it("the session's spill files share one budget: many writers stop at it, and are told", async () => {
    const mebibyte = 1024 * 1024;
    const { bash, output, tasks, spill } = session({
      sandbox,
      spillBytes: 3 * mebibyte,
      maxSpillBytes: mebibyte,
    });
    const writers = 6;
    for (let index = 0; index < writers; index++) {
      const result = await bash({ command: 'yes | head -c 2000000', run_in_background: true });
      expect(result.isError, text(result)).not.toBe(true);
    }
    await Promise.all(tasks.list().map((task) => task.handle.done));
    const foreground = await bash({ command: 'yes | head -c 2000000' });
    expect(bytesIn(spill)).toBeLessThanOrEqual(3 * mebibyte);
    const notes = await Promise.all(tasks.list().map((task) => output({ task_id: task.id })));
    const told = [...notes, foreground].map(text).join('\n');
    expect(told).toMatch(/this session's spill files reached their limit of 3,145,728 bytes/);
    // Every byte is still counted, and the tail kept.
    expect(text(foreground)).toMatch(/of 2,000,000/);
  });
});

it('defaults: 32 background commands, 4 GiB of spill files a session', () => {
  expect(defaultMaxBackgroundTasks).toBe(32);
  expect(defaultMaxSessionSpillBytes).toBe(4 * 1024 ** 3);
});
