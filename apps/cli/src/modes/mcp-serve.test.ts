import { existsSync } from 'node:fs';
import { chmod, writeFile } from 'node:fs/promises';
import { type AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import { curlAs } from '@agent/tooling-system-tools';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ServeProcess, startHttpServe } from '../testing/mcp-serve-support.js';
import { assertBuilt, cleanEnv, cliPath, runCli, tempDir } from '../testing/test-support.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
beforeAll(() => assertBuilt());

function text(result: Awaited<ReturnType<Client['callTool']>>): string {
  return (result.content as { type: string; text?: string }[])
    .map((block) => block.text ?? `[${block.type}]`)
    .join('\n');
}

async function workspace() {
  const dir = await tempDir('agent-mcp-serve-');
  cleanups.push(dir.dispose);
  await writeFile(join(dir.path, 'notes.txt'), 'hello from the workspace\n');
  return dir.path;
}

async function serve(args: readonly string[]): Promise<ServeProcess> {
  const server = await startHttpServe(args);
  cleanups.push(server.stop);
  return server;
}

async function connect(url: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'sdk-client', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }),
  );
  cleanups.push(() => client.close());
  return client;
}

/**
 * Every tool that writes, runs code, reaches the network, or talks to the CLI's own screen (bash
 * is served in read-only mode: its reading commands run there, the rest are refused).
 */
const notReadOnly = [
  'write_file',
  'edit_file',
  'notebook_edit',
  'web_fetch',
  'js_repl',
  'python_repl',
  'send_user_message',
];

describe('agent mcp serve', () => {
  it('serves over stdio the tools the rules can allow; a refusal names the rule or flag', async () => {
    const cwd = await workspace();
    const client = new Client({ name: 'sdk-client', version: '1' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [
          cliPath,
          'mcp',
          'serve',
          '--cwd',
          cwd,
          '--mode',
          'workspace-write',
          '--allow',
          'bash(git *)',
          '--deny',
          'bash(rm *)',
          // Unsandboxed, a command that writes needs full access (sandboxed, workspace-write runs it).
          '--sandbox',
          'off',
        ],
        env: cleanEnv(),
        stderr: 'ignore',
      }),
    );
    cleanups.push(() => client.close());
    const { tools } = await client.listTools();
    const names = tools.map((tool) => tool.name);
    // bash is full-access, but an allow rule covers some of its calls.
    expect(names).toEqual(expect.arrayContaining(['bash', 'read_file', 'write_file', 'edit_file']));
    expect(names).not.toContain('web_fetch');
    expect(names).not.toContain('send_user_message');
    expect(tools.find((tool) => tool.name === 'read_file')?.annotations?.readOnlyHint).toBe(true);

    const read = await client.callTool({ name: 'read_file', arguments: { path: 'notes.txt' } });
    expect(text(read)).toContain('hello from the workspace');

    const outside = await client.callTool({
      name: 'read_file',
      arguments: { path: '/etc/passwd' },
    });
    expect(outside.isError).toBe(true);

    const denied = await client.callTool({
      name: 'bash',
      arguments: { command: 'rm -rf notes.txt' },
    });
    expect(denied.isError).toBe(true);
    expect(text(denied)).toContain('bash(rm *)');
    // Neither allowed nor denied, and nobody to ask: the refusal says what would allow it.
    const unasked = await client.callTool({ name: 'bash', arguments: { command: 'touch hi' } });
    expect(unasked.isError).toBe(true);
    expect(text(unasked)).toContain(
      "Needs approval, and agent mcp serve cannot ask: to allow it, add --allow 'bash(touch hi)', or use --mode full-access",
    );
    // A reading command needs no more than the mode.
    const echo = await client.callTool({ name: 'bash', arguments: { command: 'echo hi' } });
    expect(text(echo)).toContain('hi');
    const again = await client.callTool({ name: 'read_file', arguments: { path: 'notes.txt' } });
    expect(text(again)).toContain('hello from the workspace');
  });

  it('path rules hold for served tools: a rule on read_file keeps search and glob off the file', async () => {
    const cwd = await workspace();
    await writeFile(join(cwd, 'secret.txt'), 'hello secret\n');
    const client = new Client({ name: 'sdk-client', version: '1' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [cliPath, 'mcp', 'serve', '--cwd', cwd, '--deny', 'read_file(secret.txt)'],
        env: cleanEnv(),
        stderr: 'ignore',
      }),
    );
    cleanups.push(() => client.close());
    const search = await client.callTool({ name: 'search', arguments: { pattern: 'hello' } });
    expect(text(search)).toContain('notes.txt:1:hello from the workspace');
    expect(text(search)).not.toContain('hello secret');
    expect(text(search)).toContain('[1 file hidden by permission rules]');
    const glob = await client.callTool({ name: 'glob', arguments: { pattern: '*.txt' } });
    expect(text(glob)).not.toContain('secret.txt');
    const read = await client.callTool({ name: 'read_file', arguments: { path: './secret.txt' } });
    expect(read.isError).toBe(true);
    expect(text(read)).toContain('read_file(secret.txt)');
  });

  it('--http needs the bearer token it hands out once, with a client configuration', async () => {
    const cwd = await workspace();
    const server = await serve(['--cwd', cwd]);
    const token = server.token ?? '';
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // stderr is a pipe here: the token is in the file it names, not on it (mcp-serve-token.test.ts).
    expect(server.stderr()).not.toContain(token);
    // The one line that puts it on a command line says what that exposes.
    expect(server.stderr()).toContain(
      'MCP Inspector CLI (a quick check: the token is then in the process list, which other users can read)',
    );
    const file = /the bearer token in (\S+), new for this run/.exec(server.stderr())?.[1];
    const entry = /\n {2}(\{"mcpServers".*)\n/.exec(server.stderr())?.[1] ?? '{}';
    expect(JSON.parse(entry)).toEqual({
      mcpServers: {
        agent: {
          type: 'http',
          url: server.url,
          headers: { Authorization: `Bearer <the token in ${file}>` },
        },
      },
    });

    const client = await connect(server.url, { Authorization: `Bearer ${token}` });
    const read = await client.callTool({ name: 'read_file', arguments: { path: 'notes.txt' } });
    expect(text(read)).toContain('hello from the workspace');
    // Read-only by default: no tool that writes or runs anything is listed, nor can be called.
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['read_file', 'search']));
    for (const name of notReadOnly) expect(tools.map((tool) => tool.name)).not.toContain(name);
    expect(
      tools
        .filter((tool) => tool.name !== 'bash' && tool.name !== 'bash_output')
        .every((tool) => tool.annotations?.readOnlyHint === true),
    ).toBe(true);
    // bash is served: a line of reading commands runs, one that writes is refused.
    const listing = await client.callTool({ name: 'bash', arguments: { command: 'ls' } });
    expect(text(listing)).toContain('notes.txt');
    const touch = await client.callTool({ name: 'bash', arguments: { command: 'touch x.txt' } });
    expect(touch.isError).toBe(true);
    expect(text(touch)).toContain("--allow 'bash(touch x.txt)'");
    const write = await client.callTool({
      name: 'write_file',
      arguments: { path: 'x.txt', content: 'x' },
    });
    expect(write.isError).toBe(true);
    expect(server.stderr()).toMatch(/not serving .*write_file, edit_file.* — mode read-only/);
    expect(server.stderr()).not.toMatch(/not serving bash,/);
  });

  it('--http refuses every method and path without the token, and a wrong one', async () => {
    const cwd = await workspace();
    const server = await serve(['--cwd', cwd, '--mode', 'full-access']);
    const token = server.token ?? '';
    const origin = new URL(server.url).origin;
    const initialize = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'curl', version: '1' },
      },
    });
    const call = JSON.stringify({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'bash', arguments: { command: 'echo PWNED > pwned.txt' } },
    });
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    };
    const attempts: [string, string, string | undefined][] = [
      ['POST', '/mcp', initialize],
      ['POST', '/mcp', call],
      ['GET', '/mcp', undefined],
      ['DELETE', '/mcp', undefined],
      ['GET', '/anything', undefined],
    ];
    const wrong = [
      undefined,
      `Bearer ${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`, // the last character
      `Bearer ${token.slice(0, -1)}`, // another length
      `Bearer ${token}x`,
    ];
    for (const authorization of wrong)
      for (const [method, path, body] of attempts) {
        const response = await fetch(`${origin}${path}`, {
          method,
          headers: authorization === undefined ? headers : { ...headers, authorization },
          ...(body === undefined ? {} : { body }),
        });
        expect({ authorization, method, path, status: response.status }).toEqual({
          authorization,
          method,
          path,
          status: 401,
        });
        expect(response.headers.get('www-authenticate')).toMatch(
          /^Bearer resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/mcp"/,
        );
      }
    // The bash call of the report never ran.
    expect(existsSync(join(cwd, 'pwned.txt'))).toBe(false);
    // The SDK client without the header cannot connect.
    await expect(connect(server.url)).rejects.toThrow(/Unauthorized/);
  });

  it("--no-auth serves your processes without a token, another user's not, and says so on stderr", async () => {
    const cwd = await workspace();
    const server = await serve(['--cwd', cwd, '--no-auth']);
    expect(server.token).toBeUndefined();
    expect(server.stderr()).toContain(
      'WARNING: --no-auth: any process of yours that can reach this port can call these tools as you',
    );
    expect(server.stderr()).not.toContain('Authorization: Bearer');
    const client = await connect(server.url);
    const read = await client.callTool({ name: 'read_file', arguments: { path: 'notes.txt' } });
    expect(text(read)).toContain('hello from the workspace');
    // Only root can be another user; the kernel names a connection's owner on Linux.
    if (process.getuid?.() !== 0 || process.platform !== 'linux') return;
    const theirs = await curlAs(server.url, [
      '-H',
      'content-type: application/json',
      '-H',
      'accept: application/json, text/event-stream',
      '--data',
      '{"jsonrpc":"2.0","id":1,"method":"ping"}',
    ]);
    expect(theirs.status).toBe(403);
    expect(theirs.body).toContain('serves only the processes of the user who started it');
  });

  it('--token-file: the token of a private file (not echoed); a file others can read is refused', async () => {
    const cwd = await workspace();
    const token = `${'k'.repeat(20)}-${Date.now().toString(36)}-and-more-secret`;
    const file = join(cwd, 'token');
    await writeFile(file, `${token}\n`, { mode: 0o600 });
    const server = await serve(['--cwd', cwd, '--token-file', file]);
    expect(server.stderr()).not.toContain(token);
    expect(server.stderr()).toContain(`Bearer <the token in ${file}>`);
    const client = await connect(server.url, { Authorization: `Bearer ${token}` });
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);

    await chmod(file, 0o644);
    const refused = await runCli(['mcp', 'serve', '--http', '--cwd', cwd, '--token-file', file]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      `The token file ${file} can be read or written by others (mode 0644): run chmod 600 ${file}`,
    );
  });

  it('--port already held (on 127.0.0.1 or [::1]) is an error naming it, not a crash', async () => {
    const cwd = await workspace();
    for (const host of ['127.0.0.1', '::1']) {
      const holder = createServer();
      await new Promise<void>((resolve) => holder.listen(0, host, resolve));
      cleanups.push(() => new Promise((resolve) => holder.close(() => resolve())));
      const port = (holder.address() as AddressInfo).port;
      const run = await runCli(['mcp', 'serve', '--http', '--cwd', cwd, '--port', String(port)]);
      expect(run.code, host).toBe(1);
      expect(run.stderr, host).toContain(
        host === '::1'
          ? `agent mcp serve: Another process listens on [::1]:${port}`
          : `agent mcp serve: Cannot listen on 127.0.0.1:${port}: another process listens there`,
      );
      expect(run.stderr, host).not.toContain('node:events');
    }
  });

  it.each([
    [['mcp', 'serve', '--no-auth'], '--token-file and --no-auth are for agent mcp serve --http'],
    [
      ['mcp', 'serve', '--token-file', 'x'],
      '--token-file and --no-auth are for agent mcp serve --http',
    ],
    [
      ['mcp', 'serve', '--http', '--no-auth', '--token-file', 'x'],
      '--token-file sets the token that --no-auth turns off: use one',
    ],
    [['-p', 'hi', '--no-auth'], '--token-file and --no-auth are for agent mcp serve --http'],
  ])('%j is a usage error', async (args, message) => {
    const run = await runCli(args);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(message);
  });
});
