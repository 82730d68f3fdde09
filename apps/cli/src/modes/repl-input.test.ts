// The REPL keeps every key: lines typed while the session starts, at the prompt in one burst, or
// during a run are queued and run in order; a bracketed paste is one prompt. In a real terminal
// (tmux), with `send-keys` for typing and `paste-buffer -p` for a bracketed paste.
import { spawnSync } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  appDir,
  assertBuilt,
  cleanEnv,
  cliPath,
  screenWaitOptions,
  TmuxSession,
  tempDir,
  writeScript,
} from '../testing/test-support.js';

const cleanups: (() => Promise<void> | void)[] = [];
beforeAll(() => {
  assertBuilt();
});
beforeEach(skipWithout('tmux'));
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const waitOptions = screenWaitOptions;

/** A bash call that runs until the test creates `go` in the workspace. */
const untilGo = {
  name: 'bash',
  arguments: { command: 'while [ ! -f go ]; do sleep 0.05; done; echo released' },
};

async function startRepl(steps: unknown[], extraArgs: string[] = []) {
  const dir = await tempDir('agent-cli-input-');
  cleanups.push(dir.dispose);
  const workspace = join(dir.path, 'ws');
  await mkdir(workspace);
  const script = await writeScript(dir.path, steps);
  const save = join(dir.path, 'conversation.json');
  const tmux = TmuxSession.start(
    [
      process.execPath,
      cliPath,
      '--scripted',
      script,
      '--cwd',
      workspace,
      '--save',
      save,
      ...extraArgs,
    ],
    { cwd: dir.path, env: cleanEnv({ AGENT_HOME: join(dir.path, 'home') }) },
  );
  cleanups.push(() => tmux.kill());
  const screen = () => tmux.capture();
  const waitForText = (text: string, count = 1) => tmux.waitForText(text, count);
  /** Waits for the idle prompt (the last non-empty line is `>`) shown `count` times. */
  const waitForPrompt = (count = 1) => tmux.waitForPrompt(count);
  /** The conversation as saved after each run: `role: text` per message. */
  const said = async () => {
    const saved = JSON.parse(await readFile(save, 'utf8')) as {
      messages: { role: string; content: string | { type: string; text?: string }[] }[];
    };
    return saved.messages.map((message) => {
      const text =
        typeof message.content === 'string'
          ? message.content
          : message.content.map((part) => part.text ?? '').join('');
      return `${message.role}: ${text}`;
    });
  };
  /** Pastes `text` as a terminal does when the program asked for bracketed paste. */
  const paste = async (text: string) => {
    const file = join(dir.path, `paste-${Date.now()}.txt`);
    await writeFile(file, text);
    for (const args of [
      ['load-buffer', '-b', 'clip', file],
      ['paste-buffer', '-p', '-b', 'clip', '-t', 'main'],
    ]) {
      const run = spawnSync('tmux', ['-L', tmux.socket, ...args], { encoding: 'utf8' });
      if (run.status !== 0) throw new Error(`tmux ${args.join(' ')}: ${run.stderr}`);
    }
  };
  return { dir: dir.path, workspace, tmux, screen, waitForText, waitForPrompt, said, paste };
}

/** Fails unless the lines appear in `lines` in this order (each as a prefix of one line). */
function expectInOrder(lines: readonly string[], expected: readonly string[]): void {
  const at = expected.map((prefix) => lines.findIndex((line) => line.startsWith(prefix)));
  expect(
    at.every((index) => index >= 0),
    `${JSON.stringify(expected)} in ${JSON.stringify(lines)}`,
  ).toBe(true);
  expect([...at].sort((a, b) => a - b)).toEqual(at);
}

describe('the REPL keeps every line (tmux)', () => {
  it('two lines typed in one burst at the prompt both run, in order', async () => {
    const repl = await startRepl([{ text: 'answer A' }, { text: 'answer B' }]);
    await repl.waitForPrompt();
    repl.tmux.type('quick A\rquick B\r');
    await repl.waitForText('answer B');
    await repl.waitForPrompt(3);
    expectInOrder(await repl.said(), [
      'user: quick A',
      'assistant: answer A',
      'user: quick B',
      'assistant: answer B',
    ]);
    // The second line, entered while the first ran, is shown as it runs.
    expect(repl.screen()).toContain('> quick B');
  });

  it('lines typed while the session starts (an MCP server still connecting) run once it is ready', async () => {
    const dir = await tempDir('agent-cli-input-gate-');
    cleanups.push(dir.dispose);
    const gate = join(dir.path, 'open');
    const memory = join(appDir, 'node_modules/@modelcontextprotocol/server-memory/dist/index.js');
    // A server that does not start until the test opens the gate: start-up lasts until then.
    const server = join(dir.path, 'gated-server.mjs');
    await writeFile(
      server,
      `import { existsSync, watch } from 'node:fs';
const start = () => import(${JSON.stringify(memory)});
if (existsSync(${JSON.stringify(gate)})) start();
else {
  const watcher = watch(${JSON.stringify(dir.path)}, () => {
    if (existsSync(${JSON.stringify(gate)})) { watcher.close(); start(); }
  });
}
`,
    );
    const config = join(dir.path, 'mcp.json');
    await writeFile(
      config,
      JSON.stringify({
        mcpServers: {
          gated: {
            command: process.execPath,
            args: [server],
            env: { MEMORY_FILE_PATH: join(dir.path, 'memory.jsonl') },
          },
        },
      }),
    );
    const repl = await startRepl(
      [{ text: 'answer A' }, { text: 'answer B' }],
      ['--mcp-config', config],
    );
    await repl.waitForText('connecting to MCP server gated…');
    repl.tmux.type('quick A');
    repl.tmux.press('Enter');
    repl.tmux.type('quick B');
    repl.tmux.press('Enter');
    await writeFile(gate, '');
    await repl.waitForText('answer B');
    await repl.waitForPrompt(3);
    expectInOrder(await repl.said(), [
      'user: quick A',
      'assistant: answer A',
      'user: quick B',
      'assistant: answer B',
    ]);
  });

  it('a line entered during a run that the run never sends (it was stopped) runs next, as a prompt', async () => {
    const repl = await startRepl(
      [{ toolCalls: [untilGo] }, { text: 'answer B' }],
      ['--mode', 'full-access', '--sandbox', 'off'],
    );
    await repl.waitForPrompt();
    repl.tmux.type('quick A\r');
    await repl.waitForText('→ bash');
    repl.tmux.type('quick B\r');
    await repl.waitForText('↳ steering: quick B');
    repl.tmux.press('C-c');
    await repl.waitForText('answer B');
    await repl.waitForPrompt(3);
    expectInOrder(await repl.said(), ['user: quick A', 'user: quick B', 'assistant: answer B']);
    expect((await repl.said()).filter((line) => line === 'user: quick B')).toHaveLength(1);
  });

  it('text typed during a run without Enter is in the next prompt’s line', async () => {
    const repl = await startRepl(
      [{ toolCalls: [untilGo] }, { text: 'done' }, { text: 'answer half' }],
      ['--mode', 'full-access', '--sandbox', 'off'],
    );
    await repl.waitForPrompt();
    repl.tmux.type('start\r');
    await repl.waitForText('→ bash');
    repl.tmux.type('half a tho');
    await writeFile(join(repl.workspace, 'go'), '');
    await repl.waitForText('done');
    await vi.waitFor(
      () => expect(repl.screen().trimEnd().endsWith('> half a tho')).toBe(true),
      waitOptions,
    );
    repl.tmux.type('ught\r');
    await repl.waitForText('answer half');
    // The session file is written as the run ends, a moment after its answer shows.
    await vi.waitFor(
      async () => expect(await repl.said()).toContain('user: half a thought'),
      waitOptions,
    );
  });
});

describe('bracketed paste (tmux)', () => {
  it('several pasted lines are one prompt, sent with Enter; the line shows a placeholder', async () => {
    const repl = await startRepl([{ text: 'one answer' }, { text: 'second answer' }]);
    await repl.waitForPrompt();
    // (tmux turns each line end into a carriage return, as terminals do.)
    await repl.paste('first line\nsecond line\n\tthird line\n');
    await repl.waitForText('[pasted text #1: 3 lines]');
    // Nothing ran yet: the paste waits for Enter, and text can go around it.
    expect(repl.screen()).not.toContain('one answer');
    repl.tmux.type(' explain this');
    repl.tmux.press('Enter');
    await repl.waitForText('one answer');
    await repl.waitForPrompt(2);
    const said = await repl.said();
    expect(said.filter((line) => line.startsWith('user: '))).toEqual([
      'user: first line\nsecond line\n\tthird line explain this',
    ]);
    // One plain line pasted is simply text in the line.
    await repl.paste('just words');
    await repl.waitForText('> just words');
    repl.tmux.press('Enter');
    await repl.waitForText('second answer');
    // The session file is written as the run ends, a moment after its answer shows.
    await vi.waitFor(
      async () => expect(await repl.said()).toContain('user: just words'),
      waitOptions,
    );
  });

  it('a long paste of non-ASCII text arrives whole (a character cut between two reads was U+FFFD twice)', async () => {
    const repl = await startRepl([{ text: 'read it' }]);
    await repl.waitForPrompt();
    // 200 kB of two-byte characters: the terminal hands it over in reads of up to 64 kB, and an
    // odd boundary cuts an é in two (before, 48 of 99,000 came out as U+FFFD).
    const line = `${'é'.repeat(98)}日\n`;
    await repl.paste(line.repeat(1000));
    await repl.waitForText('[pasted text #1: 1000 lines]');
    repl.tmux.press('Enter');
    await repl.waitForText('read it');
    const prompt = await vi.waitFor(async () => {
      const said = (await repl.said()).find((text) => text.startsWith('user: '));
      expect(said).toBeDefined();
      return said ?? '';
    }, waitOptions);
    expect(prompt.split('\ufffd').length - 1).toBe(0);
    expect(prompt).toBe(`user: ${line.repeat(1000).trimEnd()}`);
  });

  it('a paste during a run is one steering message', async () => {
    const repl = await startRepl(
      [{ toolCalls: [untilGo] }, { text: 'steered' }],
      ['--mode', 'full-access', '--sandbox', 'off'],
    );
    await repl.waitForPrompt();
    repl.tmux.type('start\r');
    await repl.waitForText('→ bash');
    await repl.paste('use tabs\nnot spaces\n');
    repl.tmux.press('Enter');
    await repl.waitForText('↳ steering: use tabs');
    await writeFile(join(repl.workspace, 'go'), '');
    await repl.waitForText('steered');
    await repl.waitForPrompt(2);
    // The session file is written as the run ends, a moment after its answer shows.
    await vi.waitFor(
      async () => expect(await repl.said()).toContain('user: use tabs\nnot spaces'),
      waitOptions,
    );
  });
});
