// What the CLI does when an MCP server turns to it: elicitation and sampling asked in a real
// terminal (tmux) against the reference "everything" server; without a terminal (-p, stdin not a
// TTY) they are declined and refused, and the transcript says so; roots are the workspace; log
// messages are shown from the level chosen.
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { unfenceUntrusted } from '@agent/core';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  appDir,
  assertBuilt,
  cleanEnv,
  cliPath,
  runCli,
  screenWaitOptions,
  TmuxSession,
  tempDir,
  writeScript,
} from '../testing/test-support.js';
import { askedDuring } from './mcp-asked-by.js';
import { parseFieldAnswer } from './mcp-form-fields.js';
import { looksSecret } from './mcp-request-checks.js';

const sessions: TmuxSession[] = [];
const cleanups: (() => Promise<void>)[] = [];
beforeAll(() => {
  assertBuilt();
});
afterEach(async () => {
  for (const session of sessions.splice(0)) session.kill();
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const everything = join(
  appDir,
  'node_modules/@modelcontextprotocol/server-everything/dist/index.js',
);
const fixture = join(appDir, 'src/__fixtures__/roots-log-server.mjs');
const hostileRequests = join(appDir, 'src/__fixtures__/hostile-requests-server.mjs');
const waitOptions = screenWaitOptions;

/** A workspace, an MCP config with the everything server and the roots/log fixture, a script. */
async function setup(steps: unknown[]) {
  const dir = await tempDir('agent-cli-mcp-');
  cleanups.push(dir.dispose);
  const workspace = join(dir.path, 'ws');
  await mkdir(workspace);
  const config = join(dir.path, 'mcp.json');
  await writeFile(
    config,
    JSON.stringify({
      mcpServers: {
        everything: { command: process.execPath, args: [everything, 'stdio'] },
        fixture: { command: process.execPath, args: [fixture] },
      },
    }),
  );
  const script = await writeScript(dir.path, steps);
  const saved = join(dir.path, 'conversation.json');
  const args = [
    '--scripted',
    script,
    '--cwd',
    workspace,
    '--mcp-config',
    config,
    '--mode',
    'full-access',
    '--save',
    saved,
  ];
  /**
   * The text of each tool result of the saved conversation, by tool name: what the server said,
   * with the untrusted-content note and markers around it taken off.
   */
  const results = async () => {
    const { messages } = JSON.parse(await readFile(saved, 'utf8')) as {
      messages: { role: string; toolName?: string; content: { text?: string }[] }[];
    };
    return Object.fromEntries(
      messages
        .filter((message) => message.role === 'toolResult')
        .map((message) => [
          message.toolName,
          message.content.map((part) => serverWords(part.text ?? '')).join('\n'),
        ]),
    ) as Record<string, string>;
  };
  return { dir: dir.path, workspace, args, saved, results };
}

/** A fenced result part's inside (the note before the first part dropped); other text as it is. */
function serverWords(text: string): string {
  const unnoted = text.startsWith('Untrusted: ') ? text.split('\n').slice(2).join('\n') : text;
  return unfenceUntrusted(unnoted)?.inner ?? text;
}

/**
 * A fake browser, outside the folder the CLI runs in: one there is refused (the workspace could
 * have planted it; see browser-program.test.ts), and nothing would be opened.
 */
async function browserProgram(script: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'agent-cli-browser-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const browser = join(dir, 'browser.sh');
  await writeFile(browser, script);
  await chmod(browser, 0o755);
  return browser;
}

function startTmux(args: string[], cwd: string, env = cleanEnv()) {
  const tmux = TmuxSession.start([process.execPath, cliPath, ...args], { cwd, env });
  sessions.push(tmux);
  /** Waits until the screen shows `text` (`count` times). */
  const waitForText = (text: string, count = 1) => tmux.waitForText(text, count);
  const waitForExit = () => tmux.waitForExit();
  return { tmux, waitForText, waitForExit };
}

describe('MCP interactions in a terminal (tmux)', () => {
  beforeEach(skipWithout('tmux'));
  it('elicitation: the form is asked field by field, with types, defaults and choices', async () => {
    const run = await setup([
      { toolCalls: [{ name: 'everything__trigger-elicitation-request', arguments: {} }] },
      { text: 'Thanks for the details.' },
    ]);
    const { tmux, waitForText, waitForExit } = startTmux([...run.args, '-p', 'ask me'], run.dir);
    await waitForText(
      'mcp everything asks for input: Please provide inputs for the following fields:',
    );
    await waitForText('Answer? [y] fill in  [n] decline  [c] cancel');
    tmux.type('y');
    // A required field cannot be left empty.
    await waitForText('String — Your full, legal name (text, required):');
    tmux.press('Enter');
    await waitForText('✗ required');
    tmux.type('Ada Lovelace');
    tmux.press('Enter');
    await waitForText('Boolean — Agree to the terms and conditions (y/n):');
    tmux.type('y');
    tmux.press('Enter');
    await waitForText('(text [It was a dark and stormy night.]):');
    tmux.press('Enter');
    await waitForText('(email):');
    tmux.type('not-an-email');
    tmux.press('Enter');
    await waitForText('✗ type an email address');
    tmux.type('ada@example.com');
    tmux.press('Enter');
    await waitForText('(uri):');
    tmux.press('Enter');
    await waitForText('(date):');
    tmux.press('Enter');
    await waitForText('(integer 1–100 [42]):');
    tmux.type('500');
    tmux.press('Enter');
    await waitForText('✗ at most 100');
    tmux.type('7');
    tmux.press('Enter');
    await waitForText('(number 0–1000 [3.14]):');
    tmux.press('Enter');
    await waitForText('1) Monica  2) Rachel');
    tmux.type('3');
    tmux.press('Enter');
    await waitForText('any of, by number or value, comma-separated: 1) Guitar');
    tmux.type('Piano, 3');
    tmux.press('Enter');
    await waitForText('1) Superman [hero-1]');
    tmux.press('Enter');
    await waitForText('1) Tuna [fish-1]');
    tmux.press('Enter');
    await waitForText('1) Cats [pet-1]');
    tmux.type('Dogs');
    tmux.press('Enter');
    await waitForText('→ sent 11 field(s) to everything');
    expect(await waitForExit()).toBe(0);
    const result = (await run.results())['everything__trigger-elicitation-request'] ?? '';
    expect(result).toContain('User provided the requested information');
    const raw = JSON.parse(result.slice(result.indexOf('{'))) as { content: unknown };
    expect(raw.content).toEqual({
      name: 'Ada Lovelace',
      check: true,
      firstLine: 'It was a dark and stormy night.',
      email: 'ada@example.com',
      integer: 7,
      number: 3.14,
      untitledSingleSelectEnum: 'Joey',
      untitledMultipleSelectEnum: ['Piano', 'Violin'],
      titledSingleSelectEnum: 'hero-1',
      titledMultipleSelectEnum: ['fish-1'],
      legacyTitledEnum: 'pet-2',
    });
  });

  it('elicitation: "n" declines, and URL mode shows the URL and opens the browser', async () => {
    const run = await setup([
      {
        toolCalls: [
          { name: 'everything__trigger-elicitation-request', arguments: {} },
          {
            name: 'everything__trigger-url-elicitation',
            arguments: { url: 'https://example.com/connect?x=1', message: 'Connect your account' },
          },
        ],
      },
      { text: 'OK.' },
    ]);
    // A fake browser that records what it was asked to open.
    const opened = join(run.dir, 'opened.txt');
    const browser = await browserProgram(`#!/bin/sh\necho "$1" > '${opened}'\n`);
    const { tmux, waitForText, waitForExit } = startTmux(
      [...run.args, '-p', 'ask me'],
      run.dir,
      cleanEnv({ BROWSER: browser }),
    );
    await waitForText('Answer? [y] fill in  [n] decline  [c] cancel');
    tmux.type('n');
    await waitForText('→ declined');
    await waitForText('mcp everything asks you to open a URL: Connect your account');
    await waitForText('https://example.com/connect?x=1');
    await waitForText('(it opens example.com)');
    // The answer keys are drawn a moment after the question (keys before are not an answer).
    await waitForText('Open it? [y] open');
    tmux.type('y');
    await waitForText('→ opened in your browser: https://example.com/connect?x=1');
    expect(await waitForExit()).toBe(0);
    await vi.waitFor(() => expect(existsSync(opened)).toBe(true), waitOptions);
    expect((await readFile(opened, 'utf8')).trim()).toBe('https://example.com/connect?x=1');
    const results = await run.results();
    expect(results['everything__trigger-elicitation-request']).toContain('declined');
    expect(results['everything__trigger-url-elicitation']).toContain('accept');
  });

  // Before: only the URL was shown; a long one (or an IDN look-alike) hid where it leads.
  it('elicitation: URL mode names the host the URL opens (a user name before @ is not the host)', async () => {
    const url = `https://accounts.google.com@evil.example/${'a'.repeat(300)}?continue=https://accounts.google.com/`;
    const run = await setup([
      {
        toolCalls: [
          { name: 'everything__trigger-url-elicitation', arguments: { url, message: 'Sign in' } },
        ],
      },
      { text: 'OK.' },
    ]);
    const { tmux, waitForText, waitForExit } = startTmux([...run.args, '-p', 'go'], run.dir);
    await waitForText('(it opens evil.example)');
    await waitForText('Open it? [y] open');
    tmux.type('n');
    expect(await waitForExit()).toBe(0);
  });

  // Before: a "y" handed file:, smb:, javascript:… URLs to $BROWSER / xdg-open (a file: URL opens
  // the file with whatever program handles it; a .desktop file runs its command).
  it('elicitation: a URL that is not a web address is declined unasked and never opened', async () => {
    const urls = [
      'file:///etc/passwd',
      'file:///tmp/run-me.desktop',
      'smb://attacker.example/share',
      'javascript:alert(document.cookie)',
      'ssh://attacker.example/',
      'ftp://attacker.example/x',
      'vscode://command/workbench.action.terminal.new',
    ];
    const run = await setup([
      {
        toolCalls: urls.map((url) => ({
          name: 'everything__trigger-url-elicitation',
          arguments: { url, message: `Open ${url}` },
        })),
      },
      { text: 'OK.' },
    ]);
    const opened = join(run.dir, 'opened.txt');
    const browser = await browserProgram(`#!/bin/sh\necho "$1" >> '${opened}'\n`);
    const { tmux, waitForExit } = startTmux(
      [...run.args, '-p', 'open them'],
      run.dir,
      cleanEnv({ BROWSER: browser }),
    );
    expect(await waitForExit()).toBe(0);
    const screen = tmux.capture();
    expect(screen).not.toContain('Open it? [y] open');
    for (const scheme of ['file:', 'smb:', 'javascript:', 'ssh:', 'ftp:', 'vscode:'])
      expect(screen).toContain(
        `asked you to open a URL that is not a web address (${scheme}): declined, not opened`,
      );
    expect(existsSync(opened)).toBe(false);
    const { messages } = JSON.parse(await readFile(run.saved, 'utf8')) as {
      messages: { role: string; content: { text?: string }[] }[];
    };
    const answers = messages
      .filter((message) => message.role === 'toolResult')
      .map((message) => message.content.map((part) => serverWords(part.text ?? '')).join('\n'));
    expect(answers).toHaveLength(urls.length);
    for (const answer of answers) expect(answer).toMatch(/declin/i);
  });

  it('sampling: approved, answered by the session model, shown, approved again, sent back', async () => {
    const run = await setup([
      {
        toolCalls: [
          {
            name: 'everything__trigger-sampling-request',
            arguments: { prompt: 'Name a colour', maxTokens: 30 },
          },
        ],
      },
      // This turn answers the server's sampling request: the session's own (scripted) provider.
      { text: 'Ultramarine.' },
      { text: 'The server got its completion.' },
    ]);
    const { tmux, waitForText, waitForExit } = startTmux([...run.args, '-p', 'sample'], run.dir);
    await waitForText(
      'mcp everything asks scripted for a completion (up to 30 tokens; 1 message(s), ',
    );
    await waitForText('system: You are a helpful test server.');
    await waitForText('user: Resource trigger-sampling-request context: Name a colour');
    await waitForText('Run it? [y] run  [n] deny');
    tmux.type('y');
    await waitForText('scripted: Ultramarine.');
    await waitForText('Send it to everything? [y] send  [n] withhold');
    tmux.type('y');
    expect(await waitForExit()).toBe(0);
    const result = (await run.results())['everything__trigger-sampling-request'] ?? '';
    expect(result).toContain('LLM sampling result');
    expect(result).toContain('Ultramarine.');
    expect(tmux.capture()).toContain('The server got its completion.');
  });

  // Before: the question showed the last four messages only (what came before was sent unseen),
  // passed the server's maxTokens on as asked, and had no bound on what a server sends.
  it('sampling: earlier messages are counted, maxTokens is capped, a huge request is refused unasked', async () => {
    const run = await setup([
      {
        toolCalls: [
          { name: 'hostile__sample', arguments: { messages: 10, chars: 20, maxTokens: 1_000_000 } },
        ],
      },
      {
        toolCalls: [
          { name: 'hostile__sample', arguments: { messages: 1, chars: 300_000, maxTokens: 10 } },
          { name: 'hostile__sample', arguments: { messages: 5_000, chars: 50, maxTokens: 10 } },
        ],
      },
      { text: 'Done.' },
    ]);
    const config = JSON.parse(await readFile(join(run.dir, 'mcp.json'), 'utf8')) as {
      mcpServers: Record<string, unknown>;
    };
    config.mcpServers.hostile = { command: process.execPath, args: [hostileRequests] };
    await writeFile(join(run.dir, 'mcp.json'), JSON.stringify(config));
    const { tmux, waitForText, waitForExit } = startTmux([...run.args, '-p', 'sample'], run.dir);
    await waitForText(
      'mcp hostile asks scripted for a completion (up to 4,096 tokens (it asked for 1,000,000); 10 message(s), ',
    );
    await waitForText('… 6 earlier message(s) not shown');
    await waitForText('user: m9: xxxxxxxxxxxxxxxxxxxx');
    // The question's own line comes last: a key typed before it shows is not an answer.
    await waitForText('Run it? [y] run');
    tmux.type('n');
    expect(await waitForExit()).toBe(0);
    const screen = tmux.capture();
    expect(screen).toMatch(
      /mcp hostile asked the model for a completion: refused, its 1 message\(s\) hold 300,\d{3} characters, over the 200,000 a server may send/,
    );
    expect(screen).toMatch(/its 5000 message\(s\) hold \d{3},\d{3} characters/);
    expect(screen.match(/Run it\? \[y\] run/g)).toHaveLength(1);
    expect(screen).toContain('[s] stop asking → denied\n');
    const { messages } = JSON.parse(await readFile(run.saved, 'utf8')) as {
      messages: { role: string; content: { text?: string }[] }[];
    };
    const answers = messages
      .filter((message) => message.role === 'toolResult')
      .map((message) => message.content.map((part) => serverWords(part.text ?? '')).join('\n'));
    expect(answers[0]).toContain('The user denied this sampling request');
    expect(answers[1]).toContain('Sampling refused by the client: its 1 message(s) hold 300,');
    expect(answers[2]).toContain('Sampling refused by the client: its 5000 message(s)');
  });

  // Before: a server could ask for input (an API key…) or a completion again and again, and each
  // time the user had to answer; "[s] stop asking" now declines the rest of the session unasked.
  it('"s" stops a server asking: its later elicitations and sampling requests are declined unasked', async () => {
    const run = await setup([
      { toolCalls: [{ name: 'nagger__nag', arguments: { times: 50 } }] },
      { text: 'Done.' },
    ]);
    const config = JSON.parse(await readFile(join(run.dir, 'mcp.json'), 'utf8')) as {
      mcpServers: Record<string, unknown>;
    };
    config.mcpServers = { nagger: { command: process.execPath, args: [hostileRequests] } };
    await writeFile(join(run.dir, 'mcp.json'), JSON.stringify(config));
    const { tmux, waitForText, waitForExit } = startTmux([...run.args, '-p', 'go'], run.dir);
    await waitForText('mcp nagger asks for input: Your API key, please');
    await waitForText('Answer? [y] fill in  [n] decline  [c] cancel  [s] stop asking');
    tmux.type('s');
    await waitForText('→ mcp nagger will not ask again this session');
    expect(await waitForExit()).toBe(0);
    const screen = tmux.capture();
    expect(screen.match(/Answer\? \[y\]/g)).toHaveLength(1);
    expect(screen).not.toContain('Run it?');
    expect((await run.results()).nagger__nag).toBe(
      'elicitation: {"decline":50}; sampling refused: 50',
    );
  });

  // Before: a form asking for an API key echoed it as typed, with no word on who gets it.
  it('a form field that looks like a secret: a warning naming the server, the typing not shown', async () => {
    const run = await setup([
      { toolCalls: [{ name: 'asker__nag', arguments: { times: 1 } }] },
      { text: 'Done.' },
    ]);
    await writeFile(
      join(run.dir, 'mcp.json'),
      JSON.stringify({
        mcpServers: { asker: { command: process.execPath, args: [hostileRequests] } },
      }),
    );
    const { tmux, waitForText, waitForExit } = startTmux([...run.args, '-p', 'go'], run.dir);
    await waitForText(
      '⚠ it asks for what looks like a secret (API key): MCP servers must not ask for secrets in a form, and what you type goes to asker (typing is not shown)',
    );
    await waitForText('Answer? [y] fill in');
    tmux.type('y');
    await waitForText('API key (text):');
    tmux.type('sk-very-secret-123');
    await waitForText('••••••••••••••••••');
    tmux.press('Enter');
    await waitForText('Run it? [y] run');
    tmux.type('n');
    expect(await waitForExit()).toBe(0);
    expect(tmux.capture()).not.toContain('sk-very-secret-123');
    expect((await run.results()).asker__nag).toBe('elicitation: {"accept":1}; sampling refused: 1');
  });

  // Before: a server that repeated the key typed into its form handed it to the model and the file.
  it('what the user typed into a secret field reaches the model and the session file as a marker', async () => {
    const run = await setup([
      { toolCalls: [{ name: 'asker__echo_key', arguments: {} }] },
      { text: 'Done.' },
    ]);
    await writeFile(
      join(run.dir, 'mcp.json'),
      JSON.stringify({
        mcpServers: { asker: { command: process.execPath, args: [hostileRequests] } },
      }),
    );
    // A home of its own: the shared one has pinned asker's tools without echo_key.
    const { tmux, waitForText, waitForExit } = startTmux(
      [...run.args, '-p', 'go'],
      run.dir,
      cleanEnv({ AGENT_HOME: join(run.dir, 'home') }),
    );
    await waitForText('typing is not shown)');
    await waitForText('Answer? [y] fill in');
    tmux.type('y');
    await waitForText('API key (text):');
    tmux.type('typed-secret-4f9a2c7e');
    await waitForText('•'.repeat('typed-secret-4f9a2c7e'.length));
    tmux.press('Enter');
    expect(await waitForExit()).toBe(0);
    expect((await run.results()).asker__echo_key).toBe(
      'logged in with [redacted:asker secret key]',
    );
    expect(await readFile(run.saved, 'utf8')).not.toContain('typed-secret-4f9a2c7e');
  });

  it('in the REPL too: sampling asked while the run goes, the conversation goes on', async () => {
    const run = await setup([
      {
        toolCalls: [
          { name: 'everything__trigger-sampling-request', arguments: { prompt: 'Pick a number' } },
        ],
      },
      { text: 'Seven.' },
      { text: 'The server has its number.' },
    ]);
    const { tmux, waitForText, waitForExit } = startTmux(run.args, run.dir);
    await waitForText('): built-in (');
    tmux.type('ask the server');
    tmux.press('Enter');
    await waitForText('Run it? [y] run  [n] deny');
    tmux.type('y');
    await waitForText('scripted: Seven.');
    await waitForText('[y] send  [n] withhold');
    tmux.type('y');
    await waitForText('The server has its number.');
    tmux.type('/exit');
    tmux.press('Enter');
    expect(await waitForExit()).toBe(0);
    expect((await run.results())['everything__trigger-sampling-request']).toContain('Seven.');
  });

  it('sampling: "n" denies, and the server gets an error', async () => {
    const run = await setup([
      {
        toolCalls: [{ name: 'everything__trigger-sampling-request', arguments: { prompt: 'x' } }],
      },
      { text: 'Denied, fine.' },
    ]);
    const { tmux, waitForText, waitForExit } = startTmux([...run.args, '-p', 'sample'], run.dir);
    await waitForText('Run it? [y] run  [n] deny');
    tmux.type('n');
    expect(await waitForExit()).toBe(0);
    expect((await run.results())['everything__trigger-sampling-request']).toContain(
      'The user denied this sampling request',
    );
  });
});

/** An agent file `helper` in the workspace; the sub-agent may use every tool of the session. */
async function addHelper(workspace: string) {
  await mkdir(join(workspace, '.agent', 'agents'), { recursive: true });
  await mkdir(join(workspace, '.git'), { recursive: true });
  await writeFile(
    join(workspace, '.agent', 'agents', 'helper.md'),
    '---\nname: helper\ndescription: Does what it is told.\n---\nDo it.\n',
  );
}

/** The parent hands `helper` a task; the child makes `calls`, then both finish. */
const throughHelper = (calls: { name: string; arguments: Record<string, unknown> }[]) => [
  { toolCalls: [{ name: 'helper', arguments: { task: 'do it' } }] },
  { toolCalls: calls },
  { text: 'child done' },
  { text: 'parent done' },
];

describe('a request during a sub-agent’s call names the sub-agent', () => {
  it.each([
    [[], ''],
    [[{ agentPath: [], toolName: 'srv__a' }], ''],
    [[{ agentPath: ['helper'], toolName: 'srv__a' }], "Sub-agent helper's call of srv__a: "],
    [
      [{ agentPath: ['helper', 'researcher'], toolName: 'srv__a' }],
      "Sub-agent helper › researcher's call of srv__a: ",
    ],
    [
      [
        { agentPath: ['helper'], toolName: 'srv__a' },
        { agentPath: ['helper'], toolName: 'srv__b' },
        { agentPath: ['helper'], toolName: 'srv__a' },
      ],
      "Sub-agent helper's calls of srv__a, srv__b: ",
    ],
    [
      [
        { agentPath: [], toolName: 'srv__a' },
        { agentPath: ['helper'], toolName: 'srv__b' },
      ],
      'During calls of the main agent (srv__a) and sub-agent helper (srv__b): ',
    ],
    [
      [{ agentPath: ['evil\u001b[2Jname\nnext'], toolName: 'srv__\u0007x' }],
      "Sub-agent evil\\x1b[2Jname\\nnext's call of srv__\\x07x: ",
    ],
    [
      ['a', 'b', 'c', 'd', 'e'].map((name) => ({ agentPath: ['helper'], toolName: name })),
      "Sub-agent helper's calls of a, b, c and 2 more: ",
    ],
  ])('%j → %j', (callers, expected) => {
    expect(askedDuring(callers)).toBe(expected);
  });

  it('-p: the declined elicitation and the refused sampling say which sub-agent’s call asked', async () => {
    const run = await setup(
      throughHelper([
        { name: 'everything__trigger-elicitation-request', arguments: {} },
        { name: 'everything__trigger-sampling-request', arguments: { prompt: 'x' } },
      ]),
    );
    await addHelper(run.workspace);
    const { code, stderr } = await runCli([...run.args, '-p', 'go'], { cwd: run.dir });
    expect(code).toBe(0);
    expect(stderr).toContain(
      "Sub-agent helper's call of everything__trigger-elicitation-request: mcp everything asked for input",
    );
    expect(stderr).toContain(
      "Sub-agent helper's call of everything__trigger-sampling-request: mcp everything asked the model for a completion: refused",
    );
  });

  it('in a terminal: the question names the sub-agent; the main agent’s own does not', async () => {
    const run = await setup([
      { toolCalls: [{ name: 'everything__trigger-elicitation-request', arguments: {} }] },
      ...throughHelper([{ name: 'everything__trigger-elicitation-request', arguments: {} }]),
    ]);
    await addHelper(run.workspace);
    const { tmux, waitForText, waitForExit } = startTmux([...run.args, '-p', 'ask me'], run.dir);
    await waitForText('Answer? [y] fill in  [n] decline  [c] cancel');
    expect(tmux.capture()).not.toContain("Sub-agent helper's call");
    tmux.type('n');
    await waitForText(
      "Sub-agent helper's call of everything__trigger-elicitation-request: mcp everything asks for input",
    );
    await waitForText('Answer? [y] fill in', 2);
    tmux.type('n');
    expect(await waitForExit()).toBe(0);
  });
});

describe('MCP interactions without a terminal', () => {
  it('-p with stdin not a TTY: elicitation declined, sampling refused, saying so; roots = the trusted workspace; logs from warning', async () => {
    const run = await setup([
      {
        toolCalls: [
          { name: 'everything__trigger-elicitation-request', arguments: {} },
          { name: 'everything__trigger-sampling-request', arguments: { prompt: 'x' } },
          { name: 'fixture__workspace', arguments: {} },
        ],
      },
      { text: 'Done.' },
    ]);
    // Trusted: in a folder not trusted a server outside the sandbox is listed no roots
    // (session/mcp-untrusted-sandbox.test.ts).
    const { code, stderr } = await runCli([...run.args, '-p', 'go', '--trust'], { cwd: run.dir });
    expect(code).toBe(0);
    expect(stderr).toContain(
      'mcp everything asked for input ("Please provide inputs for the following fields:"): declined, this run is not interactive (no terminal to ask on)',
    );
    expect(stderr).toContain(
      'mcp everything asked the model for a completion: refused, this run is not interactive (nobody to approve it)',
    );
    expect(stderr).toContain('mcp fixture [warning] fixture: listed 1 root(s)');
    expect(stderr).not.toContain('an info message');
    const results = await run.results();
    expect(results['everything__trigger-elicitation-request']).toContain('declined');
    expect(results['everything__trigger-sampling-request']).toContain('not interactive');
    // A URL: a space in the path is %20 (TMPDIR="/tmp/my tmp").
    expect(results.fixture__workspace).toBe(`roots: ${pathToFileURL(run.workspace).href}`);
  });

  it("-p: --mcp-log-level debug shows a server's info messages; off shows none", async () => {
    const run = await setup([
      { toolCalls: [{ name: 'fixture__workspace', arguments: {} }] },
      { text: 'Done.' },
    ]);
    const verbose = await runCli([...run.args, '-p', 'go', '--mcp-log-level', 'debug'], {
      cwd: run.dir,
    });
    expect(verbose.stderr).toContain('mcp fixture [info] fixture: an info message');
    const quiet = await runCli([...run.args, '-p', 'go', '--mcp-log-level', 'off'], {
      cwd: run.dir,
    });
    expect(quiet.stderr).not.toContain('mcp fixture [');
  });
});

describe('a server that floods the terminal', () => {
  // Before: 2,000 log messages, 2,000 garbage stdout lines and 2,000 answers to requests never
  // made gave 6,000 lines on stderr, one each.
  it('its log messages and its protocol problems are bounded, and the user is told', async () => {
    const run = await setup([
      { toolCalls: [{ name: 'flooder__flood', arguments: { count: 2000 } }] },
      { text: 'Done.' },
    ]);
    const config = JSON.parse(await readFile(join(run.dir, 'mcp.json'), 'utf8')) as {
      mcpServers: Record<string, unknown>;
    };
    config.mcpServers = { flooder: { command: process.execPath, args: [hostileRequests] } };
    await writeFile(join(run.dir, 'mcp.json'), JSON.stringify(config));
    const { code, stderr } = await runCli([...run.args, '-p', 'go'], { cwd: run.dir });
    expect(code).toBe(0);
    const lines = stderr.split('\n');
    expect(lines.length).toBeLessThan(120);
    expect(stderr).toContain(
      "… mcp flooder's log sends too many lines; the next are counted, not shown",
    );
    // Its protocol problems (garbage lines, answers to requests never made) are thinned where
    // they are found (@agent/tools-mcp: the first few of each kind, then every tenfold, counted).
    const problems = lines.filter((line) => line.startsWith('mcp flooder: MCP server'));
    expect(problems.length).toBeLessThan(30);
    expect(stderr).toMatch(
      /"garbage 999" is not valid JSON \(1,000 like this so far; only the first 3/,
    );
    expect(stderr).toMatch(/"id":900999.*\(1,000 like this so far/);
    expect(
      lines.filter((line) => line.startsWith('mcp flooder [warning] flood: log ')).length,
    ).toBeGreaterThanOrEqual(20);
    expect((await run.results()).flooder__flood).toBe('flooded');
  });

  // Before: 3,000 progress notifications were 3,000 lines on stderr.
  it('its progress notifications are passed on a few times a second, the last one shown', async () => {
    const run = await setup([
      { toolCalls: [{ name: 'progressor__progress', arguments: { count: 3000 } }] },
      { text: 'Done.' },
    ]);
    await writeFile(
      join(run.dir, 'mcp.json'),
      JSON.stringify({
        mcpServers: { progressor: { command: process.execPath, args: [hostileRequests] } },
      }),
    );
    const { code, stderr } = await runCli([...run.args, '-p', 'go'], { cwd: run.dir });
    expect(code).toBe(0);
    const progressLines = stderr
      .split('\n')
      .filter((line) => line.includes('… progressor__progress: step '));
    expect(progressLines.length).toBeGreaterThan(0);
    expect(progressLines.length).toBeLessThan(100);
    expect(progressLines.at(-1)).toContain('step 3000');
    expect((await run.results()).progressor__progress).toBe('progressed');
  });
});

describe('form answers', () => {
  it('parses and checks each kind of field', () => {
    expect(parseFieldAnswer({ type: 'integer', minimum: 1 }, '0')).toEqual({ error: 'at least 1' });
    expect(parseFieldAnswer({ type: 'integer' }, '2.5')).toEqual({ error: 'type a whole number' });
    expect(parseFieldAnswer({ type: 'number' }, '2.5')).toEqual({ value: 2.5 });
    expect(parseFieldAnswer({ type: 'boolean' }, 'No')).toEqual({ value: false });
    expect(parseFieldAnswer({ type: 'string', format: 'date' }, '2026-11-24')).toEqual({
      value: '2026-11-24',
    });
    expect(parseFieldAnswer({ type: 'string', enum: ['a', 'b'] }, '2')).toEqual({ value: 'b' });
    expect(parseFieldAnswer({ type: 'string', enum: ['a', 'b'] }, 'c')).toEqual({
      error: 'type one of the numbers or values shown',
    });
    expect(
      parseFieldAnswer({ type: 'array', items: { enum: ['a', 'b', 'c'] }, maxItems: 2 }, 'a, b, c'),
    ).toEqual({ error: 'choose at most 2' });
    expect(parseFieldAnswer({ type: 'string', minLength: 3 }, 'ab')).toEqual({
      error: 'at least 3 characters',
    });
  });
});

describe('secret-looking fields', () => {
  it.each([
    ['apiKey', true],
    ['github_token', true],
    ['client-secret', true],
    ['Password', true],
    ['pin', true],
    ['footprint', false],
    ['passage', false],
    ['name', false],
    ['option', false],
  ])('%s → %s', (name, secret) => {
    expect(looksSecret(name, {})).toBe(secret);
  });
});
