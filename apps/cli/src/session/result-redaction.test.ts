import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { credentialRedactor } from '@agent/core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mcpServerSecrets } from '../config/mcp-servers.js';
import { messagesServer, type Turn } from '../testing/messages-server.js';
import {
  appDir,
  assertBuilt,
  cleanEnv,
  cliPath,
  runCli,
  tempDir,
} from '../testing/test-support.js';

// What the model is sent: a real CLI process talking to a local server that speaks Anthropic's
// Messages stream and keeps every request body. However a credential of the CLI's environment
// gets into a tool's result, the next request holds its marker, never its value.

beforeAll(assertBuilt);
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const keys = {
  ANTHROPIC_API_KEY: `sk-ant-api03-${'xY9_'.repeat(20)}`,
  GITHUB_TOKEN: `ghp_${'A1b2'.repeat(9)}`,
  DATABASE_URL: 'postgres://app:pg-password-value@db:5432/app',
};

async function workspaceWithHome() {
  const dir = await tempDir('agent-cli-result-redaction-');
  cleanups.push(dir.dispose);
  const workspace = join(dir.path, 'ws');
  const home = join(dir.path, 'home');
  await mkdir(workspace);
  await mkdir(home);
  return { workspace, home };
}

function expectNoValue(text: string) {
  for (const value of Object.values(keys)) expect(text).not.toContain(value);
}

describe('tool results reach the model without the credentials of the CLI environment', () => {
  it('a .env file, the CLI process environment read through /proc and a passed variable', async () => {
    const { workspace, home } = await workspaceWithHome();
    await writeFile(
      join(workspace, '.env'),
      `ANTHROPIC_API_KEY=${keys.ANTHROPIC_API_KEY}\nDATABASE_URL=${keys.DATABASE_URL}\n`,
    );
    const turns: Turn[] = [
      { tool: { name: 'read_file', input: { path: '.env' } } },
      // Without a sandbox a command may read any process of the same user: the CLI's own
      // environment still holds the provider key.
      {
        tool: {
          name: 'bash',
          input: {
            command:
              "for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < \"$f\" 2>/dev/null | grep '^ANTHROPIC_API_KEY='; done | sort -u",
          },
        },
      },
      // A variable the user passed to the tools on purpose: the command sees it, the model not.
      { tool: { name: 'bash', input: { command: 'echo "token=$GITHUB_TOKEN"' } } },
      { text: 'All read.' },
    ];
    const server = await messagesServer(turns, cleanups);
    const run = await runCli(
      [
        '-p',
        'look around',
        '--provider',
        'anthropic',
        '--cwd',
        workspace,
        '--mode',
        'full-access',
        '--sandbox',
        'off',
        '--pass-env',
        'GITHUB_TOKEN',
        '--output-format',
        'json',
      ],
      {
        env: cleanEnv({ ...keys, AGENT_HOME: home, ANTHROPIC_BASE_URL: server.url }),
      },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(server.bodies).toHaveLength(4);
    const sent = server.bodies.slice(1).join('\n');
    // Each result came back, with the marker where the value was.
    expect(sent).toContain('ANTHROPIC_API_KEY=[redacted:ANTHROPIC_API_KEY]');
    expect(sent).toContain('DATABASE_URL=[redacted:DATABASE_URL]');
    expect(sent).toContain('token=[redacted:GITHUB_TOKEN]');
    expectNoValue(sent);
    expectNoValue(run.stdout + run.stderr);
  });

  it('what command hooks hand the model: SessionStart and UserPromptSubmit context, a PreToolUse denial, a Stop reason', async () => {
    const { workspace, home } = await workspaceWithHome();
    await writeFile(
      join(workspace, '.env'),
      `ANTHROPIC_API_KEY=${keys.ANTHROPIC_API_KEY}\nGITHUB_TOKEN=${keys.GITHUB_TOKEN}\nDATABASE_URL=${keys.DATABASE_URL}\n`,
    );
    await mkdir(join(workspace, '.agent'));
    // Each hook prints the project's .env where the model reads it (trusted: they run as written).
    const printEnv = (event: string) => `echo ${event}-said; cat .env`;
    await writeFile(
      join(workspace, '.agent', 'settings.json'),
      JSON.stringify({
        hooks: {
          SessionStart: [{ hooks: [{ type: 'command', command: printEnv('start') }] }],
          UserPromptSubmit: [{ hooks: [{ type: 'command', command: printEnv('prompt') }] }],
          PreToolUse: [
            {
              matcher: 'bash',
              hooks: [{ type: 'command', command: `{ ${printEnv('pre')}; } >&2; exit 2` }],
            },
          ],
          Stop: [
            {
              hooks: [
                {
                  type: 'command',
                  command: `test -f stopped && exit 0; touch stopped; { ${printEnv('stop')}; } >&2; exit 2`,
                },
              ],
            },
          ],
        },
      }),
    );
    const turns: Turn[] = [
      { tool: { name: 'bash', input: { command: 'echo hi' } } },
      { text: 'Finished.' },
      { text: 'Finished again.' },
    ];
    const server = await messagesServer(turns, cleanups);
    const run = await runCli(
      ['-p', 'go', '--provider', 'anthropic', '--cwd', workspace, '--trust'],
      { env: cleanEnv({ ...keys, AGENT_HOME: home, ANTHROPIC_BASE_URL: server.url }) },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(server.bodies).toHaveLength(3);
    const sent = server.bodies.join('\n');
    // Every hook's text arrived, each with the markers where the values were.
    // (Compared as booleans: a failure would print the whole request with the tools' schemas.)
    for (const event of ['start', 'prompt', 'pre', 'stop']) {
      expect(sent.includes(`${event}-said`), event).toBe(true);
      expect(sent.includes(keys.ANTHROPIC_API_KEY), `${event}: the key`).toBe(false);
    }
    // The last request holds all four: the system prompt, the prompt, the denial, the Stop reason.
    const last = server.bodies.at(-1) ?? '';
    expect(last.split('ANTHROPIC_API_KEY=[redacted:ANTHROPIC_API_KEY]').length - 1).toBe(4);
    expect(last.split('GITHUB_TOKEN=[redacted:GITHUB_TOKEN]').length - 1).toBe(4);
    for (const value of Object.values(keys)) expect(sent.includes(value), value).toBe(false);
    expectNoValue(run.stdout + run.stderr);
  });

  it('an MCP server that echoes the key its configuration gave it: the model reads the marker', async () => {
    const { workspace, home } = await workspaceWithHome();
    const given = 'server-secret-value-1234567';
    const mcpConfig = join(home, 'mcp.json');
    await writeFile(
      mcpConfig,
      JSON.stringify({
        mcpServers: {
          envserver: {
            command: process.execPath,
            args: [join(appDir, 'src/__fixtures__/env-server.mjs')],
            env: { SERVER_API_KEY: given, PLAIN_SETTING: 'plain-value-kept' },
          },
        },
      }),
    );
    const server = await messagesServer(
      [
        { tool: { name: 'envserver__value', input: { name: 'SERVER_API_KEY' } } },
        { tool: { name: 'envserver__value', input: { name: 'PLAIN_SETTING' } } },
        { text: 'Read.' },
      ],
      cleanups,
    );
    const saved = join(home, 'saved.json');
    const run = await runCli(
      [
        '-p',
        'go',
        '--provider',
        'anthropic',
        '--cwd',
        workspace,
        '--mcp-config',
        mcpConfig,
        // A server's readOnlyHint does not let its tools run unasked.
        '--allow',
        'envserver__value',
        '--save',
        saved,
      ],
      { env: cleanEnv({ ...keys, AGENT_HOME: home, ANTHROPIC_BASE_URL: server.url }) },
    );
    expect(run.code, run.stderr).toBe(0);
    const sent = server.bodies.join('\n');
    // Hidden where the server's answer arrives (@agent/tools-mcp knows what its configuration sent).
    expect(sent).toContain('SERVER_API_KEY=[redacted:env SERVER_API_KEY]');
    expect(sent).not.toContain(given);
    // Not a credential by name or value: left as it is.
    expect(sent).toContain('PLAIN_SETTING=plain-value-kept');
    expect(await readFile(saved, 'utf8')).not.toContain(given);
    expect(run.stdout + run.stderr).not.toContain(given);
  });

  it('mcpServerSecrets: stdio env, URL headers and the token of an Authorization header', () => {
    expect(
      mcpServerSecrets([
        { name: 'a', transport: { type: 'stdio', command: 'x', env: { TOKEN: 't' } } },
        {
          name: 'b',
          transport: {
            type: 'http',
            url: 'https://example.com/mcp',
            headers: {
              Authorization: 'Bearer abc.def',
              'X-Api-Key': 'k',
              'X-Honeycomb-Team': 'a1b2c3d4e5f6a7b8c9d0',
              Accept: 'application/json',
            },
          },
        },
      ]),
    ).toEqual({
      'a.TOKEN': 't',
      'b.Authorization': 'Bearer abc.def',
      'b.Authorization token': 'abc.def',
      'b.X-Api-Key': 'k',
      // A key under a name that does not say so: the value itself looks random (core's
      // random-value rule), so it is held under its own name.
      'b.X-Honeycomb-Team': 'a1b2c3d4e5f6a7b8c9d0',
      'b.Accept': 'application/json',
    });
    // What the redaction does with them: the key hidden, Accept left as it is.
    const text = credentialRedactor(
      mcpServerSecrets([
        {
          name: 'b',
          transport: {
            type: 'http',
            url: 'https://example.com/mcp',
            headers: { 'X-Honeycomb-Team': 'a1b2c3d4e5f6a7b8c9d0', Accept: 'application/json' },
          },
        },
      ]),
    )('{"x-honeycomb-team":"a1b2c3d4e5f6a7b8c9d0","accept":"application/json"}');
    expect(text).toBe(
      '{"x-honeycomb-team":"[redacted:b.X-Honeycomb-Team]","accept":"application/json"}',
    );
  });

  it('mcp serve: a result sent to the client holds the marker, not the value', async () => {
    const { workspace, home } = await workspaceWithHome();
    await writeFile(join(workspace, '.env'), `GITHUB_TOKEN=${keys.GITHUB_TOKEN}\n`);
    const client = new Client({ name: 'sdk-client', version: '1' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [cliPath, 'mcp', 'serve', '--cwd', workspace],
        env: cleanEnv({ ...keys, AGENT_HOME: home }),
        stderr: 'ignore',
      }),
    );
    cleanups.push(() => client.close());
    const result = await client.callTool({ name: 'read_file', arguments: { path: '.env' } });
    const text = JSON.stringify(result.content);
    expect(text).toContain('GITHUB_TOKEN=[redacted:GITHUB_TOKEN]');
    expectNoValue(text);
  });
});
