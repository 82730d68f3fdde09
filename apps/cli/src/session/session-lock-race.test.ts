// Two CLIs that find the same stale lock at once (a killed CLI's, then `agent --continue` in two
// terminals): exactly one may take it over. Each used to remove the lock it had judged stale, and
// the later one removed the lock the earlier had just taken — both went on with the session,
// sharing its journal. The processes the locks name are real (`sleep`), the interleaving is held
// in place with `onStale`.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { lockSession, sessionLockPath } from './session-lock.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function home(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'agent-lock-race-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  await mkdir(join(dir, 'journals'), { mode: 0o700 });
  return dir;
}

/** A process that runs until the test ends. */
async function live(): Promise<number> {
  const child: ChildProcess = spawn('sleep', ['600'], { stdio: 'ignore' });
  await once(child, 'spawn');
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
  });
  return child.pid as number;
}

/** The pid of a process that has exited. */
async function dead(): Promise<number> {
  const child = spawn('true', { stdio: 'ignore' });
  await once(child, 'exit');
  return child.pid as number;
}

describe('a stale session lock found by two processes at once', () => {
  it('one takes it over; the other, which judged it stale first, finds it busy', async () => {
    const agentHome = await home();
    const path = sessionLockPath('s1', agentHome);
    const [first, second, killed] = [await live(), await live(), await dead()];
    await writeFile(path, `${JSON.stringify({ pid: killed })}\n`);

    let judged: () => void = () => {};
    const firstJudged = new Promise<void>((resolve) => {
      judged = resolve;
    });
    let goOn: () => void = () => {};
    const firstGoesOn = new Promise<void>((resolve) => {
      goOn = resolve;
    });
    const firstLock = lockSession('s1', {
      home: agentHome,
      pid: first,
      onStale: async () => {
        judged();
        await firstGoesOn;
      },
    });
    await firstJudged;
    // The second takes the stale lock over while the first is between judging and removing it.
    const secondLock = await lockSession('s1', { home: agentHome, pid: second });
    expect(secondLock.kind).toBe('held');
    goOn();
    expect(await firstLock).toEqual({ kind: 'busy', pid: second });
    expect(JSON.parse(await readFile(path, 'utf8'))).toMatchObject({ pid: second });
  });

  it('a take-over cut off by a kill (its breaker left behind) does not keep the session locked', async () => {
    const agentHome = await home();
    const path = sessionLockPath('s1', agentHome);
    const [me, killed] = [await live(), await dead()];
    await writeFile(path, `${JSON.stringify({ pid: killed })}\n`);
    await writeFile(`${path}.break`, `${JSON.stringify({ pid: killed })}\n`);
    const lock = await lockSession('s1', { home: agentHome, pid: me });
    expect(lock.kind).toBe('held');
    expect(JSON.parse(await readFile(path, 'utf8'))).toMatchObject({ pid: me });
  });
});
