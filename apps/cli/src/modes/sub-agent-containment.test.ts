// Sub-agents from agent files inside the session's containment, through the built CLI: the
// session's mode, rules and approvals bound a child's calls, a question a child asks says so (in
// the terminal and in stream-json), and interrupting the session stops a child's running command.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { Harness } from '../testing/repl-harness.js';
import {
  assertBuilt,
  cleanEnv,
  cliPath,
  runCli,
  shellQuoted,
  writeScript,
} from '../testing/test-support.js';
import { type StreamJsonEvent, streamJsonEventSchema } from './stream-json.js';

const harness = new Harness();
beforeAll(() => assertBuilt());
afterEach(() => harness.dispose());

/** A workspace with one agent file, `helper`, that may use every tool of the session. */
async function withHelper(prefix: string): Promise<{ dir: string; workspace: string }> {
  const folder = await harness.folder(prefix);
  await mkdir(join(folder.workspace, '.agent', 'agents'), { recursive: true });
  await mkdir(join(folder.workspace, '.git'));
  await writeFile(
    join(folder.workspace, '.agent', 'agents', 'helper.md'),
    '---\nname: helper\ndescription: Does what it is told.\n---\nDo it.\n',
  );
  return folder;
}

/** The parent hands `helper` a task; the child makes `call`, then both finish. */
const delegating = (call: { name: string; arguments: Record<string, unknown> }) => [
  { toolCalls: [{ name: 'helper', arguments: { task: 'do it' } }] },
  { toolCalls: [call] },
  { text: 'child done' },
  { text: 'parent done' },
];

const touch = (file: string) => ({
  name: 'bash',
  arguments: { command: `touch ${shellQuoted(file)}` },
});

describe("a child's calls meet the session's permissions (-p)", () => {
  it.each([
    // [mode and rules, why the child's call is refused]
    [['--mode', 'plan'], /Plan mode: only read-only tools run/],
    [['--mode', 'read-only'], /No one could be asked to approve this call/],
    [['--mode', 'default', '--allow', 'helper'], /No one could be asked to approve this call/],
    [['--mode', 'full-access', '--deny', 'bash(touch *)'], /Permission denied/],
    [['--mode', 'workspace-write', '--deny', 'Bash'], /Permission denied/],
  ])('%j: the child cannot run what the parent may not', async (flags, why) => {
    const { dir, workspace } = await withHelper('agent-cli-child-gate-');
    const script = await writeScript(dir, delegating(touch('made')));
    const run = await runCli(['--scripted', script, '--cwd', workspace, '-p', 'go', ...flags], {
      cwd: dir,
    });
    expect(run.stderr).toMatch(/│ helper → bash/);
    expect(run.stderr).toMatch(why);
    expect(existsSync(join(workspace, 'made'))).toBe(false);
  });

  it('stream-json: the question a child asks names the sub-agent; the parent’s own does not', async () => {
    const { dir, workspace } = await withHelper('agent-cli-child-asks-json-');
    const script = await writeScript(dir, [
      { toolCalls: [touch('by-parent')] },
      ...delegating(touch('by-child')),
    ]);
    const run = await runCli(
      [
        ...['--scripted', script, '--cwd', workspace, '-p', 'go', '--mode', 'read-only'],
        ...['--output-format', 'stream-json'],
      ],
      { cwd: dir },
    );
    const events = run.stdout
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => streamJsonEventSchema.parse(JSON.parse(line)));
    const asked = events.filter(
      (event): event is Extract<StreamJsonEvent, { type: 'permission-asked' }> =>
        event.type === 'permission-asked',
    );
    expect(asked.map((event) => [event.subjects, event.agentPath])).toEqual([
      [['touch by-parent'], undefined],
      [['touch by-child'], ['helper']],
    ]);
  });
});

describe("a child meets the session's path rules and hooks (-p)", () => {
  it("a denied path is neither readable nor found by the child's search", async () => {
    const { dir, workspace } = await withHelper('agent-cli-child-paths-');
    await writeFile(join(workspace, 'secret.txt'), 'the password is hunter2\n');
    await writeFile(join(workspace, 'open.txt'), 'nothing here\n');
    const script = await writeScript(dir, [
      { toolCalls: [{ name: 'helper', arguments: { task: 'find the password' } }] },
      {
        toolCalls: [
          { name: 'read_file', arguments: { path: 'secret.txt' } },
          { name: 'search', arguments: { pattern: 'hunter2' } },
          { name: 'glob', arguments: { pattern: '*.txt' } },
        ],
      },
      { text: 'child done' },
      { text: 'parent done' },
    ]);
    const run = await runCli(
      [
        ...['--scripted', script, '--cwd', workspace, '-p', 'go', '--mode', 'read-only'],
        ...['--deny', 'Read(secret.txt)'],
      ],
      { cwd: dir },
    );
    // (bash's `cat` is the sandbox's to hide, not a path rule's: see the README.)
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(
      /│ helper ✗ read_file: Permission denied: Denied by rule "Read\(secret.txt\)"/,
    );
    expect(run.stderr).toContain('│ helper ✓ search: No matches found.');
    expect(run.stderr).toMatch(/│ helper ✓ glob: open\.txt/);
    expect(run.stderr).not.toMatch(/the password is|hunter2 \(|│ helper ✓ glob:.*secret/);
  });

  it("the user's PreToolUse hook sees and blocks a child's call", async () => {
    const { dir, workspace } = await withHelper('agent-cli-child-hook-');
    const home = join(dir, 'home');
    await mkdir(home);
    const hook = join(dir, 'no-touch.mjs');
    await writeFile(
      hook,
      `let input = ''; process.stdin.on('data', (c) => { input += c; });
process.stdin.on('end', () => {
  const event = JSON.parse(input);
  if (event.tool_input.command.includes('touch')) { process.stderr.write('no touching, sub-agents included'); process.exit(2); }
});`,
    );
    await writeFile(
      join(home, 'settings.json'),
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
    const script = await writeScript(dir, delegating(touch('made')));
    const run = await runCli(
      [
        ...['--scripted', script, '--cwd', workspace, '-p', 'go'],
        ...['--mode', 'full-access', '--sandbox', 'off', '--trust'],
      ],
      { cwd: dir, env: cleanEnv({ AGENT_HOME: home }) },
    );
    expect(run.stderr).toMatch(/│ helper ✗ bash.*no touching, sub-agents included/);
    expect(existsSync(join(workspace, 'made'))).toBe(false);
  });
});

describe('stream-json shows what a sub-agent did', () => {
  it("a child's calls and results are tool-start / tool-result lines naming the chain and the call that started it", async () => {
    const { dir, workspace } = await withHelper('agent-cli-child-json-');
    await writeFile(join(workspace, 'notes.txt'), 'remember the milk\n');
    const script = await writeScript(dir, [
      { toolCalls: [{ name: 'helper', arguments: { task: 'read the notes' } }] },
      { toolCalls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }] },
      { text: 'child done' },
      { text: 'parent done' },
    ]);
    const run = await runCli(
      [
        ...['--scripted', script, '--cwd', workspace, '-p', 'go', '--mode', 'read-only'],
        ...['--output-format', 'stream-json'],
      ],
      { cwd: dir },
    );
    expect(run.code).toBe(0);
    const lines = run.stdout
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => streamJsonEventSchema.parse(JSON.parse(line)))
      .filter((event) => event.type === 'tool-start' || event.type === 'tool-result')
      .map((event) => ({
        type: event.type,
        toolName: event.toolName,
        agentPath: event.agentPath,
        parentToolCallId: event.parentToolCallId,
        ...(event.type === 'tool-result' ? { text: event.text.split('\n')[0] } : {}),
      }));
    expect(lines).toEqual([
      { type: 'tool-start', toolName: 'helper', agentPath: undefined, parentToolCallId: undefined },
      {
        type: 'tool-start',
        toolName: 'read_file',
        agentPath: ['helper'],
        parentToolCallId: 'call_1_0',
      },
      {
        type: 'tool-result',
        toolName: 'read_file',
        agentPath: ['helper'],
        parentToolCallId: 'call_1_0',
        text: expect.stringContaining('remember the milk'),
      },
      {
        type: 'tool-result',
        toolName: 'helper',
        agentPath: undefined,
        parentToolCallId: undefined,
        text: 'child done',
      },
    ]);
  });
});

describe('a child in the terminal (tmux)', () => {
  it('the question says which sub-agent asks; a denial holds', async (context) => {
    skipWithout('tmux')(context);
    const folder = await withHelper('agent-cli-child-asks-');
    const repl = await harness.start({
      ...folder,
      script: { steps: delegating(touch('made')) },
      // The sub-agent itself is read-only (its calls are what is asked about).
      args: ['--mode', 'read-only'],
    });
    await repl.waitForPrompt();
    repl.submit('go');
    // The answer keys are drawn a moment after the question (keys before are not an answer).
    await repl.waitForText('Allow bash: touch made? [y] once');
    expect(repl.screen()).toContain(
      'Sub-agent helper asks (an "always" counts for the whole session): Allow bash: touch made?',
    );
    repl.tmux.press('n');
    await repl.waitForText('parent done');
    expect(existsSync(join(folder.workspace, 'made'))).toBe(false);
  });
});

describe("a child's bash runs in the session's sandbox", () => {
  it('full-access, a command writing outside the workspace fails', async (context) => {
    skipWithout('bwrap')(context);
    const { dir, workspace } = await withHelper('agent-cli-child-sandbox-');
    const outside = join(dir, 'outside');
    await mkdir(outside);
    const script = await writeScript(dir, delegating(touch(join(outside, 'escaped'))));
    const run = await runCli(
      ['--scripted', script, '--cwd', workspace, '-p', 'go', '--mode', 'full-access'],
      { cwd: dir },
    );
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(
      /│ helper ✗ bash: .*(Read-only file system|Permission denied|No such file or directory)/,
    );
    expect(existsSync(join(outside, 'escaped'))).toBe(false);
  });
});

describe("a child's answer is the session's (tmux)", () => {
  it('two children asking at once get one question each, in turn; each answer goes to its own call', async (context) => {
    skipWithout('tmux')(context);
    const folder = await withHelper('agent-cli-children-ask-');
    const repl = await harness.start({
      ...folder,
      script: {
        steps: [
          {
            toolCalls: [
              { name: 'helper', arguments: { task: 'one' } },
              { name: 'helper', arguments: { task: 'two' } },
            ],
          },
          { toolCalls: [touch('first')] },
          { toolCalls: [touch('second')] },
          { text: 'child done' },
          { text: 'child done' },
          { text: 'parent done' },
        ],
      },
      args: ['--mode', 'read-only'],
    });
    await repl.waitForPrompt();
    repl.submit('go');
    await repl.waitForText('[y] once');
    // One question at a time: the other child's waits until this one is answered.
    expect(repl.screen().split('Sub-agent helper asks')).toHaveLength(2);
    const asked = /Allow bash: touch (first|second)\?/.exec(repl.screen())?.[1];
    const other = asked === 'first' ? 'second' : 'first';
    repl.tmux.press('y');
    await repl.waitForText(`Allow bash: touch ${other}?`);
    await repl.waitForText('[y] once', 2);
    repl.tmux.press('n');
    await repl.waitForText('parent done');
    const screen = repl.screen();
    expect(screen.split('Sub-agent helper asks')).toHaveLength(3);
    // Each question stayed whole on its line, its answer after its keys: the first child's lines,
    // printed while the second question waited, once cleared that line (the spinner's \r\x1b[K).
    expect(screen).toContain(
      `Allow bash: touch ${other}? [y] once  [a] always  [n] deny  [v] never → deny`,
    );
    expect(existsSync(join(folder.workspace, asked ?? 'first'))).toBe(true);
    expect(existsSync(join(folder.workspace, other))).toBe(false);
  });

  it('"never" answered to a child holds for the parent: its same call is denied without a question', async (context) => {
    skipWithout('tmux')(context);
    const folder = await withHelper('agent-cli-child-never-');
    const repl = await harness.start({
      ...folder,
      script: {
        steps: [
          { toolCalls: [{ name: 'helper', arguments: { task: 'do it' } }] },
          { toolCalls: [touch('made')] },
          { text: 'child done' },
          { toolCalls: [touch('made')] },
          { text: 'parent done' },
        ],
      },
      args: ['--mode', 'read-only'],
    });
    await repl.waitForPrompt();
    repl.submit('go');
    await repl.waitForText('Sub-agent helper asks');
    await repl.waitForText('[y] once');
    repl.tmux.press('v');
    await repl.waitForText('parent done');
    const screen = repl.screen();
    expect(screen.split('Allow bash: touch made?')).toHaveLength(2);
    expect(screen).toMatch(/^ {2}✗ bash \[denied\]/m);
    expect(existsSync(join(folder.workspace, 'made'))).toBe(false);
  });
});

describe('interrupting the session', () => {
  it("stops the child's running command", async () => {
    const { dir, workspace } = await withHelper('agent-cli-child-abort-');
    const pidFile = join(workspace, 'pid');
    const script = await writeScript(
      dir,
      // Unsandboxed, so the pid is the host's; exec keeps it for the sleep.
      delegating({ name: 'bash', arguments: { command: 'echo $$ > pid; exec sleep 60' } }),
    );
    const child = spawn(
      process.execPath,
      [
        cliPath,
        ...['--scripted', script, '--cwd', workspace, '-p', 'go'],
        ...['--mode', 'full-access', '--sandbox', 'off'],
      ],
      { cwd: dir, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    const pid = await vi.waitFor(
      async () => {
        const text = await readFile(pidFile, 'utf8');
        expect(text).toMatch(/^\d+\n$/);
        return Number(text);
      },
      { timeout: 20_000 },
    );
    expect(isRunning(pid)).toBe(true);
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(stderr).toContain('│ helper ✗ bash: Cancelled');
    // Gone (once init has reaped it), not left sleeping after the session.
    await vi.waitFor(() => expect(isRunning(pid)).toBe(false), { timeout: 5_000 });
  });
});

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("a run's budget counts its sub-agents", () => {
  it('--max-turns N stops the run after N model calls in all, a child’s included', async () => {
    const { dir, workspace } = await withHelper('agent-cli-child-turns-');
    const reads = Array.from({ length: 8 }, (_, index) => ({
      toolCalls: [{ name: 'read_file', arguments: { path: `missing-${index}` } }],
    }));
    const script = await writeScript(dir, [
      { toolCalls: [{ name: 'helper', arguments: { task: 'read them all' } }] },
      ...reads,
      { text: 'child done' },
      { text: 'parent done' },
    ]);
    const argv = ['--scripted', script, '--cwd', workspace, '-p', 'go', '--mode', 'read-only'];
    const run = await runCli([...argv, '--max-turns', '3'], { cwd: dir });
    expect(run.code).toBe(3);
    // The parent's call of helper, then two turns of the child: three model calls.
    expect(run.stderr.match(/│ helper → read_file/g)).toHaveLength(2);
    expect(run.stderr).toContain('it ran out of budget (the budget of 3 model calls is spent)');
    expect(run.stderr).toContain('(stopped: the budget of 3 model calls is spent)');
    expect(run.stdout).not.toContain('parent done');
    // Without the flag, the child's turns are its own (the defaults), and the run completes.
    const free = await runCli(argv, { cwd: dir });
    expect(free.code).toBe(0);
    expect(free.stdout).toContain('parent done');
  });

  it("the run's usage (text and json) includes its sub-agents'", async () => {
    const { dir, workspace } = await withHelper('agent-cli-child-usage-');
    const parent = { input: 100, output: 10 };
    const child = { input: 7, output: 3 };
    const script = await writeScript(dir, [
      { toolCalls: [{ name: 'helper', arguments: { task: 'look' } }], usage: parent },
      { toolCalls: [{ name: 'read_file', arguments: { path: 'nothing' } }], usage: child },
      { text: 'child done', usage: child },
      { text: 'parent done', usage: parent },
    ]);
    const argv = ['--scripted', script, '--cwd', workspace, '-p', 'go', '--mode', 'read-only'];
    const text = await runCli(argv, { cwd: dir });
    expect(text.code).toBe(0);
    expect(text.stderr).toContain('(214 tokens in, 26 out, sub-agents included)');
    const json = await runCli([...argv, '--output-format', 'json'], { cwd: dir });
    expect(JSON.parse(json.stdout).usage).toMatchObject({ input: 214, output: 26 });
  });
});

describe("a child's report", () => {
  it("is clipped before it reaches the parent's model, however much the child wrote", async () => {
    const { dir, workspace } = await withHelper('agent-cli-child-flood-');
    const flood = `${'flood '.repeat(60_000)}THE END`;
    const script = await writeScript(dir, [
      { toolCalls: [{ id: 'call_helper', name: 'helper', arguments: { task: 'write a lot' } }] },
      { text: flood },
      { text: 'parent done' },
    ]);
    const run = await runCli(
      [
        ...['--scripted', script, '--cwd', workspace, '-p', 'go', '--mode', 'read-only'],
        ...['--output-format', 'stream-json'],
      ],
      { cwd: dir },
    );
    expect(run.code).toBe(0);
    const result = run.stdout
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => streamJsonEventSchema.parse(JSON.parse(line)))
      .find((event) => event.type === 'tool-result' && event.toolCallId === 'call_helper');
    if (result?.type !== 'tool-result') throw new Error(`no result of helper in ${run.stdout}`);
    expect(result.text.length).toBeLessThan(41_000);
    expect(result.text).toMatch(/\[… \d+ of 360007 characters clipped …\]/);
    // Head and tail kept: the report's start and its end.
    expect(result.text.startsWith('flood flood')).toBe(true);
    expect(result.text.endsWith('THE END')).toBe(true);
  });
});
