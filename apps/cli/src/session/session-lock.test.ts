// Two real CLIs going on with the same session at once (`--continue` in two terminals): the
// second goes on as a copy under a new id, so neither reports the other's running call as
// interrupted, empties its journal, or erases its turns from the session file.
import { spawn } from 'node:child_process';
import { existsSync, watch } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  assertBuilt,
  cleanEnv,
  cliPath,
  runCli,
  tempDir,
  writeScript,
} from '../testing/test-support.js';
import { sessionLockPath } from './session-lock.js';

const cleanups: (() => Promise<void>)[] = [];
beforeAll(() => assertBuilt());
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

interface SavedFile {
  sessionId: string;
  messages: { role: string; content: unknown; isError?: boolean; errorKind?: string }[];
}

async function setup() {
  const dir = await tempDir('agent-cli-lock-');
  cleanups.push(dir.dispose);
  const home = join(dir.path, 'home');
  const workspace = join(dir.path, 'ws');
  await mkdir(workspace, { recursive: true });
  await mkdir(home);
  const env = cleanEnv({ AGENT_HOME: home });
  const start = await writeScript(dir.path, [{ text: 'first answer' }], 'start.json');
  const first = await runCli(
    ['-p', 'start', '--scripted', start, '--cwd', workspace, '--output-format', 'json'],
    { env },
  );
  expect(first.code, first.stderr).toBe(0);
  const { sessionId } = JSON.parse(first.stdout) as { sessionId: string };
  return { dir: dir.path, home, workspace, env, sessionId };
}

/** Every session file of the home, parsed, by session id. */
async function sessionFiles(home: string): Promise<Map<string, SavedFile>> {
  const files = new Map<string, SavedFile>();
  for (const folder of await readdir(join(home, 'sessions')))
    for (const name of await readdir(join(home, 'sessions', folder))) {
      if (!name.endsWith('.json')) continue;
      const saved = JSON.parse(
        await readFile(join(home, 'sessions', folder, name), 'utf8'),
      ) as SavedFile;
      files.set(saved.sessionId, saved);
    }
  return files;
}

/** Resolves once `path` exists (woken by its folder's events). */
function untilExists(path: string): Promise<void> {
  return new Promise((resolve) => {
    const watcher = watch(join(path, '..'), () => {
      if (existsSync(path)) {
        watcher.close();
        resolve();
      }
    });
    if (existsSync(path)) {
      watcher.close();
      resolve();
    }
  });
}

/** A CLI whose bash call holds the session until `go` appears in the workspace. */
async function holdingCli(
  setupResult: Awaited<ReturnType<typeof setup>>,
  resumeArgs: readonly string[],
) {
  const { dir, workspace, env } = setupResult;
  const script = await writeScript(
    dir,
    [
      {
        toolCalls: [
          {
            id: 'wait',
            name: 'bash',
            arguments: {
              command: 'touch started; while [ ! -e go ]; do sleep 0.05; done; echo released',
            },
          },
        ],
      },
      { text: 'slow finished' },
    ],
    'slow.json',
  );
  const child = spawn(
    process.execPath,
    [
      cliPath,
      '-p',
      'slow one',
      ...resumeArgs,
      '--scripted',
      script,
      '--cwd',
      workspace,
      '--mode',
      'full-access',
    ],
    { env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  cleanups.push(async () => {
    if (child.exitCode === null) child.kill('SIGKILL');
    await exited;
  });
  await untilExists(join(workspace, 'started'));
  return {
    finish: async () => {
      await writeFile(join(workspace, 'go'), '');
      return { code: await exited, stderr };
    },
  };
}

describe('two CLIs on one session at once', () => {
  it.each([
    ['--continue', (_id: string) => ['--continue']],
    ['--resume <id>', (id: string) => ['--resume', id]],
  ])(
    '%s while another process runs it: the second goes on as a copy, both keep their turns',
    async (_name, args) => {
      const context = await setup();
      const { dir, home, workspace, env, sessionId } = context;
      const holder = await holdingCli(context, args(sessionId));
      const fast = await writeScript(dir, [{ text: 'fast finished' }], 'fast.json');
      const second = await runCli(
        [
          '-p',
          'fast one',
          ...args(sessionId),
          '--scripted',
          fast,
          '--cwd',
          workspace,
          '--output-format',
          'json',
        ],
        { env },
      );
      expect(second.code, second.stderr).toBe(0);
      expect(second.stderr).toContain(`The session ${sessionId} is open in another agent process`);
      const copyId = (JSON.parse(second.stdout) as { sessionId: string }).sessionId;
      expect(copyId).not.toBe(sessionId);
      const held = await holder.finish();
      expect(held.code, held.stderr).toBe(0);

      const files = await sessionFiles(home);
      const original = files.get(sessionId);
      const copy = files.get(copyId);
      // The holder's call was never taken for one a crash cut off.
      expect(original?.messages.map((message) => message.role)).toEqual([
        'user',
        'assistant',
        'user',
        'assistant',
        'toolResult',
        'assistant',
      ]);
      expect(original?.messages.find((message) => message.role === 'toolResult')).toMatchObject({
        isError: false,
      });
      expect(JSON.stringify(original?.messages)).toContain('released');
      expect(JSON.stringify(original?.messages)).not.toContain('fast one');
      expect(copy?.messages.map((message) => message.content)).toEqual([
        'start',
        expect.anything(),
        'fast one',
        expect.anything(),
      ]);
      // Both locks are gone with their processes.
      expect(existsSync(sessionLockPath(sessionId, home))).toBe(false);
      expect(existsSync(sessionLockPath(copyId, home))).toBe(false);
    },
  );

  // The pid alone where there is no /proc (macOS): a reused pid then looks alive.
  const onProc = existsSync('/proc/self/stat');
  it.each([
    [
      'a process that was killed',
      async () => {
        const gone = spawn(process.execPath, ['-e', '']);
        await new Promise((resolve) => gone.on('close', resolve));
        return { pid: gone.pid };
      },
    ],
    ['a half-written lock', async () => undefined],
    ...(onProc
      ? [
          // After a reboot, or a long time, the pid of a killed CLI is another process's.
          ['a pid now used by another process', async () => ({ pid: process.pid, start: '1' })],
          [
            'a process of an earlier boot',
            async () => ({ pid: process.pid, boot: 'an-earlier-boot' }),
          ],
        ]
      : []),
  ] as [string, () => Promise<object | undefined>][])(
    'a lock left by %s is taken over: the session goes on under its id',
    async (_name, holder) => {
      const { dir, home, workspace, env, sessionId } = await setup();
      await mkdir(join(home, 'journals'), { recursive: true });
      const written = await holder();
      await writeFile(
        sessionLockPath(sessionId, home),
        written === undefined ? '{"pi' : JSON.stringify(written),
      );
      const again = await writeScript(dir, [{ text: 'again' }], 'again.json');
      const run = await runCli(
        [
          '-p',
          'again',
          '--continue',
          '--scripted',
          again,
          '--cwd',
          workspace,
          '--output-format',
          'json',
        ],
        { env },
      );
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).not.toContain('open in another agent process');
      expect((JSON.parse(run.stdout) as { sessionId: string }).sessionId).toBe(sessionId);
      expect(existsSync(sessionLockPath(sessionId, home))).toBe(false);
    },
  );
});
