// `agent -p` (text) cut off while the model writes its answer: Ctrl-C at a real terminal (tmux),
// SIGTERM, or a server that ends the stream mid-answer. What the model wrote comes out on stdout,
// and one line on stderr says it is partial and that the conversation is kept. Before, stdout got
// nothing and stderr only `(aborted)`: the answer, already paid for, was shown nowhere (only the
// json formats and the session file had it).
import { readFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cutOffTurnEvents } from '../testing/messages-server.js';
import {
  assertBuilt,
  cleanEnv,
  cliPath,
  runCli,
  shellQuoted,
  TmuxSession,
  tempDir,
} from '../testing/test-support.js';

const cleanups: (() => Promise<void> | void)[] = [];
beforeAll(() => assertBuilt());
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const partial = 'First line of the answer.\nSecond part, still ';

/**
 * An Anthropic Messages server whose answer stops after `partial` (or, with `text: false`, before
 * any text): it then `stall`s with the response open, or `end`s it without `message_stop`.
 */
async function cutOffServer(options: { after: 'stall' | 'end'; text?: boolean }): Promise<string> {
  const open = new Set<ServerResponse>();
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      // One write: the text's start and its delta reach the CLI together.
      const body = cutOffTurnEvents(options.text === false ? undefined : partial);
      if (options.after === 'end') response.end(body);
      else {
        open.add(response);
        response.write(body);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        for (const response of open) response.destroy();
        server.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function scratch(): Promise<string> {
  const dir = await tempDir('agent-print-cut-');
  cleanups.push(dir.dispose);
  return dir.path;
}

/**
 * `agent -p` at a terminal (tmux), stdout to a file: stderr shows the transcript where the user
 * looks. Returns the session, the stdout file and the file its pid is written to.
 */
async function atTerminal(url: string) {
  const dir = await scratch();
  const out = join(dir, 'answer.txt');
  const pidFile = join(dir, 'pid');
  const agent = [process.execPath, cliPath, '-p', 'explain', '--cwd', dir]
    .map(shellQuoted)
    .join(' ');
  const tmux = TmuxSession.start(
    ['sh', '-c', `echo $$ > ${shellQuoted(pidFile)}; exec ${agent} > ${shellQuoted(out)}`],
    {
      cwd: dir,
      env: cleanEnv({
        ANTHROPIC_API_KEY: 'sk-ant-test-key',
        ANTHROPIC_BASE_URL: url,
        AGENT_HOME: join(dir, 'home'),
        TERM: 'xterm-256color',
      }),
    },
  );
  cleanups.push(() => tmux.kill());
  return { tmux, out, pid: () => Number(readFileSync(pidFile, 'utf8').trim()) };
}

describe('agent -p cut off mid-answer: the partial answer on stdout, a note on stderr', () => {
  it('Ctrl-C at a terminal while the answer comes: stdout has what was written, exit 130', async (context) => {
    skipWithout('tmux')(context);
    const { tmux, out } = await atTerminal(await cutOffServer({ after: 'stall' }));
    // Named on stderr once the answer's text has started (its first part came with it).
    await tmux.waitForText('answering');
    tmux.press('C-c');
    expect(await tmux.waitForExit()).toBe(130);
    expect(readFileSync(out, 'utf8')).toBe(`${partial}\n`);
    const screen = tmux.capture();
    expect(screen).toContain(
      'agent: interrupted (Ctrl-C): the answer on stdout is cut off where the model was; the conversation is kept (agent --continue goes on with it); exit 130',
    );
    expect(screen).not.toContain('unexpected error');
  });

  it('SIGTERM while the answer comes: the same, named by the signal', async (context) => {
    skipWithout('tmux')(context);
    const { tmux, out, pid } = await atTerminal(await cutOffServer({ after: 'stall' }));
    await tmux.waitForText('answering');
    process.kill(pid(), 'SIGTERM');
    expect(await tmux.waitForExit()).toBe(130);
    expect(readFileSync(out, 'utf8')).toBe(`${partial}\n`);
    expect(tmux.capture()).toContain(
      'agent: stopped by SIGTERM: the answer on stdout is cut off where the model was',
    );
  });

  it('Ctrl-C before any text: stdout stays empty, the note says the model had not answered', async (context) => {
    skipWithout('tmux')(context);
    const { tmux, out } = await atTerminal(await cutOffServer({ after: 'stall', text: false }));
    await tmux.waitForText('waiting for the model');
    tmux.press('C-c');
    expect(await tmux.waitForExit()).toBe(130);
    expect(readFileSync(out, 'utf8')).toBe('');
    expect(tmux.capture()).toContain(
      'agent: interrupted (Ctrl-C) before the model answered; the conversation is kept',
    );
  });

  it('a stream that ends mid-answer: the partial answer on stdout, the error and the note on stderr, exit 1', async () => {
    const dir = await scratch();
    const url = await cutOffServer({ after: 'end' });
    const run = await runCli(['-p', 'explain', '--cwd', dir], {
      env: cleanEnv({
        ANTHROPIC_API_KEY: 'sk-ant-test-key',
        ANTHROPIC_BASE_URL: url,
        AGENT_HOME: join(dir, 'home'),
      }),
    });
    expect(run.code, run.stderr).toBe(1);
    expect(run.stdout).toBe(`${partial}\n`);
    expect(run.stderr).toMatch(/^error: /m);
    expect(run.stderr).toContain(
      'agent: the answer on stdout is cut off where the error above ended the run; the conversation is kept (agent --continue goes on with it)',
    );
  });
});
