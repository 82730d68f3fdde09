import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { messagesServer, type Turn } from '../testing/messages-server.js';
import { assertBuilt, cleanEnv, runCli, tempDir } from '../testing/test-support.js';

// Red team of "secrets stay secret", round four: each test is a way a credential the CLI holds
// reached the model (the request bodies a local Messages server keeps) or a file, with a real CLI.

beforeAll(assertBuilt);
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const providerKey = `sk-ant-api03-${'xY9_'.repeat(20)}`;

async function folders() {
  const dir = await tempDir('agent-cli-secrets-red-team-');
  cleanups.push(dir.dispose);
  const workspace = join(dir.path, 'ws');
  const home = join(dir.path, 'home');
  await mkdir(workspace);
  await mkdir(home);
  return { dir: dir.path, workspace, home };
}

/** Runs `-p go` against a Messages server that plays `turns`; what the model was sent, and the run. */
async function runTurns(
  turns: readonly Turn[],
  options: { workspace: string; home: string; args?: string[]; env?: Record<string, string> },
) {
  const server = await messagesServer(turns, cleanups);
  const saved = join(options.home, 'saved.json');
  const run = await runCli(
    [
      '-p',
      'go',
      '--provider',
      'anthropic',
      '--cwd',
      options.workspace,
      '--save',
      saved,
      ...(options.args ?? []),
    ],
    {
      env: cleanEnv({
        ANTHROPIC_API_KEY: providerKey,
        AGENT_HOME: options.home,
        ANTHROPIC_BASE_URL: server.url,
        ...options.env,
      }),
    },
  );
  const savedText = await readFile(saved, 'utf8').catch(() => '');
  return { run, sent: server.bodies.join('\n'), saved: savedText };
}

/**
 * A Streamable HTTP MCP server that wants `Bearer <token>` and whose `whoami` tool answers with
 * the Authorization header it received — as a debug tool or an error quoting the request does.
 */
async function bearerEchoServer(token?: string): Promise<{ url: string; seen: string[] }> {
  const seen: string[] = [];
  const http = createServer(async (request: IncomingMessage, response) => {
    const authorization = request.headers.authorization ?? '';
    seen.push(authorization);
    if (token !== undefined && authorization !== `Bearer ${token}`) {
      response.writeHead(401).end();
      return;
    }
    const server = new McpServer({ name: 'echo', version: '1.0.0' });
    server.registerTool(
      'whoami',
      { description: 'Who the server thinks you are', annotations: { readOnlyHint: true } },
      async () => ({
        content: [
          {
            type: 'text',
            text: `you sent Authorization: ${authorization} to ${request.url ?? ''}`,
          },
        ],
      }),
    );
    const transport = new StreamableHTTPServerTransport({});
    response.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(request, response);
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    http.closeAllConnections();
    await new Promise((resolve) => http.close(resolve));
  });
  return { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`, seen };
}

describe('MCP OAuth tokens', () => {
  it('a server that echoes the bearer token of a kept sign-in: the model and the session file read the marker', async () => {
    const { dir, workspace, home } = await folders();
    // Random-looking, no known key format: only knowing it is a token can catch it.
    const token = 'oauth-access-7f3c9a1e5b2d4f6081a9c3e5';
    const server = await bearerEchoServer(token);
    await writeFile(
      join(home, 'mcp-tokens.json'),
      JSON.stringify({
        echo: {
          resource: new URL(server.url).href,
          tokens: { access_token: token, token_type: 'Bearer', refresh_token: 'r-9f8e7d6c5b4a3' },
        },
      }),
      { mode: 0o600 },
    );
    const config = join(dir, 'mcp.json');
    await writeFile(config, JSON.stringify({ mcpServers: { echo: { url: server.url } } }));
    const { run, sent, saved } = await runTurns(
      [{ tool: { name: 'echo__whoami', input: {} } }, { text: 'Done.' }],
      { workspace, home, args: ['--mcp-config', config, '--allow', 'echo__whoami'] },
    );
    expect(run.code, run.stderr).toBe(0);
    // The server was really called with the token (the test would pass vacuously otherwise).
    expect(server.seen).toContain(`Bearer ${token}`);
    // tools-mcp hides the token it handed out where the result arrives; the session's own hiding
    // (`echo.oauth access_token`) stays behind it for what reaches the model by other ways.
    expect(sent).toContain('you sent Authorization: Bearer [redacted:OAuth access token] to');
    expect(sent).not.toContain(token);
    expect(saved).not.toContain(token);
    expect(run.stdout + run.stderr).not.toContain(token);
  });
});

/** Where `part` is in `text`, with what is around it (for a failure message). */
function context(text: string, part: string): string {
  const at = text.indexOf(part);
  return at < 0 ? part : JSON.stringify(text.slice(Math.max(0, at - 200), at + 60));
}

describe('a key in a command output the key as commands spell it', () => {
  // Each line is a way ordinary tools print a file holding a key: colour, wrapping, base64 (as
  // `base64` wraps it, as a Kubernetes secret holds it), a hex dump, URL and JSON escapes, reversed.
  // Coreutils and grep, and python3 (on every machine the CLI is tested on) for the rest.
  const python = (code: string) => `python3 forms.py ${code}`;
  const commands: [label: string, command: string][] = [
    ['grep colour', 'grep --color=always API .env'],
    ['base64 wrapped', 'base64 .env'],
    ['base64 of the key alone', "grep -o 'sk-[^ ]*' .env | tr -d '\\n' | base64 -w0"],
    ['od hex', 'od -v -An -tx1 .env'],
    ['plain hex', python('hex')],
    ['fold', 'fold -w 17 .env'],
    ['reversed', python('reversed')],
    ['url-encoded', python('url')],
    ['json escapes', python('json')],
  ];
  const formsScript = [
    'import json, sys, urllib.parse',
    "text = open('.env').read()",
    'form = sys.argv[1]',
    "if form == 'hex': print(text.encode().hex())",
    "if form == 'reversed': print(text[::-1])",
    "if form == 'url': print(urllib.parse.quote(text))",
    "if form == 'json': print(''.join('\\\\u%04x' % ord(c) if c in 'sk' else c for c in json.dumps(text)))",
  ].join('\n');

  it('each form reaches the model as the marker', async () => {
    const { workspace, home } = await folders();
    await writeFile(join(workspace, '.env'), `ANTHROPIC_API_KEY=${providerKey}\n`);
    await writeFile(join(workspace, 'forms.py'), formsScript);
    const script = commands
      .map(([label, command]) => `echo "== ${label}"; ${command}; echo`)
      .join('; ');
    const { run, sent, saved } = await runTurns(
      [{ tool: { name: 'bash', input: { command: script } } }, { text: 'Done.' }],
      { workspace, home, args: ['--mode', 'full-access', '--sandbox', 'off'] },
    );
    expect(run.code, run.stderr).toBe(0);
    const result = JSON.parse(sent.split('\n').at(-1) ?? '{}') as {
      messages: { content: string | { type: string; content?: unknown }[] }[];
    };
    const text = JSON.stringify(result.messages.at(-1)?.content);
    for (const [label] of commands) {
      const section = text.split(`== ${label}`)[1]?.split('== ')[0] ?? '';
      expect(section.includes('[redacted:ANTHROPIC_API_KEY]'), `${label}: ${section}`).toBe(true);
    }
    // No 12 characters in a row of the key, its hex or its base64 reached the model or a file.
    const hex = Buffer.from(providerKey).toString('hex');
    const base64 = Buffer.from(providerKey).toString('base64');
    for (const where of [sent, saved])
      for (const spelling of [providerKey, hex, base64])
        for (let at = 0; at + 12 <= spelling.length; at += 4)
          expect(
            where.includes(spelling.slice(at, at + 12)),
            `${where === sent ? 'sent' : 'saved'}: ${context(where, spelling.slice(at, at + 12))}`,
          ).toBe(false);
  });
});

describe('a key the commands that dump a file show in pieces', () => {
  // xxd and hexdump -C put an offset and an ASCII column around every 16 bytes, od an offset (and
  // spaces between characters with -c), cut a middle stretch: the model read the key 16 characters
  // a line. Real commands (xxd ships with vim, hexdump with util-linux, od and cut with coreutils).
  const commands = [
    'xxd .env',
    'hexdump -C .env',
    'od -c .env',
    'od -tx1 .env',
    'cut -c20-60 .env',
  ];

  it('no 8 characters of the key past its public prefix reach the model or the session file', async () => {
    const { workspace, home } = await folders();
    await writeFile(join(workspace, '.env'), `ANTHROPIC_API_KEY=${providerKey}\nOTHER=1\n`);
    const { run, sent, saved } = await runTurns(
      [
        ...commands.map((command) => ({ tool: { name: 'bash', input: { command } } })),
        { text: 'Done.' },
      ],
      { workspace, home, args: ['--mode', 'full-access'] },
    );
    expect(run.code, run.stderr).toBe(0);
    const secret = providerKey.slice('sk-ant-api03-xY9'.length);
    const pieces = new Set<string>();
    for (let at = 0; at + 8 <= secret.length; at++) pieces.add(secret.slice(at, at + 8));
    for (const [name, where] of [
      ['sent', sent],
      ['saved', saved],
    ] as const) {
      // Read as the dumps spell it: white space and colons out, hex as text.
      const compact = where.replace(/\\n|[\s:]/g, '');
      const lower = compact.toLowerCase();
      for (const piece of pieces) {
        expect(compact.includes(piece), `${name}: ${context(compact, piece)}`).toBe(false);
        const hex = Buffer.from(piece).toString('hex');
        expect(lower.includes(hex), `${name} (hex): ${context(lower, hex)}`).toBe(false);
      }
    }
    // The dumps themselves still reach the model: offsets and the other variable are there.
    expect(sent).toContain('00000000: 414e 5448 524f 5049 435f 4150 495f 4b45  ANTHROPIC_API_KE');
    expect(sent).toContain('|OTHER=1.|');
    expect(sent.match(/\[redacted:ANTHROPIC_API_KEY\]/g)?.length).toBeGreaterThanOrEqual(8);
  });
});

describe('credentials under names and in shapes the rules did not know', () => {
  // A password manager's session key unlocks the whole vault through its CLI; a JDBC URL keeps its
  // password in the query; an Azure SAS is a signature. Each reached bash's environment.
  const variables = {
    BW_SESSION: 'Xk2Vb9Qm4LrT7yP1sD8fG3hJ6kZ0cN5wE2aR9uI4oY7tM1=',
    OP_SESSION_my: 'Jq8vN2mK5xR1tZ7wB4yH9cF3gL6pD0sA',
    ATUIN_SESSION: '01hx7k2m9q4r8t6w3y5z1a0b2c',
    SPRING_DATASOURCE_URL: 'jdbc:mysql://db:3306/app?user=root&password=Sup3rS3cretPw',
    AZURE_STORAGE_SAS: 'sv=2022-11-02&ss=b&sp=r&se=2026-12-01&sig=AbCdEf0123456789%2BXyZ%3D',
  };

  it('are not in the tools’ environment, and a .env holding them reaches the model as markers', async () => {
    const { workspace, home } = await folders();
    await writeFile(
      join(workspace, 'vars.txt'),
      `${Object.entries(variables)
        .map(([name, value]) => `${name}=${value}`)
        .join('\n')}\n`,
    );
    const { run, sent, saved } = await runTurns(
      [
        {
          tool: {
            name: 'bash',
            input: {
              command:
                'echo "in-env=$(env | grep -c -e ^BW_SESSION= -e ^OP_SESSION_ -e ^ATUIN_SESSION= -e ^SPRING_DATASOURCE_URL= -e ^AZURE_STORAGE_SAS=) desktop=$DESKTOP_SESSION"',
            },
          },
        },
        { tool: { name: 'read_file', input: { path: 'vars.txt' } } },
        { text: 'Done.' },
      ],
      {
        workspace,
        home,
        args: ['--mode', 'full-access'],
        env: { ...variables, DESKTOP_SESSION: 'gnome' },
      },
    );
    expect(run.code, run.stderr).toBe(0);
    // The environment still reaches ordinary settings (the command ran and printed them).
    expect(sent).toContain('in-env=0 desktop=gnome');
    for (const [name, value] of Object.entries(variables)) {
      expect(sent.includes(value), name).toBe(false);
      expect(saved.includes(value), name).toBe(false);
      expect(sent).toContain(`${name}=[redacted:${name}]`);
    }
  });
});

describe('what command hooks are handed', () => {
  it('a PostToolUse hook that logs its input (tool_response) logs the marker, not the key', async () => {
    const { workspace, home } = await folders();
    await writeFile(join(workspace, '.env'), `ANTHROPIC_API_KEY=${providerKey}\n`);
    await mkdir(join(workspace, '.agent'));
    await writeFile(
      join(workspace, '.agent', 'settings.json'),
      JSON.stringify({
        hooks: {
          PostToolUse: [
            {
              hooks: [
                { type: 'command', command: 'cat >> hook-log.jsonl; echo >> hook-log.jsonl' },
              ],
            },
          ],
        },
      }),
    );
    const { run, sent } = await runTurns(
      [
        { tool: { name: 'bash', input: { command: 'cat .env; cat .env | base64 -w0' } } },
        { text: 'Done.' },
      ],
      { workspace, home, args: ['--mode', 'full-access', '--trust'] },
    );
    expect(run.code, run.stderr).toBe(0);
    const log = await readFile(join(workspace, 'hook-log.jsonl'), 'utf8');
    // The hook ran and saw the result, with the markers where the key was.
    expect(log).toContain('ANTHROPIC_API_KEY=[redacted:ANTHROPIC_API_KEY]');
    expect(log).not.toContain(providerKey);
    expect(log).not.toContain(Buffer.from(providerKey).toString('base64').slice(8, 40));
    expect(sent).not.toContain(providerKey);
  });
});

describe('a hosted MCP server whose URL holds its key', () => {
  it('a server that echoes the URL it was called at: the model reads the marker for the key', async () => {
    const { dir, workspace, home } = await folders();
    const server = await bearerEchoServer();
    const key = 'hk-5d2f9a7c1e3b8d6f4a0c';
    const url = new URL(server.url);
    url.search = `?api_key=${key}&region=eu-west`;
    const config = join(dir, 'mcp.json');
    await writeFile(config, JSON.stringify({ mcpServers: { hosted: { url: url.href } } }));
    const { run, sent, saved } = await runTurns(
      [{ tool: { name: 'hosted__whoami', input: {} } }, { text: 'Done.' }],
      { workspace, home, args: ['--mcp-config', config, '--allow', 'hosted__whoami'] },
    );
    expect(run.code, run.stderr).toBe(0);
    // Hidden where the server's answer arrives (@agent/tools-mcp knows the URL it was given).
    expect(sent).toContain('api_key=[redacted:query api_key]&region=eu-west');
    for (const where of [sent, saved, run.stdout + run.stderr]) {
      expect(where).not.toContain(key);
    }
  });
});

describe('a crash', () => {
  // A bug whose error quotes the request it failed on (an SDK error with its headers): Node's own
  // printer wrote the message and stack as they were.
  it.each(['uncaught', 'rejection'] as const)(
    '%s: an error quoting the key prints the marker',
    async (kind) => {
      const { dir, workspace, home } = await folders();
      const preload = join(dir, 'crash.mjs');
      await writeFile(
        preload,
        [
          "process.on('SIGUSR2', () => {",
          "  const error = new Error('request failed: x-api-key: ' + process.env.ANTHROPIC_API_KEY);",
          `  if (${JSON.stringify(kind)} === 'rejection') void Promise.reject(error);`,
          '  else throw error;',
          '});',
        ].join('\n'),
      );
      const script = join(dir, 'script.json');
      await writeFile(
        script,
        JSON.stringify({
          steps: [
            {
              toolCalls: [{ name: 'bash', arguments: { command: 'echo started; exec sleep 30' } }],
            },
            { text: 'never reached' },
          ],
        }),
      );
      const { spawn } = await import('node:child_process');
      const { cliPath } = await import('../testing/test-support.js');
      const child = spawn(
        process.execPath,
        [
          '--import',
          preload,
          cliPath,
          '-p',
          'go',
          '--scripted',
          script,
          '--cwd',
          workspace,
          '--mode',
          'full-access',
        ],
        {
          env: cleanEnv({ ANTHROPIC_API_KEY: providerKey, AGENT_HOME: home }),
          stdio: ['ignore', 'ignore', 'pipe'],
        },
      );
      cleanups.push(async () => {
        child.kill('SIGKILL');
      });
      let stderr = '';
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      await new Promise<void>((resolve) => {
        child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
          stderr += chunk;
          if (stderr.includes('→ bash')) resolve();
        });
      });
      child.kill('SIGUSR2');
      expect(await exited).toBe(1);
      expect(stderr).toContain('request failed: x-api-key: [redacted:ANTHROPIC_API_KEY]');
      expect(stderr).not.toContain(providerKey);
    },
  );
});
