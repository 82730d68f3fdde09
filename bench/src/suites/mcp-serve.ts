/**
 * Serve mode: the same echo tool served over Streamable HTTP on 127.0.0.1 by
 * `@agent/tools-mcp/serve` (each call through core's `executeTool`: validation, gate, hooks) and
 * by a plain SDK `McpServer` (stateless, as ours), both called by the SDK client — calls per second,
 * one at a time and 16 at once, in the same run. Then the CLI binary, `agent mcp serve --http`,
 * against a plain SDK server of the same built-in `read_file` tool, each in its own process.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineTool } from '@agent/core';
import { serveHttp } from '@agent/tools-mcp/serve';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import * as z from 'zod';
import { type BenchSection, positiveInt } from '../types.js';

const calls = positiveInt(process.env.BENCH_SERVE_CALLS, 1_000);

async function plainSdkServer(): Promise<{ url: string; close(): Promise<void> }> {
  const http = createServer((request, response) => {
    void (async () => {
      const server = new McpServer({ name: 'plain', version: '1' });
      server.registerTool(
        'echo',
        { description: 'Echoes the text.', inputSchema: { text: z.string() } },
        async ({ text }) => ({ content: [{ type: 'text', text }] }),
      );
      const transport = new StreamableHTTPServerTransport({});
      response.on('close', () => {
        void transport.close();
        void server.close();
      });
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      const text = Buffer.concat(chunks).toString('utf8');
      await server.connect(transport);
      await transport.handleRequest(request, response, text === '' ? undefined : JSON.parse(text));
    })();
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: () =>
      new Promise((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}

const cliEntry = fileURLToPath(new URL('../../../apps/cli/dist/main.js', import.meta.url));
const plainReadFileServer = fileURLToPath(
  new URL('../fixtures/plain-read-file-server.mjs', import.meta.url),
);

/** Starts a server process and reads its URL (and bearer token, if it prints one) from its output. */
async function serverProcess(
  args: string[],
  stream: 'stdout' | 'stderr',
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ url: string; headers: Record<string, string>; stop(): Promise<void> }> {
  const child: ChildProcess = spawn(process.execPath, args, {
    env,
    stdio: [
      'ignore',
      stream === 'stdout' ? 'pipe' : 'ignore',
      stream === 'stderr' ? 'pipe' : 'ignore',
    ],
  });
  const { url, headers } = await new Promise<{ url: string; headers: Record<string, string> }>(
    (resolve, reject) => {
      let seen = '';
      child[stream]?.setEncoding('utf8').on('data', (chunk: string) => {
        seen += chunk;
        const found = /(http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(seen);
        // `agent mcp serve --http` prints its token on a later line.
        const token = /Authorization: Bearer ([A-Za-z0-9_-]{43})/.exec(seen)?.[1];
        const needsToken = args.includes('--http');
        if (found?.[1] === undefined || (needsToken && token === undefined)) return;
        resolve({
          url: found[1],
          headers: token === undefined ? {} : { Authorization: `Bearer ${token}` },
        });
      });
      child.once('exit', (code) => reject(new Error(`server exited ${code}: ${seen.slice(-300)}`)));
    },
  );
  return {
    url,
    headers,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

async function measure(
  server: { url: string; headers?: Record<string, string> },
  tool: { name: string; arguments: Record<string, unknown> } = {
    name: 'echo',
    arguments: { text: 'hi' },
  },
): Promise<{ sequential: number; concurrent: number }> {
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(server.url), {
      requestInit: { headers: server.headers ?? {} },
    }),
  );
  const call = async () => {
    const result = await client.callTool(tool);
    if (result.isError === true) throw new Error(`${tool.name} failed: ${JSON.stringify(result)}`);
  };
  for (let index = 0; index < 100; index++) await call();
  let started = performance.now();
  for (let index = 0; index < calls; index++) await call();
  const sequential = calls / ((performance.now() - started) / 1000);
  started = performance.now();
  for (let batch = 0; batch < calls / 16; batch++)
    await Promise.all(Array.from({ length: 16 }, call));
  const concurrent = (Math.floor(calls / 16) * 16) / ((performance.now() - started) / 1000);
  await client.close();
  return { sequential, concurrent };
}

/** `agent mcp serve --http` against a plain SDK server of the same `read_file`, both as processes. */
async function measureBinary(ratio: (a: number, b: number) => string): Promise<string[][]> {
  if (!existsSync(cliEntry))
    return [['agent mcp serve --http (read_file)', 'not available: build apps/cli', '', '', '']];
  const workspace = await mkdtemp(join(tmpdir(), 'bench-mcp-serve-'));
  const started: { stop(): Promise<void> }[] = [];
  try {
    await writeFile(join(workspace, 'notes.txt'), `${'a line of notes\n'.repeat(128)}`);
    const home = join(workspace, '.agent-home');
    const plain = await serverProcess([plainReadFileServer, workspace], 'stdout');
    started.push(plain);
    const binary = await serverProcess(
      [cliEntry, 'mcp', 'serve', '--http', '--cwd', workspace],
      'stderr',
      { ...process.env, AGENT_HOME: home },
    );
    started.push(binary);
    const tool = { name: 'read_file', arguments: { path: 'notes.txt' } };
    const plainResult = await measure(plain, tool);
    const binaryResult = await measure(binary, tool);
    return [
      [
        'plain SDK Server, built-in read_file (own process)',
        plainResult.sequential.toFixed(0),
        '1.00×',
        plainResult.concurrent.toFixed(0),
        '1.00×',
      ],
      [
        '`agent mcp serve --http`, read_file (the CLI binary)',
        binaryResult.sequential.toFixed(0),
        ratio(binaryResult.sequential, plainResult.sequential),
        binaryResult.concurrent.toFixed(0),
        ratio(binaryResult.concurrent, plainResult.concurrent),
      ],
    ];
  } finally {
    await Promise.all(started.map((server) => server.stop()));
    await rm(workspace, { recursive: true, force: true });
  }
}

export async function run(): Promise<BenchSection> {
  const echo = defineTool({
    name: 'echo',
    description: 'Echoes the text.',
    input: z.object({ text: z.string() }),
    execute: async ({ text }) => text,
  });
  const ours = await serveHttp({ tools: [echo] });
  const plain = await plainSdkServer();
  try {
    const oursResult = await measure({ url: ours.url, headers: ours.clientConfig.headers });
    const plainResult = await measure(plain);
    const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`;
    const binaryRows = await measureBinary(ratio);
    return {
      title: `MCP serve mode — calls/s over Streamable HTTP (${calls} calls)`,
      columns: [
        'Server',
        'Calls/s one at a time',
        'vs plain SDK',
        'Calls/s 16 at once',
        'vs plain SDK',
      ],
      rows: [
        [
          'plain SDK McpServer (stateless)',
          plainResult.sequential.toFixed(0),
          '1.00×',
          plainResult.concurrent.toFixed(0),
          '1.00×',
        ],
        [
          '@agent/tools-mcp/serve serveHttp (executeTool per call)',
          oursResult.sequential.toFixed(0),
          ratio(oursResult.sequential, plainResult.sequential),
          oursResult.concurrent.toFixed(0),
          ratio(oursResult.concurrent, plainResult.concurrent),
        ],
        ...binaryRows,
      ],
      notes: [
        'Both stateless (a server instance per request), the SDK client on the same machine; higher is better.',
        '`agent mcp serve --http` (the built CLI, `apps/cli/dist/main.js`, its built-in tools, read-only mode) and a plain SDK `Server` exposing the same `read_file` tool (`bench/src/fixtures/plain-read-file-server.mjs`, calling its `execute` directly) each run in their own process; both read the same 2 KB file. Ours runs each call through `executeTool` (validation, the permission gate of the mode and rules).',
      ],
    };
  } finally {
    await ours.close();
    await plain.close();
  }
}
