// An OAuth-protected MCP server whose authorization server is on another loopback port (a local
// Keycloak on localhost:8080, a dev server's own issuer): plain http there was allowed because it
// "stays on this machine" — but while that server is not running, another user of the machine can
// listen on its port, and the client sent it the discovery requests and then the refresh token
// (with the client's secret) to its token endpoint. Real sockets: the MCP server is one in this
// process; the other user is `nobody` running the system's python3 (as root only).
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { nobodyUid, recordingServerAs, skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { McpToolAdapter } from './mcp-tool-adapter.js';
import { memoryTokenStore } from './token-store.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const refreshToken = 'refresh-token-of-the-user-0123456789abcdef';
const clientSecret = 'client-secret-of-the-user-0123456789abcdef';

/** The user's MCP server: every call is 401, its metadata names `issuer` as the authorization server. */
async function mcpServer(issuer: string) {
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((request, response) => {
    seen.push(request.headers);
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    if (request.url?.startsWith('/.well-known/oauth-protected-resource')) {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ resource: `${origin}/mcp`, authorization_servers: [issuer] }));
      return;
    }
    response.writeHead(401, {
      'www-authenticate': `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"`,
    });
    response.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, seen };
}

describe.skipIf(process.platform !== 'linux' || process.getuid?.() !== 0)(
  "an authorization server on a loopback port another user's process holds",
  () => {
    beforeEach(skipWithout('python3'));

    it('is sent nothing: no discovery, no refresh token, no client secret', async () => {
      const theirs = await recordingServerAs(nobodyUid);
      cleanups.push(() => theirs.stop());
      const mcp = await mcpServer(`http://localhost:${theirs.port}`);
      const store = memoryTokenStore();
      await store.save('docs', {
        resource: mcp.url,
        client: { client_id: 'agent-client', client_secret: clientSecret },
        tokens: {
          access_token: 'expired-access-token',
          token_type: 'Bearer',
          refresh_token: refreshToken,
        },
      });
      const connecting = McpToolAdapter.connect({
        name: 'docs',
        transport: {
          type: 'http',
          url: mcp.url,
          oauth: { openUrl: () => undefined, store, timeoutMs: 2000 },
        },
        connectTimeoutMs: 30_000,
      });
      const error = await connecting.then(
        () => undefined,
        (failure: unknown) => failure,
      );
      expect(mcp.seen.length).toBeGreaterThan(0);
      expect(await theirs.received()).toBe('');
      expect(String(error)).toContain(`belongs to another user of this machine (uid ${nobodyUid})`);
    });
  },
);
