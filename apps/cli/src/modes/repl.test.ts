// The interactive session in a real terminal: tmux runs the built CLI in a pane, the test types
// into it and reads the screen back. Each test has its own tmux socket.
import { existsSync } from 'node:fs';
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
  shellQuoted,
  TmuxSession,
  tempDir,
  writeScript,
} from '../testing/test-support.js';

const sessions: TmuxSession[] = [];
const cleanups: (() => Promise<void>)[] = [];

beforeAll(() => {
  assertBuilt();
});
beforeEach(skipWithout('tmux'));
afterEach(async () => {
  for (const session of sessions.splice(0)) session.kill();
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const waitOptions = screenWaitOptions;

/** Starts the REPL on a script in a fresh workspace. */
async function startRepl(
  steps: unknown[],
  extraArgs: string[] = [],
  setup: (workspace: string, dir: string) => Promise<void> = async () => {},
  env: Record<string, string> = cleanEnv(),
) {
  const dir = await tempDir('agent-cli-repl-');
  cleanups.push(dir.dispose);
  const script = await writeScript(dir.path, steps);
  const workspace = join(dir.path, 'ws');
  await mkdir(workspace);
  await setup(workspace, dir.path);
  const tmux = TmuxSession.start(
    [process.execPath, cliPath, '--scripted', script, '--cwd', workspace, ...extraArgs],
    { cwd: dir.path, env },
  );
  sessions.push(tmux);
  const screen = () => tmux.capture();
  /** Waits until the screen shows `text` (`count` times). */
  const waitForText = (text: string, count = 1) => tmux.waitForText(text, count);
  /** Waits for the idle prompt: the last non-empty line is `>`. */
  const waitForPrompt = (count = 1) => tmux.waitForPrompt(count);
  const submit = (text: string) => {
    tmux.type(text);
    tmux.press('Enter');
  };
  const waitForExit = () => tmux.waitForExit();
  return {
    tmux,
    dir: dir.path,
    workspace,
    screen,
    waitForText,
    waitForPrompt,
    submit,
    waitForExit,
  };
}

describe('interactive session (tmux)', () => {
  it('asks before a call, "a" runs it and answers the identical next call; /exit ends the process', async () => {
    const touch = { name: 'bash', arguments: { command: 'touch a.txt' } };
    const repl = await startRepl([
      { text: 'Creating a.txt.', toolCalls: [touch] },
      { toolCalls: [touch] },
      { text: 'All done.' },
    ]);
    await repl.waitForPrompt();
    expect(repl.screen()).toContain('mode default');
    repl.submit('make the file');
    await repl.waitForText('Allow bash: touch a.txt? [y] once  [a] always  [n] deny  [v] never');
    expect(existsSync(join(repl.workspace, 'a.txt'))).toBe(false);
    repl.tmux.press('a');
    await repl.waitForText('All done.');
    await repl.waitForPrompt(2);
    const screen = repl.screen();
    expect(screen.split('Allow bash').length - 1).toBe(1);
    expect(screen.split('✓ bash').length - 1).toBe(2);
    expect(screen).toContain('→ always');
    expect(existsSync(join(repl.workspace, 'a.txt'))).toBe(true);

    repl.submit('/exit');
    expect(await repl.waitForExit()).toBe(0);
  });

  it('Ctrl-C during a slow tool aborts the run and the prompt comes back; the conversation goes on', async () => {
    const repl = await startRepl(
      [
        { text: 'Sleeping.', toolCalls: [{ name: 'bash', arguments: { command: 'sleep 30' } }] },
        { text: 'Still here after the abort.' },
      ],
      ['--mode', 'full-access'],
    );
    await repl.waitForPrompt();
    repl.submit('take a nap');
    await repl.waitForText('→ bash {"command":"sleep 30"}');
    repl.tmux.press('C-c');
    await repl.waitForText('(aborted)');
    await repl.waitForPrompt(2);
    expect(repl.tmux.exitStatus()).toBeUndefined();

    repl.submit('/save conversation.json');
    // The whole confirmation, said once the file is written ("saved " alone can be another line).
    await repl.waitForText(' messages to conversation.json');
    const saved = JSON.parse(await readFile(join(repl.dir, 'conversation.json'), 'utf8')) as {
      messages: { role: string; stopReason?: string; isError?: boolean }[];
    };
    expect(saved.messages.find((message) => message.role === 'toolResult')?.isError).toBe(true);

    repl.submit('are you there?');
    await repl.waitForText('Still here after the abort.');
    await repl.waitForPrompt(4);

    // Ctrl-C twice at an idle prompt exits.
    repl.tmux.press('C-c');
    await repl.waitForText('(press Ctrl-C again or Ctrl-D to exit)');
    repl.tmux.press('C-c');
    expect(await repl.waitForExit()).toBe(0);
  });

  it('/mode changes what runs without asking; "n" denies and the model reads the denial', async () => {
    const write = { name: 'write_file', arguments: { path: 'x.txt', content: 'x' } };
    const repl = await startRepl([
      { toolCalls: [write] },
      { text: 'Denied, fine.' },
      { toolCalls: [write] },
      { text: 'Written.' },
    ]);
    await repl.waitForPrompt();
    repl.submit('write x');
    // The answer keys are drawn a moment after the question (keys before are not an answer).
    await repl.waitForText('[y] once  [a] always');
    repl.tmux.press('n');
    await repl.waitForText('Denied, fine.');
    expect(repl.screen()).toContain('✗ write_file [denied]: Permission denied: Denied by the user');
    expect(existsSync(join(repl.workspace, 'x.txt'))).toBe(false);
    await repl.waitForPrompt(2);

    repl.submit('/mode workspace-write');
    await repl.waitForText('mode: workspace-write');
    repl.submit('write x again');
    await repl.waitForText('Written.');
    expect(repl.screen().split('Allow write_file').length - 1).toBe(1);
    expect(existsSync(join(repl.workspace, 'x.txt'))).toBe(true);

    repl.tmux.press('C-d');
    expect(await repl.waitForExit()).toBe(0);
  });

  it('-p in a terminal asks on the terminal too, and "y" runs the call once', async () => {
    const write = { name: 'write_file', arguments: { path: 'y.txt', content: 'y' } };
    const repl = await startRepl(
      [{ toolCalls: [write] }, { text: 'Wrote y.txt.' }],
      ['-p', 'write y'],
    );
    await repl.waitForText('[y] once  [a] always');
    repl.tmux.press('y');
    await repl.waitForText('Wrote y.txt.');
    expect(await repl.waitForExit()).toBe(0);
    expect(repl.screen()).toContain('→ once');
    expect(await readFile(join(repl.workspace, 'y.txt'), 'utf8')).toBe('y');
  });

  it('/tools and /mcp list what is there; an MCP prompt runs as /server:prompt name=value', async () => {
    const dir = await tempDir('agent-cli-mcp-prompts-');
    cleanups.push(dir.dispose);
    const config = join(dir.path, 'mcp.json');
    const server = join(
      appDir,
      'node_modules/@modelcontextprotocol/server-everything/dist/index.js',
    );
    await writeFile(
      config,
      JSON.stringify({
        mcpServers: { everything: { command: process.execPath, args: [server, 'stdio'] } },
      }),
    );
    const repl = await startRepl([{ text: 'Sunny in Paris.' }], ['--mcp-config', config]);
    await repl.waitForPrompt();
    repl.submit('/tools');
    await repl.waitForText('everything__echo');
    repl.submit('/mcp');
    await repl.waitForText('/everything:args-prompt city=… state=…');
    repl.submit('/everything:args-prompt city="Paris" state=TX');
    await repl.waitForText("> What's weather in Paris, TX?");
    await repl.waitForText('Sunny in Paris.');
    await repl.waitForPrompt(2);
    repl.submit('/exit');
    expect(await repl.waitForExit()).toBe(0);
  });

  it('/cost sums the runs’ tokens; /permissions shows the mode, the rules and the grants', async () => {
    const repl = await startRepl(
      [
        { text: 'Hello.', usage: { input: 120, output: 30, cacheRead: 20 } },
        { text: 'Again.', usage: { input: 80, output: 10 } },
      ],
      ['--deny', 'bash(rm *)', '--allow', 'bash(git status)'],
    );
    await repl.waitForPrompt();
    repl.submit('hi');
    await repl.waitForText('Hello.');
    await repl.waitForPrompt(2);
    repl.submit('again');
    await repl.waitForText('Again.');
    await repl.waitForPrompt(3);
    repl.submit('/cost');
    await repl.waitForText('2 runs with');
    await repl.waitForText('200 input tokens (20 from cache), 40 output tokens');
    repl.submit('/permissions');
    await repl.waitForText('deny: bash(rm *)');
    await repl.waitForText('allow: bash(git status)');
    await repl.waitForText('granted this session: (none)');
    repl.submit('/exit');
    expect(await repl.waitForExit()).toBe(0);
  });

  it('a PreToolUse hook in .agent/settings.json blocks bash with exit 2; the model reads its stderr', async () => {
    const bash = { name: 'bash', arguments: { command: 'touch made.txt' } };
    const repl = await startRepl(
      [{ toolCalls: [bash] }, { text: 'The hook said no.' }],
      ['--mode', 'full-access', '--sandbox', 'off', '--trust'],
      async (workspace, dir) => {
        const hook = join(dir, 'no-touch.mjs');
        await writeFile(
          hook,
          `let input = ''; process.stdin.on('data', (c) => { input += c; });
process.stdin.on('end', () => {
  const event = JSON.parse(input);
  if (event.tool_input.command.includes('touch')) { process.stderr.write('touching files is not allowed here'); process.exit(2); }
});`,
        );
        await mkdir(join(workspace, '.agent'));
        await writeFile(
          join(workspace, '.agent', 'settings.json'),
          JSON.stringify({
            hooks: {
              PreToolUse: [
                {
                  matcher: 'bash',
                  hooks: [
                    {
                      type: 'command',
                      command: `${shellQuoted(process.execPath)} ${shellQuoted(hook)}`,
                    },
                  ],
                },
              ],
            },
          }),
        );
      },
    );
    await repl.waitForPrompt();
    repl.submit('make a file');
    await repl.waitForText('The hook said no.');
    expect(repl.screen()).toMatch(/✗ bash \[denied\]: .*touching files is not allowed here/);
    expect(existsSync(join(repl.workspace, 'made.txt'))).toBe(false);
    await repl.waitForPrompt(2);
    repl.submit('/exit');
    expect(await repl.waitForExit()).toBe(0);
  });

  it('a sub-agent from .agent/agents/ is offered as a tool; its calls show nested; /agents lists it', async () => {
    const repl = await startRepl(
      [
        { toolCalls: [{ name: 'researcher', arguments: { task: 'What does notes.txt say?' } }] },
        { toolCalls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }] },
        { text: 'notes.txt says: remember the milk' },
        { text: 'The researcher found it: remember the milk.' },
      ],
      // Read-only: the agent (read-only by itself) and its read_file run without a question.
      ['--mode', 'read-only'],
      async (workspace) => {
        await writeFile(join(workspace, 'notes.txt'), 'remember the milk\n');
        await mkdir(join(workspace, '.agent', 'agents'), { recursive: true });
        await writeFile(
          join(workspace, '.agent', 'agents', 'researcher.md'),
          `---
name: researcher
description: Reads files and reports what they say.
tools: Read, search, nonesuch
---
You read files carefully and quote them.
`,
        );
      },
    );
    await repl.waitForPrompt();
    repl.submit('/agents');
    await repl.waitForText('researcher — Reads files and reports what they say.');
    repl.submit('ask the researcher');
    await repl.waitForText('The researcher found it: remember the milk.');
    const screen = repl.screen();
    expect(screen).toContain('→ researcher {"task":"What does notes.txt say?"}');
    expect(screen).toMatch(/│ researcher → read_file \{"path":"notes.txt"\}/);
    expect(screen).toMatch(/│ researcher ✓ read_file: /);
    expect(screen).toMatch(/✓ researcher: notes.txt says: remember the milk/);
    await repl.waitForPrompt(3);
    repl.submit('/exit');
    expect(await repl.waitForExit()).toBe(0);
  });

  it('Enter while a tool runs steers the run; Alt+Enter queues a follow-up that runs after it', async () => {
    const wait = {
      name: 'bash',
      arguments: { command: 'while [ ! -f go ]; do sleep 0.05; done; echo released' },
    };
    const repl = await startRepl(
      [{ toolCalls: [wait] }, { text: 'Steered: using tabs.' }, { text: 'Follow-up answered.' }],
      ['--mode', 'full-access', '--sandbox', 'off'],
    );
    await repl.waitForPrompt();
    repl.submit('start waiting');
    await repl.waitForText('→ bash');
    repl.submit('use tabs, not spaces');
    await repl.waitForText('↳ steering: use tabs, not spaces');
    repl.tmux.type('then run the tests');
    repl.tmux.press('M-Enter');
    await repl.waitForText('⏎ queued: then run the tests');
    // The tool is still running; releasing it ends the batch, and the steering message goes next.
    await writeFile(join(repl.workspace, 'go'), '');
    await repl.waitForText('Follow-up answered.');
    await repl.waitForPrompt(2);
    repl.submit('/save conversation.json');
    // The whole confirmation, said once the file is written ("saved " alone can be another line).
    await repl.waitForText(' messages to conversation.json');
    const saved = JSON.parse(await readFile(join(repl.dir, 'conversation.json'), 'utf8')) as {
      messages: { role: string; content: string | { type: string; text?: string }[] }[];
    };
    const said = saved.messages.map((message) => {
      const text =
        typeof message.content === 'string'
          ? message.content
          : message.content.map((part) => part.text ?? '').join('');
      return `${message.role}: ${text}`;
    });
    const order = [
      'user: start waiting',
      'toolResult: released',
      'user: use tabs, not spaces',
      'assistant: Steered: using tabs.',
      'user: then run the tests',
      'assistant: Follow-up answered.',
    ].map((prefix) => said.findIndex((line) => line.startsWith(prefix)));
    expect(order.every((index) => index >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    repl.submit('/exit');
    expect(await repl.waitForExit()).toBe(0);
  });

  it('a project settings file with a deny rule: the call is denied without a question', async () => {
    const rm = { name: 'bash', arguments: { command: 'rm -f keep.txt' } };
    const repl = await startRepl(
      [{ toolCalls: [rm] }, { text: 'Could not delete it.' }],
      ['--sandbox', 'off', '--trust'],
      async (workspace) => {
        await writeFile(join(workspace, 'keep.txt'), 'keep');
        await mkdir(join(workspace, '.agent'));
        await writeFile(
          join(workspace, '.agent', 'settings.json'),
          JSON.stringify({ permissions: { defaultMode: 'full-access', deny: ['bash(rm *)'] } }),
        );
      },
    );
    await repl.waitForPrompt();
    repl.submit('delete keep.txt');
    await repl.waitForText('Could not delete it.');
    expect(repl.screen()).toContain('Denied by rule "bash(rm *)"');
    expect(repl.screen()).not.toContain('Allow bash');
    expect(existsSync(join(repl.workspace, 'keep.txt'))).toBe(true);
    repl.submit('/exit');
    expect(await repl.waitForExit()).toBe(0);
  });

  it('--continue resumes the workspace’s last session (kept under $AGENT_HOME/sessions)', async () => {
    const home = await tempDir('agent-cli-home-');
    cleanups.push(home.dispose);
    const env = cleanEnv({ AGENT_HOME: home.path });
    const first = await startRepl(
      [{ text: 'Noted: the cat is called Miso.' }],
      [],
      async () => {},
      env,
    );
    await first.waitForPrompt();
    first.submit('my cat is called Miso');
    await first.waitForText('Noted: the cat is called Miso.');
    await first.waitForPrompt(2);
    first.submit('/exit');
    expect(await first.waitForExit()).toBe(0);

    const script = await writeScript(first.dir, [{ text: 'Your cat is Miso.' }], 'second.json');
    const second = TmuxSession.start(
      [process.execPath, cliPath, '--scripted', script, '--cwd', first.workspace, '--continue'],
      { cwd: first.dir, env },
    );
    sessions.push(second);
    await vi.waitFor(
      () =>
        expect(second.capture()).toContain(
          'resumed a conversation of 2 messages, last written today',
        ),
      waitOptions,
    );
    // Where it stopped, for the user who comes back the next day: the last prompt and answer.
    expect(second.capture()).toContain(
      '  you: my cat is called Miso\n  agent: Noted: the cat is called Miso.',
    );
    second.type('what is my cat called?');
    second.press('Enter');
    await vi.waitFor(() => expect(second.capture()).toContain('Your cat is Miso.'), waitOptions);
    second.type('/exit');
    second.press('Enter');
    await vi.waitFor(() => expect(second.exitStatus()).toBe(0), waitOptions);
  });

  it('an edit approval shows the unified diff before the question, and the result shows it after', async () => {
    const edit = {
      name: 'edit_file',
      arguments: { path: 'greet.txt', old_string: 'hello world', new_string: 'hello there' },
    };
    const repl = await startRepl(
      [{ toolCalls: [edit] }, { text: 'Edited.' }],
      [],
      async (workspace) => {
        await writeFile(join(workspace, 'greet.txt'), 'first line\nhello world\nlast line\n');
      },
    );
    await repl.waitForPrompt();
    repl.submit('change the greeting');
    await repl.waitForText('[y] once  [a] always');
    const asked = repl.screen();
    expect(asked).toMatch(/@@ -1,3 \+1,3 @@/);
    expect(asked).toMatch(/^\s+-hello world$/m);
    expect(asked).toMatch(/^\s+\+hello there$/m);
    expect(asked.indexOf('-hello world')).toBeLessThan(asked.indexOf('Allow edit_file'));
    repl.tmux.press('y');
    await repl.waitForText('Edited.');
    const after = repl.screen();
    const result = after.indexOf('✓ edit_file');
    expect(result).toBeGreaterThan(0);
    expect(after.indexOf('+hello there', result)).toBeGreaterThan(result);
    expect(await readFile(join(repl.workspace, 'greet.txt'), 'utf8')).toBe(
      'first line\nhello there\nlast line\n',
    );
    repl.submit('/exit');
    expect(await repl.waitForExit()).toBe(0);
  });

  it('a running tool shows a spinner with its elapsed time, cleared when it ends', async () => {
    const wait = {
      name: 'bash',
      arguments: { command: 'while [ ! -f go ]; do sleep 0.05; done; echo released' },
    };
    const repl = await startRepl(
      [{ toolCalls: [wait] }, { text: 'Released.' }],
      ['--mode', 'full-access', '--sandbox', 'off'],
    );
    await repl.waitForPrompt();
    repl.submit('wait for it');
    await vi.waitFor(
      () => expect(repl.screen()).toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] bash \d+\.\ds/),
      waitOptions,
    );
    await writeFile(join(repl.workspace, 'go'), '');
    await repl.waitForText('Released.');
    await repl.waitForPrompt(2);
    expect(repl.screen()).not.toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] bash/);
    expect(repl.screen()).toContain('✓ bash: released');
    repl.submit('/exit');
    expect(await repl.waitForExit()).toBe(0);
  });

  it('/model switches the model and keeps the conversation; /clear empties it', async () => {
    const repl = await startRepl([{ text: 'First answer.' }, { text: 'Second answer.' }]);
    await repl.waitForPrompt();
    repl.submit('/model');
    await repl.waitForText('model: scripted');
    repl.submit('hello');
    await repl.waitForText('First answer.');
    await repl.waitForPrompt(3);
    repl.submit('/model other-model');
    await repl.waitForText('model: other-model (the conversation goes on)');
    repl.submit('/save before.json');
    await repl.waitForText('saved 2 messages');
    repl.submit('/clear');
    await repl.waitForText('conversation cleared');
    repl.submit('again');
    await repl.waitForText('Second answer.');
    repl.submit('/save after.json');
    await repl.waitForText('saved 2 messages to after.json');
    const after = JSON.parse(await readFile(join(repl.dir, 'after.json'), 'utf8')) as {
      messages: { role: string; model?: string }[];
    };
    expect(after.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(after.messages[1]?.model).toBe('other-model');
    repl.submit('/exit');
    expect(await repl.waitForExit()).toBe(0);
  });

  it('--resume without a file lists the workspace’s sessions and resumes the one picked', async () => {
    const home = await tempDir('agent-cli-home-');
    cleanups.push(home.dispose);
    const env = cleanEnv({ AGENT_HOME: home.path });
    const first = await startRepl([{ text: 'Noted the colour.' }], [], async () => {}, env);
    await first.waitForPrompt();
    first.submit('my favourite colour is teal');
    await first.waitForText('Noted the colour.');
    await first.waitForPrompt(2);
    first.submit('/exit');
    expect(await first.waitForExit()).toBe(0);

    const script = await writeScript(first.dir, [{ text: 'It is teal.' }], 'second.json');
    const second = TmuxSession.start(
      [process.execPath, cliPath, '--scripted', script, '--cwd', first.workspace, '--resume'],
      { cwd: first.dir, env },
    );
    sessions.push(second);
    await vi.waitFor(() => expect(second.capture()).toContain('Resume which (1-1)?'), waitOptions);
    expect(second.capture()).toMatch(
      / 1\. \d{4}-\d\d-\d\d \d\d:\d\d {2}my favourite colour is teal/,
    );
    second.type('1');
    second.press('Enter');
    await vi.waitFor(
      () => expect(second.capture()).toContain('resumed a conversation of 2 messages'),
      waitOptions,
    );
    second.type('what colour?');
    second.press('Enter');
    await vi.waitFor(() => expect(second.capture()).toContain('It is teal.'), waitOptions);
    second.type('/exit');
    second.press('Enter');
    await vi.waitFor(() => expect(second.exitStatus()).toBe(0), waitOptions);
  });
});
