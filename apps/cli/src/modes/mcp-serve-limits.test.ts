// `agent mcp serve`'s caps per token — calls running at once, calls waiting, requests one
// connection may pipeline — from flags or the user settings' `mcpServe` (the built binary, a
// real MCP client, a FIFO that holds a bash call until the test lets it go). They were fixed at
// 8, 32 and 16 before: no flag, no setting. And over stdio, a message past the reader's limit:
// the server ends with a reason instead of reading nothing from then on.
import { execFileSync, spawn } from 'node:child_process';
import { mkdir, open, readFile, writeFile } from 'node:fs/promises';
import { connect as connectSocket, type Socket } from 'node:net';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ServeProcess, startHttpServe } from '../testing/mcp-serve-support.js';
import { assertBuilt, cleanEnv, cliPath, runCli, tempDir } from '../testing/test-support.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
beforeAll(() => assertBuilt());

async function folder(prefix: string): Promise<string> {
  const dir = await tempDir(prefix);
  cleanups.push(dir.dispose);
  return dir.path;
}

/** A FIFO in `dir`: `cat` of it blocks until the test opens it for writing and closes it. */
function fifo(dir: string): string {
  const path = join(dir, 'hold.fifo');
  execFileSync('mkfifo', [path]);
  return path;
}

async function serve(args: readonly string[], home?: string): Promise<ServeProcess> {
  const server = await startHttpServe(
    args,
    home === undefined ? cleanEnv() : cleanEnv({ AGENT_HOME: home }),
  );
  cleanups.push(server.stop);
  return server;
}

async function client(server: ServeProcess): Promise<Client> {
  const mcp = new Client({ name: 'limits-test', version: '1' });
  await mcp.connect(
    new StreamableHTTPClientTransport(new URL(server.url), {
      requestInit: { headers: { Authorization: `Bearer ${server.token ?? ''}` } },
    }),
  );
  cleanups.push(() => mcp.close());
  return mcp;
}

const held = ['--mode', 'full-access', '--sandbox', 'off'];

describe('calls at once and waiting', () => {
  it.each([
    ['flags', ['--max-concurrent-calls', '1', '--max-queued-calls', '0'], undefined],
    ['the user settings', [], { maxConcurrentCalls: 1, maxQueuedCalls: 0 }],
  ] as const)(
    'from %s: one call running, none waiting, the next refused naming the caps',
    async (_, flags, setting) => {
      const cwd = await folder('agent-serve-limits-');
      let home: string | undefined;
      if (setting !== undefined) {
        home = await folder('agent-serve-home-');
        await writeFile(join(home, 'settings.json'), JSON.stringify({ mcpServe: setting }));
      }
      const hold = fifo(cwd);
      const server = await serve(['--cwd', cwd, ...held, ...flags], home);
      const mcp = await client(server);
      const first = mcp.callTool({ name: 'bash', arguments: { command: `cat ${hold}` } });
      // Resolves once `cat` opened the FIFO: the first call holds the one turn.
      const writer = await open(hold, 'w');
      const second = await mcp
        .callTool({ name: 'bash', arguments: { command: 'echo second' } })
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect(second).toBeInstanceOf(McpError);
      expect((second as McpError).code).toBe(-32000);
      expect((second as McpError).message).toContain('(maxConcurrentCalls 1, maxQueuedCalls 0)');
      await writer.write('released\n');
      await writer.close();
      const done = await first;
      expect(JSON.stringify(done.content)).toContain('released');
    },
  );
});

/** One pipelined tools/call of bash `command`, as raw HTTP/1.1. */
function pipelinedCall(port: string, token: string, id: number, command: string): string {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'bash', arguments: { command } },
  });
  return (
    `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${token}\r\n` +
    'Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
}

describe('requests pipelined on one connection', () => {
  it('--max-pipelined-requests 2: a connection with a third unanswered request is closed', async () => {
    const cwd = await folder('agent-serve-pipeline-');
    const hold = fifo(cwd);
    const server = await serve(['--cwd', cwd, ...held, '--max-pipelined-requests', '2']);
    const port = new URL(server.url).port;
    const socket: Socket = connectSocket(Number(port), '127.0.0.1');
    socket.on('error', () => undefined);
    cleanups.push(async () => {
      socket.destroy();
    });
    // Answers are read and dropped: a paused socket would not report its close.
    socket.resume();
    await new Promise((resolve) => socket.once('connect', resolve));
    const closed = new Promise((resolve) => socket.once('close', resolve));
    socket.write(
      [1, 2, 3].map((id) => pipelinedCall(port, server.token ?? '', id, `cat ${hold}`)).join(''),
    );
    await closed;
    // Its held calls were stopped with it; the server still serves.
    const mcp = await client(server);
    const echo = await mcp.callTool({ name: 'bash', arguments: { command: 'echo still here' } });
    expect(JSON.stringify(echo.content)).toContain('still here');
  });
});

describe('refused', () => {
  it.each([
    [
      ['--max-concurrent-calls', '0'],
      '--max-concurrent-calls must be a whole number >= 1, got "0"',
    ],
    [['--max-concurrent-calls', '1.5'], '--max-concurrent-calls must be a whole number >= 1'],
    [['--max-queued-calls=-1'], '--max-queued-calls must be a whole number >= 0'],
    [['--max-queued-calls', 'many'], '--max-queued-calls must be a whole number >= 0'],
    [['--max-pipelined-requests', '4'], '--max-pipelined-requests is for agent mcp serve --http'],
    [
      ['--http', '--max-pipelined-requests', '0'],
      '--max-pipelined-requests must be a whole number >= 1',
    ],
    [['--session-idle-minutes', '5'], '--session-idle-minutes is for agent mcp serve --http'],
    [
      ['--http', '--session-idle-minutes', '0'],
      '--session-idle-minutes must be a whole number >= 1',
    ],
  ])('agent mcp serve %j: a usage error', async (args, message) => {
    const run = await runCli(['mcp', 'serve', ...args]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(message);
  });

  it.each([
    [['demo', '--max-concurrent-calls', '2'], 'agent demo does not take --max-concurrent-calls'],
    [['-p', 'hi', '--max-queued-calls', '2'], '--max-queued-calls is for agent mcp serve'],
  ])('outside agent mcp serve (%j): a usage error', async (args, message) => {
    const run = await runCli(args);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(message);
  });

  it.each([
    [
      { mcpServe: { maxConcurrentCalls: 0 } },
      'mcpServe.maxConcurrentCalls must be a whole number >= 1',
    ],
    [{ mcpServe: { maxWaiting: 3 } }, 'unknown mcpServe setting "maxWaiting"'],
    [
      { mcpServe: { sessionIdleMinutes: 0.5 } },
      'mcpServe.sessionIdleMinutes must be a whole number >= 1',
    ],
    [{ mcpServe: 4 }, '"mcpServe" must be an object'],
  ])('user settings %j: an error naming the file and key', async (settings, message) => {
    const home = await folder('agent-serve-home-');
    await writeFile(join(home, 'settings.json'), JSON.stringify(settings));
    const run = await runCli(['mcp', 'serve'], { env: cleanEnv({ AGENT_HOME: home }) });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(join(home, 'settings.json'));
    expect(run.stderr).toContain(message);
  });

  it("a project's settings may not size them: left out, named, the server runs", async () => {
    const cwd = await folder('agent-serve-project-');
    await mkdir(join(cwd, '.agent'));
    await writeFile(
      join(cwd, '.agent', 'settings.json'),
      JSON.stringify({ mcpServe: { maxConcurrentCalls: 1000 } }),
    );
    const run = await runCli(['mcp', 'serve', '--cwd', cwd, '--trust'], { input: '' });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(
      `ignored "mcpServe" in ${join(cwd, '.agent', 'settings.json')}: only your settings`,
    );
  });
});

describe('a stdio message too large to read', () => {
  it('ends the server (exit 1, naming the limit) and its background commands, instead of a server that reads nothing and lingers', async () => {
    const cwd = await folder('agent-serve-stdio-huge-');
    const child = spawn(process.execPath, [cliPath, 'mcp', 'serve', '--cwd', cwd, ...held], {
      env: cleanEnv(),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    cleanups.push(async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    // The server stops reading mid-write: what is left is not the test's concern.
    child.stdin.on('error', () => undefined);
    const send = (message: object) => child.stdin.write(`${JSON.stringify(message)}\n`);
    let stdout = '';
    const started = new Promise<void>((resolve) => {
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        stdout += chunk;
        if (stdout.includes('"id":1}')) resolve();
      });
    });
    send({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 't', version: '1' },
      },
    });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name: 'bash',
        arguments: { command: 'echo $$ > bg.pid; exec sleep 86397', run_in_background: true },
      },
    });
    await started;
    expect(stdout).toContain('Started in background');
    // 11 MiB and no newline: past the SDK reader's 10 MiB, after which it reads no more.
    child.stdin.write('a'.repeat(11 * 1024 * 1024));
    expect(await exited).toBe(1);
    expect(stderr).toContain(
      'agent mcp serve: stopped: The client sent a message over the 10485760-byte limit',
    );
    expect(stderr).not.toContain('unsettled top-level await');
    // Its background command ended with it.
    const pid = Number((await readFile(join(cwd, 'bg.pid'), 'utf8')).trim());
    expect(() => process.kill(pid, 0)).toThrow(/ESRCH/);
  }, 90_000);
});
