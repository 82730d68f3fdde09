import { readFileSync, rmSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type OAuthTestServer, startOAuthServer } from './__fixtures__/oauth-server.mjs';
import { McpToolAdapter } from './mcp-tool-adapter.js';
import { makeTempDir, resultText } from './test-helpers.js';
import { fileTokenStore, type McpTokenStore, memoryTokenStore } from './token-store.js';

// The adapter's own OAuth against a real authorization server and a protected MCP server, both
// in-process on 127.0.0.1 (src/__fixtures__/oauth-server.mjs, built on the SDK's server-side
// auth). The "browser" follows the authorization URL like a user agent: GET /authorize, then the
// 302 back to the adapter's loopback listener.

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function server(): Promise<OAuthTestServer> {
  const started = await startOAuthServer();
  cleanups.push(() => started.close());
  return started;
}

/** What a browser does with the URL: load it, follow the redirect to the loopback listener. */
async function browse(url: URL): Promise<void> {
  const authorize = await fetch(url, { redirect: 'manual' });
  const location = authorize.headers.get('location');
  if (authorize.status !== 302 || location === null) {
    throw new Error(`authorize answered ${authorize.status}: ${await authorize.text()}`);
  }
  const callback = await fetch(location);
  await callback.text();
}

interface Browser {
  opened: URL[];
  openUrl: (url: URL) => Promise<void>;
}

/** `mode: 'later'` returns from openUrl at once (a browser tab opens); 'before' returns after the redirect. */
function browser(mode: 'later' | 'before'): Browser {
  const opened: URL[] = [];
  return {
    opened,
    openUrl: async (url) => {
      opened.push(url);
      if (mode === 'before') await browse(url);
      else void browse(url).catch(() => undefined);
    },
  };
}

async function connect(
  url: string,
  options: { openUrl: (url: URL) => Promise<void>; store: McpTokenStore },
  errors: Error[] = [],
): Promise<McpToolAdapter> {
  const adapter = await McpToolAdapter.connect({
    name: 'secure',
    transport: { type: 'http', url, oauth: { openUrl: options.openUrl, store: options.store } },
    onError: (error) => errors.push(error),
  });
  cleanups.push(() => adapter.close());
  return adapter;
}

describe('McpToolAdapter OAuth against a real authorization server (127.0.0.1)', () => {
  it('authorization code + PKCE with dynamic registration and a loopback redirect; tokens kept in a 0600 file', async () => {
    const auth = await server();
    const dir = makeTempDir('mcp-oauth-flow-');
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'tokens.json');
    const user = browser('later');
    const errors: Error[] = [];
    const adapter = await connect(
      auth.url,
      { openUrl: user.openUrl, store: fileTokenStore(file) },
      errors,
    );

    expect(adapter.tools().map((tool) => tool.name)).toEqual(['secure__whoami', 'secure__admin']);
    const whoami = resultText(await adapter.callTool('whoami', {}));
    expect(whoami).toMatch(/^client \S+ scopes mcp:tools$/);

    // One registration, one authorization in the browser, with PKCE (S256), the resource, the scope.
    expect(auth.provider.stats).toMatchObject({
      registrations: 1,
      authorizations: 1,
      codeExchanges: 1,
    });
    const [authorizeUrl] = user.opened;
    expect(user.opened).toHaveLength(1);
    expect(authorizeUrl?.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorizeUrl?.searchParams.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    expect(authorizeUrl?.searchParams.get('resource')).toBe(auth.url);
    expect(authorizeUrl?.searchParams.get('scope')).toBe('mcp:tools');
    expect(authorizeUrl?.searchParams.get('redirect_uri')).toMatch(
      /^http:\/\/127\.0\.0\.1:\d+\/callback$/,
    );

    // The tokens are in the file, readable by the owner only, and nowhere in what was reported.
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const stored = JSON.parse(readFileSync(file, 'utf8')) as {
      secure: { tokens: { access_token: string; refresh_token: string } };
    };
    const { access_token: access, refresh_token: refresh } = stored.secure.tokens;
    expect(auth.provider.accessTokens.has(access)).toBe(true);
    const reported = errors.map((error) => `${error.message} ${String(error.cause)}`).join('\n');
    expect(reported).not.toContain(access);
    expect(reported).not.toContain(refresh);
    expect(whoami).not.toContain(access);

    // Another adapter (another run of the app) with the same store needs no browser.
    const again = browser('later');
    const second = await connect(auth.url, { openUrl: again.openUrl, store: fileTokenStore(file) });
    expect(resultText(await second.callTool('whoami', {}))).toBe(whoami);
    expect(again.opened).toEqual([]);
    expect(auth.provider.stats.authorizations).toBe(1);
  });

  it('refreshes an expired access token with the refresh token, without the browser', async () => {
    const auth = await server();
    const user = browser('later');
    const adapter = await connect(auth.url, { openUrl: user.openUrl, store: memoryTokenStore() });
    await adapter.callTool('whoami', {});
    auth.provider.expireAccessTokens();
    expect(resultText(await adapter.callTool('whoami', {}))).toMatch(/scopes mcp:tools$/);
    expect(auth.provider.stats).toMatchObject({ authorizations: 1, refreshes: 1 });
    expect(user.opened).toHaveLength(1);
  });

  it('steps up on 403 insufficient_scope mid-session: authorises again with the bigger scope, then repeats the call', async () => {
    const auth = await server();
    const user = browser('later');
    const adapter = await connect(auth.url, { openUrl: user.openUrl, store: memoryTokenStore() });
    expect(resultText(await adapter.callTool('admin', {}))).toBe('admin ok');
    expect(auth.provider.stats.scopesAsked).toEqual(['mcp:tools', 'mcp:tools mcp:admin']);
    expect(user.opened).toHaveLength(2);
    // The new token carries both scopes.
    expect(resultText(await adapter.callTool('whoami', {}))).toMatch(/scopes mcp:tools mcp:admin$/);
  });

  it('works when openUrl returns only after the browser has come back', async () => {
    const auth = await server();
    const user = browser('before');
    const adapter = await connect(auth.url, { openUrl: user.openUrl, store: memoryTokenStore() });
    expect(resultText(await adapter.callTool('whoami', {}))).toMatch(/scopes mcp:tools$/);
    expect(auth.provider.stats.authorizations).toBe(1);
  });

  it('fails with a readable error, not a hang, when no openUrl is given', async () => {
    const auth = await server();
    await expect(
      McpToolAdapter.connect({
        name: 'secure',
        transport: { type: 'http', url: auth.url, oauth: { store: memoryTokenStore() } },
      }),
    ).rejects.toThrow(/MCP server "secure": authorization is needed but no openUrl was given/);
  });

  // An app with nobody to sign in (no terminal, CI) says so by throwing: the connection failed
  // only after the five-minute wait for a browser that could never come back.
  it.each([
    [
      'throws',
      () => {
        throw new NobodyToSignIn();
      },
    ],
    [
      'rejects',
      async () => {
        throw new NobodyToSignIn();
      },
    ],
  ])(
    'an openUrl that %s fails the connection at once, its error as the cause',
    async (_how, openUrl) => {
      const auth = await server();
      const failure = await McpToolAdapter.connect({
        name: 'secure',
        // The default wait for the browser is five minutes: the test's own timeout ends far sooner.
        transport: { type: 'http', url: auth.url, oauth: { openUrl, store: memoryTokenStore() } },
      }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(Error);
      expect((failure as Error).message).toBe('MCP server "secure": nobody is here to sign in');
      expect((failure as Error).cause).toBeInstanceOf(NobodyToSignIn);
      expect(auth.provider.stats.authorizations).toBe(0);
    },
  );
});

class NobodyToSignIn extends Error {
  constructor() {
    super('nobody is here to sign in');
  }
}
