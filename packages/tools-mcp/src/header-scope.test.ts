// The `headers` given for an HTTP server (an API key) reached every host the server's 401 named:
// its protected-resource metadata, the authorization server's metadata, registration and token
// endpoints — a third party. Real HTTP servers on 127.0.0.1: the MCP server, and another origin
// that serves its OAuth metadata.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { McpToolAdapter } from './mcp-tool-adapter.js';
import { makeTempDir } from './test-helpers.js';
import { fileTokenStore } from './token-store.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function listen(server: Server): Promise<string> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

/** The MCP server (always 401) and the origin its metadata names, each recording what it got. */
async function servePair() {
  const atServer: IncomingHttpHeaders[] = [];
  const elsewhere: { path: string; headers: IncomingHttpHeaders }[] = [];
  let mcpUrl = '';
  let otherBase = '';
  const other = createServer((request, response) => {
    const path = new URL(request.url ?? '/', otherBase).pathname;
    elsewhere.push({ path, headers: request.headers });
    const json = (body: unknown) =>
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (path.startsWith('/.well-known/oauth-protected-resource'))
      json({ resource: mcpUrl, authorization_servers: [otherBase] });
    else if (path.startsWith('/.well-known/oauth-authorization-server'))
      json({
        issuer: otherBase,
        authorization_endpoint: 'https://auth.example/authorize',
        token_endpoint: `${otherBase}/token`,
        registration_endpoint: `${otherBase}/register`,
        response_types_supported: ['code'],
        code_challenge_methods_supported: ['S256'],
      });
    else if (path === '/register') {
      let body = '';
      request.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      request.on('end', () => json({ ...(JSON.parse(body) as object), client_id: 'client' }));
    } else response.writeHead(404).end();
  });
  otherBase = await listen(other);
  const mcp = createServer((request, response) => {
    atServer.push(request.headers);
    response
      .writeHead(401, {
        'www-authenticate': `Bearer resource_metadata="${otherBase}/.well-known/oauth-protected-resource/mcp"`,
      })
      .end();
  });
  mcpUrl = `${await listen(mcp)}/mcp`;
  return { mcpUrl, atServer, elsewhere };
}

describe("an HTTP server's headers stay with its origin", () => {
  it.each([
    { 'X-Api-Key': 'secret-key-0123456789' },
    { authorization: 'Token secret-key-0123456789', 'x-tenant': 'tenant-0123456789' },
  ])(
    '%o: sent to the MCP server, never to the metadata, registration or token hosts',
    async (headers) => {
      const { mcpUrl, atServer, elsewhere } = await servePair();
      const connecting = McpToolAdapter.connect({
        name: 'scoped',
        transport: {
          type: 'http',
          url: mcpUrl,
          headers,
          oauth: {
            openUrl: () => undefined,
            store: fileTokenStore(join(makeTempDir(), 'tokens.json')),
            timeoutMs: 200,
          },
        },
      });
      await expect(connecting).rejects.toThrow(/nobody authorised/);
      // The control: the server itself got them.
      const [name, value] = Object.entries(headers)[0] ?? [];
      expect(atServer[0]?.[String(name).toLowerCase()]).toBe(value);
      // Discovery, metadata and registration all happened elsewhere, without them.
      expect(elsewhere.map((request) => request.path)).toEqual(
        expect.arrayContaining([
          '/.well-known/oauth-protected-resource/mcp',
          '/.well-known/oauth-authorization-server',
          '/register',
        ]),
      );
      const sent = JSON.stringify(elsewhere.map((request) => request.headers));
      for (const secret of Object.values(headers)) expect(sent).not.toContain(secret);
    },
  );
});
