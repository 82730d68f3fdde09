// kill -9 the CLI in the middle of a batch of tool calls, then `agent --continue`: the run goes
// on from its journal — finished calls are not run again, the call that was running is reported
// to the model as interrupted (bash is not repeatable), a read-only one is simply done, and no
// model call the journal holds is paid for again.
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
import { journalPath } from './session-journal.js';

const cleanups: (() => Promise<void>)[] = [];
beforeAll(() => assertBuilt());
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function scratch(prefix: string): Promise<string> {
  const dir = await tempDir(prefix);
  cleanups.push(dir.dispose);
  return dir.path;
}

/** Resolves once `path` exists and its text satisfies `ready` (woken by file-system events). */
function untilFile(path: string, ready: (text: string) => boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    const check = async () => {
      const text = existsSync(path) ? await readFile(path, 'utf8') : '';
      if (ready(text)) {
        watcher.close();
        resolve(text);
      }
    };
    const watcher = watch(join(path, '..'), () => {
      check().catch(reject);
    });
    check().catch(reject);
  });
}

/** The one session file of the workspace, parsed. */
async function sessionFile(home: string) {
  const [workspace] = await readdir(join(home, 'sessions'));
  const dir = join(home, 'sessions', workspace ?? '');
  const [name] = (await readdir(dir)).filter((file) => file.endsWith('.json'));
  return JSON.parse(await readFile(join(dir, name ?? ''), 'utf8')) as {
    sessionId: string;
    lastRunId?: string;
    messages: {
      role: string;
      toolCallId?: string;
      isError?: boolean;
      errorKind?: string;
      content: unknown;
    }[];
  };
}

describe('agent --continue after kill -9 mid-batch', () => {
  it('resumes the run itself: finished calls kept, the running one reported, the model not paid twice', async () => {
    const workspace = await scratch('agent-durable-ws-');
    const home = await scratch('agent-durable-home-');
    await mkdir(join(home, 'journals'), { recursive: true });
    await writeFile(join(workspace, 'notes.txt'), 'hello\n');
    const effects = join(workspace, 'effects.txt');
    const first = await writeScript(workspace, [
      {
        toolCalls: [
          { id: 'a', name: 'bash', arguments: { command: 'echo charge-a >> effects.txt' } },
          { id: 'b', name: 'read_file', arguments: { path: 'notes.txt' } },
          {
            id: 'c',
            name: 'bash',
            arguments: {
              command: 'echo slow-start >> effects.txt; sleep 60; echo slow-end >> effects.txt',
            },
          },
        ],
      },
      { text: 'the first process never gets here' },
    ]);
    // The resumed process has one model turn left: had it paid again for the journaled first
    // turn, its script would run out and the run would end in an error.
    const second = await writeScript(workspace, [{ text: 'resumed and finished' }], 'second.json');
    const env = cleanEnv({ AGENT_HOME: home });

    const child = spawn(
      process.execPath,
      [cliPath, '-p', 'charge', '--scripted', first, '--cwd', workspace, '--mode', 'full-access'],
      { env, stdio: 'ignore' },
    );
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.on('exit', (_, signal) => resolve(signal)),
    );
    // Mid-batch: the quick calls' results are on disk, the slow call is running.
    await untilFile(effects, (text) => text.includes('slow-start'));
    const sessionId = (await sessionFile(home)).sessionId;
    await untilFile(
      journalPath(sessionId, home),
      (text) =>
        text.includes('"k":"tool-result/1/0/a","v"') &&
        text.includes('"k":"tool-result/1/1/b","v"'),
    );
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');

    const resumed = await runCli(
      ['--continue', '--scripted', second, '--cwd', workspace, '--mode', 'full-access'],
      { cwd: workspace, env },
    );
    expect(resumed.stderr).toContain('Resuming the run a crash cut off');
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toBe('resumed and finished\n');

    // Each side effect happened once: the finished call was not repeated, the slow one not re-run.
    expect((await readFile(effects, 'utf8')).split('\n').filter(Boolean).sort()).toEqual([
      'charge-a',
      'slow-start',
    ]);
    const saved = await sessionFile(home);
    const results = saved.messages.filter((message) => message.role === 'toolResult');
    expect(results.map((message) => [message.toolCallId, message.errorKind ?? 'ok'])).toEqual([
      ['a', 'ok'],
      ['b', 'ok'],
      ['c', 'interrupted'],
    ]);
    expect(saved.messages.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'toolResult',
      'toolResult',
      'toolResult',
      'assistant',
    ]);
    expect(saved.lastRunId).toBeDefined();
    // The session file holds the run now: the journal is empty, and a second --continue has
    // nothing to resume.
    expect(await readFile(journalPath(sessionId, home), 'utf8')).toBe('');
    const again = await runCli(['--continue', '--scripted', second, '--cwd', workspace], {
      cwd: workspace,
      env,
    });
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('no run of this session was cut off by a crash');
  }, 120_000);
});

describe('agent --continue after kill -9 in a session tightened since', () => {
  // A batch with an exclusive tool (knowledge) runs one call at a time, every verdict taken
  // first: killed while the first command runs, the journal holds "allowed" for the second,
  // which never started. The user, alarmed, resumes with a stricter session.
  it.each([
    // -p exits 4 when a call needed a question it could not ask (deniedWithoutApproverExitCode).
    ['a deny rule', ['--mode', 'full-access', '--deny', 'bash'], 0],
    ['a narrower mode', ['--mode', 'read-only'], 4],
    ['plan mode', ['--mode', 'plan'], 0],
  ])(
    'runs no journaled call that %s now refuses',
    async (_, resumeFlags, code) => {
      const workspace = await scratch('agent-durable-ws-');
      const home = await scratch('agent-durable-home-');
      await mkdir(join(home, 'journals'), { recursive: true });
      const effects = join(workspace, 'effects.txt');
      const first = await writeScript(workspace, [
        {
          toolCalls: [
            {
              id: 'a',
              name: 'bash',
              arguments: { command: 'echo slow-start >> effects.txt; sleep 60' },
            },
            { id: 'b', name: 'bash', arguments: { command: 'echo paid >> effects.txt' } },
            { id: 'c', name: 'knowledge', arguments: { command: 'show' } },
          ],
        },
        { text: 'the first process never gets here' },
      ]);
      const second = await writeScript(workspace, [{ text: 'resumed' }], 'second.json');
      const env = cleanEnv({ AGENT_HOME: home });
      const child = spawn(
        process.execPath,
        [
          cliPath,
          '-p',
          'pay',
          '--scripted',
          first,
          '--cwd',
          workspace,
          '--mode',
          'full-access',
          '--tools',
          'default,knowledge',
        ],
        { env, stdio: 'ignore' },
      );
      const exited = new Promise<NodeJS.Signals | null>((resolve) =>
        child.on('exit', (_, signal) => resolve(signal)),
      );
      await untilFile(effects, (text) => text.includes('slow-start'));
      const sessionId = (await sessionFile(home)).sessionId;
      await untilFile(journalPath(sessionId, home), (text) =>
        text.includes('"k":"tool-decision/1/1/b","v"'),
      );
      child.kill('SIGKILL');
      expect(await exited).toBe('SIGKILL');

      const resumed = await runCli(
        [
          '--continue',
          '--scripted',
          second,
          '--cwd',
          workspace,
          '--tools',
          'default,knowledge',
          ...resumeFlags,
        ],
        { cwd: workspace, env },
      );
      expect(resumed.stderr).toContain('Resuming the run a crash cut off');
      expect(resumed.code).toBe(code);
      // The journaled "allowed" did not run the command the session now refuses.
      expect((await readFile(effects, 'utf8')).split('\n').filter(Boolean)).toEqual(['slow-start']);
      const results = (await sessionFile(home)).messages.filter(
        (message) => message.role === 'toolResult',
      );
      expect(results.map((message) => [message.toolCallId, message.errorKind ?? 'ok'])).toEqual([
        ['a', 'interrupted'],
        ['b', 'denied'],
        ['c', 'ok'],
      ]);
    },
    120_000,
  );
});
