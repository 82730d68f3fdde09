import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { LeftoverProcesses, processStartTime, signalIfSame } from './leftover-processes.js';

const running = (pid: number) => processStartTime(pid) !== undefined;

describe('leftover processes', () => {
  it('kills a remembered process still running as itself', async () => {
    const child = spawn('sleep', ['30']);
    const leftovers = new LeftoverProcesses();
    leftovers.add(child.pid as number);
    const exit = once(child, 'exit');
    leftovers.killAll();
    expect(await exit).toEqual([null, 'SIGKILL']);
  });

  it('leaves alone a process with the number but another start time (a reused pid)', async () => {
    const child = spawn('sleep', ['30']);
    const pid = child.pid as number;
    const start = processStartTime(pid) as number;
    expect(start).toBeGreaterThan(0);
    // No test can make the kernel hand a number out again: a start time one tick earlier is what
    // the record of an earlier process with this number holds.
    expect(signalIfSame(pid, start - 1, 'SIGKILL')).toBe(false);
    expect(running(pid)).toBe(true);
    const exit = once(child, 'exit');
    expect(signalIfSame(pid, start, 'SIGKILL')).toBe(true);
    expect(await exit).toEqual([null, 'SIGKILL']);
  });

  it('a process already gone (or a zombie) is not remembered; a bad pid is no process', async () => {
    const child = spawn('true');
    await once(child, 'exit');
    expect(processStartTime(child.pid as number)).toBeUndefined();
    for (const pid of [0, -1, Number.NaN, 1.5]) expect(processStartTime(pid)).toBeUndefined();
    expect(processStartTime(process.pid)).toBeGreaterThan(0);
    const leftovers = new LeftoverProcesses();
    leftovers.add(child.pid as number, -1);
    leftovers.killAll();
  });
});
