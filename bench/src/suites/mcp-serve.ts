/**
 * Serve mode: the same echo tool served over Streamable HTTP on 127.0.0.1 by
 * `@agent/tools-mcp/serve` (each call through core's `executeTool`: validation, gate, hooks) and
 * by a plain SDK `McpServer` (stateless, as ours), both called by the SDK client — calls per second,
 * one at a time and 16 at once, in the same run.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
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

async function measure(url: string): Promise<{ sequential: number; concurrent: number }> {
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const call = () => client.callTool({ name: 'echo', arguments: { text: 'hi' } });
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
    const oursResult = await measure(ours.url);
    const plainResult = await measure(plain.url);
    const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`;
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
      ],
      notes: [
        'Both stateless (a server instance per request), the SDK client on the same machine; higher is better.',
      ],
    };
  } finally {
    await ours.close();
    await plain.close();
  }
}
