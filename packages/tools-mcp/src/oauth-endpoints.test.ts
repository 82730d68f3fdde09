// The adapter's own OAuth client against authorization server metadata that would send secrets in
// clear or skip PKCE. One real HTTP server on 127.0.0.1 plays the MCP server and the authorization
// server; the names `auth.test` and `mcp.test` stand for other hosts and are sent to it by the
// test's fetch (the one thing faked: there is no second host here). Before the guard, each hostile
// case registered a client at, or opened the browser for, the endpoint it named.
import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { McpToolAdapter } from './mcp-tool-adapter.js';
import { memoryTokenStore } from './token-store.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

interface Hostile {
  /** The server's port, and the paths it was asked for (with the Host each came for). */
  port: number;
  hits: string[];
}

type Metadata = (names: { local: string; other: string; mcp: string }) => {
  authorizationServer: string;
  metadata: Record<string, unknown>;
};

/** An MCP endpoint that answers 401, its resource metadata and the authorization server's. */
async function hostileServer(describe: Metadata): Promise<Hostile> {
  const hits: string[] = [];
  const server = createServer((request, response) => {
    const port = (server.address() as { port: number }).port;
    const names = {
      local: `http://127.0.0.1:${port}`,
      other: `http://auth.test:${port}`,
      mcp: `http://mcp.test:${port}`,
    };
    const { authorizationServer, metadata } = describe(names);
    const path = new URL(request.url ?? '/', names.local).pathname;
    hits.push(path);
    const json = (body: unknown) =>
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    const resource = `http://${request.headers['x-dialed-host'] ?? `127.0.0.1:${port}`}/mcp`;
    if (path === '/mcp') {
      response
        .writeHead(401, {
          'www-authenticate': `Bearer resource_metadata="${resource.replace('/mcp', '/.well-known/oauth-protected-resource/mcp')}"`,
        })
        .end();
    } else if (path.startsWith('/.well-known/oauth-protected-resource')) {
      json({ resource, authorization_servers: [authorizationServer] });
    } else if (path.startsWith('/.well-known/oauth-authorization-server')) {
      json(metadata);
    } else if (path === '/register' && request.method === 'POST') {
      let body = '';
      request.on('data', (chunk) => {
        body += chunk;
      });
      request.on('end', () => json({ ...(JSON.parse(body) as object), client_id: 'client-1' }));
    } else {
      response.writeHead(404).end();
    }
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as { port: number }).port, hits };
}

/** A fetch that sends `*.test` to 127.0.0.1, as a hosts file would, telling the server the name. */
function hostsFetch(): typeof fetch {
  return (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const dialed = url.host;
    if (url.hostname.endsWith('.test')) url.hostname = '127.0.0.1';
    const headers = new Headers(init?.headers);
    headers.set('x-dialed-host', dialed);
    return fetch(url, { ...init, headers });
  };
}

const good = (base: string) => ({
  issuer: base,
  authorization_endpoint: `${base}/authorize`,
  token_endpoint: `${base}/token`,
  registration_endpoint: `${base}/register`,
  response_types_supported: ['code'],
  code_challenge_methods_supported: ['S256'],
});

async function signIn(hostile: Hostile, mcpUrl?: string) {
  const opened: string[] = [];
  const connecting = McpToolAdapter.connect({
    name: 'hostile',
    transport: {
      type: 'http',
      url: mcpUrl ?? `http://127.0.0.1:${hostile.port}/mcp`,
      fetch: hostsFetch(),
      oauth: {
        openUrl: (target) => {
          opened.push(target.href);
        },
        store: memoryTokenStore(),
        timeoutMs: 300,
      },
    },
  });
  const error = await connecting.then(
    async (adapter) => {
      await adapter.close();
      return undefined;
    },
    (caught: unknown) => caught as Error,
  );
  return { opened, error };
}

describe('OAuth endpoints a server names: plain http to another host and no PKCE are refused', () => {
  it.each<[string, Metadata, RegExp]>([
    [
      'the authorization server itself on plain http elsewhere',
      ({ other }) => ({ authorizationServer: other, metadata: good(other) }),
      /authorization endpoint http:\/\/auth\.test:\d+\/\.well-known\/oauth-authorization-server is plain http to another host/,
    ],
    [
      'a plain-http token endpoint elsewhere',
      ({ local, other }) => ({
        authorizationServer: local,
        metadata: { ...good(local), token_endpoint: `${other}/token` },
      }),
      /token_endpoint http:\/\/auth\.test:\d+\/token is plain http to another host/,
    ],
    [
      'a plain-http registration endpoint elsewhere',
      ({ local, other }) => ({
        authorizationServer: local,
        metadata: { ...good(local), registration_endpoint: `${other}/register` },
      }),
      /registration_endpoint http:\/\/auth\.test:\d+\/register is plain http/,
    ],
    [
      'a plain-http authorization endpoint elsewhere',
      ({ local, other }) => ({
        authorizationServer: local,
        metadata: { ...good(local), authorization_endpoint: `${other}/authorize` },
      }),
      /authorization_endpoint http:\/\/auth\.test:\d+\/authorize is plain http/,
    ],
    [
      'a plain-http revocation endpoint elsewhere',
      ({ local, other }) => ({
        authorizationServer: local,
        metadata: { ...good(local), revocation_endpoint: `${other}/revoke` },
      }),
      /revocation_endpoint http:\/\/auth\.test:\d+\/revoke is plain http/,
    ],
    [
      'no code_challenge_methods_supported',
      ({ local }) => {
        const { code_challenge_methods_supported: _absent, ...metadata } = good(local);
        return { authorizationServer: local, metadata };
      },
      /does not advertise PKCE with S256 \(code_challenge_methods_supported: null\)/,
    ],
    [
      'PKCE with plain only',
      ({ local }) => ({
        authorizationServer: local,
        metadata: { ...good(local), code_challenge_methods_supported: ['plain'] },
      }),
      /does not advertise PKCE with S256 \(code_challenge_methods_supported: \["plain"\]\)/,
    ],
    [
      'PKCE methods that are not a list',
      ({ local }) => ({
        authorizationServer: local,
        metadata: { ...good(local), code_challenge_methods_supported: 'S256' },
      }),
      /does not advertise PKCE with S256/,
    ],
  ])('%s: nothing registered, nothing opened', async (_label, metadata, message) => {
    const hostile = await hostileServer(metadata);
    const { opened, error } = await signIn(hostile);
    expect(error?.message).toMatch(message);
    expect(error?.message).toContain('MCP server "hostile"');
    expect(opened).toEqual([]);
    expect(hostile.hits).not.toContain('/register');
    expect(hostile.hits).not.toContain('/token');
  });

  it.each<[string, Metadata, string | undefined]>([
    [
      'every endpoint on 127.0.0.1',
      ({ local }) => ({ authorizationServer: local, metadata: good(local) }),
      undefined,
    ],
    [
      'https endpoints on other hosts',
      ({ local }) => ({
        authorizationServer: local,
        metadata: { ...good(local), authorization_endpoint: 'https://auth.example/authorize' },
      }),
      undefined,
    ],
    [
      'plain http on localhost',
      ({ local }) => {
        const localhost = local.replace('127.0.0.1', 'localhost');
        return {
          authorizationServer: local,
          metadata: { ...good(local), authorization_endpoint: `${localhost}/authorize` },
        };
      },
      undefined,
    ],
    [
      'plain http on the MCP server’s own host, which the user named with http',
      ({ mcp }) => ({ authorizationServer: mcp, metadata: good(mcp) }),
      'mcp.test',
    ],
  ])('the control — %s: the browser is opened', async (_label, metadata, host) => {
    const hostile = await hostileServer(metadata);
    const { opened, error } = await signIn(
      hostile,
      host === undefined ? undefined : `http://${host}:${hostile.port}/mcp`,
    );
    expect(error?.message).toMatch(/nobody authorised/);
    expect(opened).toHaveLength(1);
    expect(hostile.hits).toContain('/register');
  });
});
