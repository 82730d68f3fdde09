// An HTTP MCP server that redirects: to another origin, the client stops there (the user's
// headers and tokens must not follow to a host the user never named); within its own origin, the
// redirect is followed. Real HTTP servers on 127.0.0.1.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { McpToolAdapter } from './mcp-tool-adapter.js';
import { resultText, testContext } from './test-helpers.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A raw, stateless MCP endpoint: initialize, tools/list (one tool `where`), tools/call. */
async function answerMcp(request: IncomingMessage, response: ServerResponse, name: string) {
  if (request.method !== 'POST') {
    request.resume();
    response.writeHead(405).end();
    return;
  }
  let body = '';
  for await (const chunk of request) body += chunk;
  const { id, method, params } = JSON.parse(body) as {
    id?: number;
    method: string;
    params: { protocolVersion?: string };
  };
  if (id === undefined) {
    response.writeHead(202).end();
    return;
  }
  const result =
    method === 'initialize'
      ? {
          protocolVersion: params.protocolVersion,
          capabilities: { tools: {} },
          serverInfo: { name, version: '1' },
        }
      : method === 'tools/list'
        ? { tools: [{ name: 'where', inputSchema: { type: 'object' } }] }
        : { content: [{ type: 'text', text: `answered by ${name}` }] };
  response
    .writeHead(200, { 'content-type': 'application/json' })
    .end(JSON.stringify({ jsonrpc: '2.0', id, result }));
}

async function listen(handler: (request: IncomingMessage, response: ServerResponse) => void) {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as { port: number }).port;
}

describe('an HTTP server that redirects', () => {
  it.each([301, 302, 303, 307, 308])(
    '%i to another origin: not followed, the user’s headers never reach it',
    async (status) => {
      const seen: string[] = [];
      const other = await listen((request, response) => {
        seen.push(JSON.stringify(request.headers));
        void answerMcp(request, response, 'other');
      });
      const port = await listen((request, response) => {
        request.resume();
        response.writeHead(status, { location: `http://localhost:${other}/mcp` }).end();
      });
      await expect(
        McpToolAdapter.connect({
          name: 'redirecting',
          transport: {
            type: 'http',
            url: `http://127.0.0.1:${port}/mcp`,
            headers: { 'X-Api-Key': 'secret-key', Authorization: 'Bearer secret-token' },
          },
        }),
      ).rejects.toThrow(/Cannot connect to MCP server "redirecting"/);
      expect(seen).toEqual([]);
    },
  );

  it('307 within its own origin: followed, the call answered there', async () => {
    const port = await listen((request, response) => {
      if (request.url === '/mcp') {
        request.resume();
        response.writeHead(307, { location: '/v2/mcp' }).end();
      } else void answerMcp(request, response, 'v2');
    });
    const adapter = await McpToolAdapter.connect({
      name: 'moved',
      transport: { type: 'http', url: `http://127.0.0.1:${port}/mcp` },
    });
    try {
      const tool = adapter.tools().find((each) => each.name === 'moved__where');
      const result = await tool?.execute({}, testContext());
      expect(result && resultText(result)).toContain('answered by v2');
    } finally {
      await adapter.close();
    }
  });
});
