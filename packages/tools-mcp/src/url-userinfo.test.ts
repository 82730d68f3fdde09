// An HTTP server configured as `https://user:pass@host/mcp` (as curl takes it): fetch refuses a
// URL that holds credentials, so the server could not be used at all, and the error quoted the
// password to the terminal. Now they go as Basic authorization and the URL is sent without them.
// Real HTTP servers on 127.0.0.1.
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

/** A stateless MCP endpoint with one tool `who`, answering only the right Basic credentials. */
async function answer(request: IncomingMessage, response: ServerResponse, expected: string) {
  let body = '';
  for await (const chunk of request) body += chunk;
  if (request.method !== 'POST') return void response.writeHead(405).end();
  if (request.headers.authorization !== expected) return void response.writeHead(403).end();
  const { id, method, params } = JSON.parse(body) as {
    id?: number;
    method: string;
    params: { protocolVersion?: string };
  };
  if (id === undefined) return void response.writeHead(202).end();
  const result =
    method === 'initialize'
      ? {
          protocolVersion: params.protocolVersion,
          capabilities: { tools: {} },
          serverInfo: { name: 's', version: '1' },
        }
      : method === 'tools/list'
        ? { tools: [{ name: 'who', inputSchema: { type: 'object' } }] }
        : { content: [{ type: 'text', text: `url ${request.url}` }] };
  response
    .writeHead(200, { 'content-type': 'application/json' })
    .end(JSON.stringify({ jsonrpc: '2.0', id, result }));
}

async function listen(expected: string, seen: string[]): Promise<number> {
  const server = createServer((request, response) => {
    seen.push(request.headers.authorization ?? '');
    void answer(request, response, expected);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as { port: number }).port;
}

const basic = (text: string) => `Basic ${Buffer.from(text, 'utf8').toString('base64')}`;

describe('credentials in an HTTP server’s URL', () => {
  it('go as Basic authorization (percent-decoded, UTF-8); the URL is sent without them', async () => {
    const seen: string[] = [];
    const port = await listen(basic('alice:p@ss wörd'), seen);
    const adapter = await McpToolAdapter.connect({
      name: 'basic',
      transport: { type: 'http', url: `http://alice:p%40ss%20w%C3%B6rd@127.0.0.1:${port}/mcp?x=1` },
    });
    try {
      const tool = adapter.tools().find((each) => each.name === 'basic__who');
      const result = await tool?.execute({}, testContext());
      expect(result && resultText(result)).toContain('url /mcp?x=1');
      expect(seen.length).toBeGreaterThan(0);
      expect(new Set(seen)).toEqual(new Set([basic('alice:p@ss wörd')]));
    } finally {
      await adapter.close();
    }
  });

  it('an Authorization header of the configuration wins', async () => {
    const seen: string[] = [];
    const port = await listen('Bearer configured', seen);
    const adapter = await McpToolAdapter.connect({
      name: 'bearer',
      transport: {
        type: 'http',
        url: `http://alice:secret@127.0.0.1:${port}/mcp`,
        headers: { authorization: 'Bearer configured' },
      },
    });
    await adapter.close();
    expect(new Set(seen)).toEqual(new Set(['Bearer configured']));
  });

  it('a server that cannot be reached: the error never quotes the password', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise((resolve) => closed.close(resolve));
    const error = await McpToolAdapter.connect({
      name: 'gone',
      transport: { type: 'http', url: `http://alice:s3cretPassw0rd@127.0.0.1:${port}/mcp` },
    }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(Error);
    const text = `${(error as Error).message} ${String((error as Error).cause ?? '')}`;
    expect(text).toMatch(/Cannot connect to MCP server "gone"/);
    expect(text).not.toContain('s3cretPassw0rd');
    expect(text).not.toContain('credentials');
  });
});
