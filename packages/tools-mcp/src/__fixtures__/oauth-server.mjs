// A real OAuth 2.1 authorization server and an MCP resource server behind it, in-process on
// 127.0.0.1 (port 0), built from the SDK's server-side auth (mcpAuthRouter: metadata, dynamic
// client registration, /authorize with PKCE, /token with code and refresh grants;
// requireBearerAuth for the MCP endpoint). Test-only: nothing here mocks the adapter.
//   tool "whoami"  needs scope mcp:tools; answers with the client id and the token's scopes
//   tool "admin"   needs mcp:tools and mcp:admin: a token without it gets 403 insufficient_scope
// With `{ echo: true }`, tools that leak what a careless server could (needs mcp:tools):
//   tool "leak"       answers with the request's Authorization header, the bare access token,
//                     and the caller's refresh tokens, in text and in structured content
//   tool "leak-error" fails with an error message quoting the Authorization header
import { randomUUID } from 'node:crypto';
import { InvalidGrantError, InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import {
  getOAuthProtectedResourceMetadataUrl,
  mcpAuthRouter,
} from '@modelcontextprotocol/sdk/server/auth/router.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import express from 'express';

class Provider {
  clients = new Map();
  codes = new Map();
  accessTokens = new Map();
  refreshTokens = new Map();
  stats = { registrations: 0, authorizations: 0, codeExchanges: 0, refreshes: 0, scopesAsked: [] };

  clientsStore = {
    getClient: async (id) => this.clients.get(id),
    registerClient: async (client) => {
      this.stats.registrations++;
      this.clients.set(client.client_id, client);
      return client;
    },
  };

  async authorize(client, params, res) {
    this.stats.authorizations++;
    this.stats.scopesAsked.push((params.scopes ?? []).join(' '));
    const code = randomUUID();
    this.codes.set(code, { client, params });
    const target = new URL(params.redirectUri);
    target.searchParams.set('code', code);
    if (params.state !== undefined) target.searchParams.set('state', params.state);
    res.redirect(target.href);
  }

  async challengeForAuthorizationCode(_client, code) {
    const entry = this.codes.get(code);
    if (entry === undefined) throw new InvalidGrantError('unknown code');
    return entry.params.codeChallenge;
  }

  async exchangeAuthorizationCode(client, code) {
    const entry = this.codes.get(code);
    if (entry === undefined || entry.client.client_id !== client.client_id)
      throw new InvalidGrantError('unknown code');
    this.codes.delete(code);
    this.stats.codeExchanges++;
    return this.#issue(client.client_id, entry.params.scopes ?? [], entry.params.resource);
  }

  async exchangeRefreshToken(client, refreshToken) {
    const entry = this.refreshTokens.get(refreshToken);
    if (entry === undefined || entry.clientId !== client.client_id)
      throw new InvalidGrantError('unknown refresh token');
    this.refreshTokens.delete(refreshToken);
    this.stats.refreshes++;
    return this.#issue(client.client_id, entry.scopes, entry.resource);
  }

  async verifyAccessToken(token) {
    const entry = this.accessTokens.get(token);
    if (entry === undefined) throw new InvalidTokenError('unknown token');
    return { token, clientId: entry.clientId, scopes: entry.scopes, expiresAt: entry.expiresAt };
  }

  /** Every access token issued so far expires now (refresh tokens stay valid). */
  expireAccessTokens() {
    for (const entry of this.accessTokens.values()) entry.expiresAt = 1;
  }

  #issue(clientId, scopes, resource) {
    const access = randomUUID();
    const refresh = randomUUID();
    const expiresAt = Math.floor(Date.now() / 1000) + 3600;
    this.accessTokens.set(access, { clientId, scopes, expiresAt });
    this.refreshTokens.set(refresh, { clientId, scopes, resource });
    return {
      access_token: access,
      token_type: 'bearer',
      expires_in: 3600,
      refresh_token: refresh,
      scope: scopes.join(' '),
    };
  }
}

/** Starts both servers on one 127.0.0.1 port; `close()` stops them. */
export async function startOAuthServer(options = {}) {
  const app = express();
  const server = await new Promise((resolve, reject) => {
    const listening = app.listen(0, '127.0.0.1', (error) => (error ? reject(error) : resolve(listening)));
  });
  const base = new URL(`http://127.0.0.1:${server.address().port}`);
  const mcpUrl = new URL('/mcp', base);
  const provider = new Provider();
  // The resource's metadata advertises only mcp:tools; mcp:admin is asked for on step-up.
  app.use(
    mcpAuthRouter({
      provider,
      issuerUrl: base,
      resourceServerUrl: mcpUrl,
      scopesSupported: ['mcp:tools'],
    }),
  );
  const resourceMetadataUrl = getOAuthProtectedResourceMetadataUrl(mcpUrl);
  const bearer = (requiredScopes) =>
    requireBearerAuth({ verifier: provider, requiredScopes, resourceMetadataUrl });
  const basic = bearer(['mcp:tools']);
  const admin = bearer(['mcp:tools', 'mcp:admin']);
  const seenAuthorization = [];
  app.post(
    '/mcp',
    express.json(),
    (req, res, next) => {
      seenAuthorization.push(req.headers.authorization ?? '');
      const wantsAdmin = req.body?.method === 'tools/call' && req.body?.params?.name === 'admin';
      (wantsAdmin ? admin : basic)(req, res, next);
    },
    async (req, res) => {
      const mcp = new McpServer({ name: 'oauth-protected', version: '1.0.0' });
      mcp.registerTool('whoami', { description: 'Who is calling, and with which scopes.' }, (extra) => ({
        content: [
          { type: 'text', text: `client ${extra.authInfo?.clientId} scopes ${extra.authInfo?.scopes.join(' ')}` },
        ],
      }));
      mcp.registerTool('admin', { description: 'Needs the mcp:admin scope.' }, () => ({
        content: [{ type: 'text', text: 'admin ok' }],
      }));
      if (options.echo === true) {
        const authorization = req.headers.authorization ?? '';
        const access = authorization.replace(/^Bearer /i, '');
        const clientId = req.auth?.clientId;
        const refresh = [...provider.refreshTokens]
          .filter(([, entry]) => entry.clientId === clientId)
          .map(([token]) => token);
        mcp.registerTool('leak', { description: 'Echoes the credentials it was sent.' }, () => ({
          content: [
            {
              type: 'text',
              text: `debug: authorization=${authorization}\ntoken=${access}\nrefresh=${refresh.join(',')}\nurl-encoded=${encodeURIComponent(authorization)}`,
            },
          ],
          structuredContent: { headers: { authorization }, refresh },
        }));
        mcp.registerTool('leak-error', { description: 'Fails quoting its credentials.' }, () => {
          throw new Error(`rejected request with authorization "${authorization}"`);
        });
      }
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on('close', () => {
        void transport.close();
        void mcp.close();
      });
      await mcp.connect(transport);
      await transport.handleRequest(req, res, req.body);
    },
  );
  const notAllowed = (_req, res) => res.status(405).set('Allow', 'POST').end();
  app.get('/mcp', notAllowed);
  app.delete('/mcp', notAllowed);
  return {
    url: mcpUrl.href,
    provider,
    /** The Authorization headers the MCP endpoint received, in order. */
    seenAuthorization,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
