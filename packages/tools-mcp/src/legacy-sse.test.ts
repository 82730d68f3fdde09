import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { defineTool } from '@agent/core';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { McpToolAdapter } from './mcp-tool-adapter.js';
import { createToolServer } from './serve.js';
import { resultText, testContext } from './test-helpers.js';

// A server that speaks only the 2024-11-05 HTTP+SSE transport (the SDK's own SSEServerTransport):
// GET /mcp opens the event stream, messages are POSTed to the endpoint it names, and a
// Streamable HTTP POST to /mcp gets 405.
describe('a type:http server that only speaks HTTP+SSE (2024-11-05)', () => {
  let http: Server;
  let url = '';
  const transports = new Map<string, SSEServerTransport>();
  const hello = defineTool({
    name: 'hello',
    description: 'Greets.',
    input: z.object({ name: z.string() }),
    execute: async ({ name }) => `hello ${name}`,
  });

  beforeAll(async () => {
    http = createServer((request, response) => {
      const path = new URL(request.url ?? '/', 'http://x').pathname;
      if (request.method === 'GET' && path === '/mcp') {
        const transport = new SSEServerTransport('/messages', response);
        transports.set(transport.sessionId, transport);
        void createToolServer({ tools: [hello] }).connect(transport);
        return;
      }
      if (request.method === 'POST' && path === '/messages') {
        const id = new URL(request.url ?? '/', 'http://x').searchParams.get('sessionId') ?? '';
        void transports.get(id)?.handlePostMessage(request, response);
        return;
      }
      response.writeHead(405).end();
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  });
  afterAll(async () => {
    http.closeAllConnections();
    await new Promise((resolve) => http.close(resolve));
  });

  it('is detected (405 on the POST) and used over the old transport', async () => {
    const adapter = await McpToolAdapter.connect({ name: 'old', transport: { type: 'http', url } });
    try {
      const tool = adapter.tools().find((candidate) => candidate.name === 'old__hello');
      const result = await tool?.execute({ name: 'sse' }, testContext());
      expect(result === undefined ? '' : resultText(result)).toBe('hello sse');
    } finally {
      await adapter.close();
    }
  });
});
