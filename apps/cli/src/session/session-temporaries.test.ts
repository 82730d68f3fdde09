// A session save killed between writing its temporary and renaming it leaves
// `<file>.<pid>-<hex>.tmp`: the next start, listing or pruning removes it when its writer is dead
// (or the file is a day old), and never while its writer runs. The writers here are real CLI
// processes held in the middle of a save (a preload stops the rename), one of them SIGKILLed.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdir, readdir, symlink, utimes, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  appDir,
  assertBuilt,
  cleanEnv,
  cliPath,
  runCli,
  tempDir,
  writeScript,
} from '../testing/test-support.js';
import { liveWriterGraceMs, sweepSessionTemporaries } from './session-temporaries.js';
import { sessionsDir } from './sessions.js';

const holdRename = join(appDir, 'src/__fixtures__/hold-session-rename.mjs');
const cleanups: (() => Promise<void> | void)[] = [];
beforeAll(() => assertBuilt());
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup() {
  const dir = await tempDir('agent-cli-session-tmp-');
  cleanups.push(dir.dispose);
  const home = join(dir.path, 'home');
  const workspace = join(dir.path, 'ws');
  await mkdir(home);
  await mkdir(workspace);
  const script = await writeScript(dir.path, [{ text: 'done' }]);
  return { dir: dir.path, home, workspace, script, env: cleanEnv({ AGENT_HOME: home }) };
}

type Context = Awaited<ReturnType<typeof setup>>;

/** A CLI run held in the middle of saving its session: resolves with the process and its temporary. */
async function heldWriter(
  context: Context,
  extra: string[] = [],
): Promise<{ child: ChildProcess; temporary: string }> {
  const child = spawn(
    process.execPath,
    ['--import', holdRename, cliPath, '-p', 'hi', '--scripted', context.script, ...extra],
    { cwd: context.workspace, env: context.env, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  cleanups.push(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let stderr = '';
  const temporary = await new Promise<string>((resolve, reject) => {
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
      const held = /held-rename (\S+)\n/.exec(stderr);
      if (held?.[1] !== undefined) resolve(held[1]);
    });
    child.on('exit', (code) => reject(new Error(`the writer exited (${code}) first: ${stderr}`)));
  });
  return { child, temporary };
}

async function killed(child: ChildProcess): Promise<void> {
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}

/** A temporary as a writer with `pid` would leave it, `ageMs` old. */
async function planted(dir: string, target: string, pid: number, ageMs = 0): Promise<string> {
  const path = join(dir, `${target}.${pid}-0123abcd.tmp`);
  await writeFile(path, '{"messages": []');
  const when = new Date(Date.now() - ageMs);
  await utimes(path, when, when);
  return path;
}

describe('leftover temporaries of session saves', () => {
  it('a SIGKILLed writer’s goes at the next start; a live writer’s stays until it is dead', async () => {
    const context = await setup();
    const dead = await heldWriter(context);
    await killed(dead.child);
    expect(existsSync(dead.temporary)).toBe(true);
    expect(dirname(dead.temporary)).toBe(sessionsDir(context.workspace, context.home));
    const live = await heldWriter(context);
    // This test's own process: alive, not the CLI that starts next; young, then a day old.
    const folder = dirname(dead.temporary);
    const young = await planted(folder, 'young.json', process.pid);
    const old = await planted(folder, 'old.json', process.pid, liveWriterGraceMs + 60_000);

    const run = await runCli(['-p', 'hi', '--scripted', context.script], {
      cwd: context.workspace,
      env: context.env,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(dead.temporary)).toBe(false);
    expect(existsSync(live.temporary)).toBe(true);
    expect(existsSync(young)).toBe(true);
    expect(existsSync(old)).toBe(false);

    // Once the live writer is killed too, the next start removes its temporary.
    await killed(live.child);
    const again = await runCli(['-p', 'hi', '--scripted', context.script], {
      cwd: context.workspace,
      env: context.env,
    });
    expect(again.code, again.stderr).toBe(0);
    expect(existsSync(live.temporary)).toBe(false);
    expect((await readdir(folder)).filter((name) => name.endsWith('.tmp'))).toEqual([
      basename(young),
    ]);
  });

  it('pruning at start reaches other workspaces’ folders; --continue’s listing sweeps its own', async () => {
    const context = await setup();
    const other = join(context.dir, 'other');
    await mkdir(other);
    const dead = await heldWriter({ ...context, workspace: other });
    await killed(dead.child);
    const run = await runCli(['-p', 'hi', '--scripted', context.script], {
      cwd: context.workspace,
      env: context.env,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(dead.temporary)).toBe(false);

    const second = await heldWriter(context);
    await killed(second.child);
    const resumed = await runCli(['--continue', '-p', 'again', '--scripted', context.script], {
      cwd: context.workspace,
      env: context.env,
    });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(existsSync(second.temporary)).toBe(false);
  });

  it('a --save file’s own temporaries go; other files’ in that folder are not judged', async () => {
    const context = await setup();
    const mine = join(context.dir, 'mine.json');
    const dead = await heldWriter(context, ['--save', mine]);
    await killed(dead.child);
    expect(dead.temporary.startsWith(`${mine}.`)).toBe(true);
    const others = await planted(context.dir, 'notes.json', dead.child.pid ?? 0);
    const run = await runCli(['-p', 'hi', '--scripted', context.script, '--save', mine], {
      cwd: context.workspace,
      env: context.env,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(dead.temporary)).toBe(false);
    expect(existsSync(others)).toBe(true);
    expect(existsSync(mine)).toBe(true);
  });
});

describe('sweepSessionTemporaries', () => {
  it('leaves what is not a dead writer’s regular file', async () => {
    const context = await setup();
    const folder = join(context.dir, 'sessions');
    await mkdir(folder);
    // A pid that is surely dead: a process that ran and was reaped.
    const child = spawn(process.execPath, ['-e', '']);
    await once(child, 'exit');
    const deadPid = child.pid ?? 0;
    const removable = await planted(folder, 'a.json', deadPid);
    const ownPid = await planted(folder, 'b.json', process.pid, 10 * liveWriterGraceMs);
    const names = [
      `c.json.${deadPid}-0123abcd.tmp.bak`,
      `c.json.${deadPid}-0123ABCD.tmp`,
      `c.json.${deadPid}-0123abc.tmp`,
      `c.json.x${deadPid}-0123abcd.tmp`,
      `c.json.0-0123abcd.tmp`,
      'c.json.tmp',
    ];
    for (const name of names) await writeFile(join(folder, name), '');
    // A link named like a dead writer's temporary: not a file of ours to remove.
    const target = join(context.dir, 'target');
    await writeFile(target, 'kept');
    await symlink(target, join(folder, `d.json.${deadPid}-0123abcd.tmp`));
    await mkdir(join(folder, `e.json.${deadPid}-0123abcd.tmp`));

    expect(await sweepSessionTemporaries(folder, { only: 'x.json' })).toBe(0);
    expect(await sweepSessionTemporaries(folder)).toBe(1);
    expect(existsSync(removable)).toBe(false);
    expect(existsSync(ownPid)).toBe(true);
    for (const name of names) expect(existsSync(join(folder, name))).toBe(true);
    expect(existsSync(join(folder, `d.json.${deadPid}-0123abcd.tmp`))).toBe(true);
    expect(existsSync(target)).toBe(true);
    expect(existsSync(join(folder, `e.json.${deadPid}-0123abcd.tmp`))).toBe(true);
    expect(await sweepSessionTemporaries(join(context.dir, 'missing'))).toBe(0);
  });
});
