// Tokens the adapter's own OAuth client obtains are hidden like configured credentials: a server
// echoing its Authorization header, its refresh tokens or an error quoting them shows the model
// a marker, from the first call on and after a refresh. The authorization server and the
// protected MCP server are real, in-process on 127.0.0.1 (src/__fixtures__/oauth-server.mjs).
import { afterEach, describe, expect, it } from 'vitest';
import { type OAuthTestServer, startOAuthServer } from './__fixtures__/oauth-server.mjs';
import { McpToolAdapter } from './mcp-tool-adapter.js';
import { modelText, testContext } from './test-helpers.js';
import { type McpStoredAuth, memoryTokenStore } from './token-store.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Follows the authorization URL like a browser: GET /authorize, then its 302 to the listener. */
async function browse(url: URL): Promise<void> {
  const authorize = await fetch(url, { redirect: 'manual' });
  const location = authorize.headers.get('location');
  if (authorize.status !== 302 || location === null)
    throw new Error(`authorize answered ${authorize.status}: ${await authorize.text()}`);
  await (await fetch(location)).text();
}

async function connected(): Promise<{
  auth: OAuthTestServer;
  adapter: McpToolAdapter;
  stored: () => Promise<McpStoredAuth | undefined>;
}> {
  const auth = await startOAuthServer({ echo: true });
  cleanups.push(() => auth.close());
  const store = memoryTokenStore();
  const adapter = await McpToolAdapter.connect({
    name: 'secure',
    transport: {
      type: 'http',
      url: auth.url,
      oauth: {
        openUrl: (url) => {
          void browse(url).catch(() => undefined);
        },
        store,
      },
    },
  });
  cleanups.push(() => adapter.close());
  return { auth, adapter, stored: async () => await store.load('secure') };
}

async function call(adapter: McpToolAdapter, name: string): Promise<string> {
  const tool = adapter.tools().find((each) => each.name === `secure__${name}`);
  if (tool === undefined) throw new Error(`no tool ${name}`);
  return tool.execute({}, testContext()).then(
    (result) => modelText(result),
    (error: Error) => error.message,
  );
}

describe('OAuth tokens the adapter obtained', () => {
  it('are hidden in a result that echoes them (text, structured content, URL-encoded)', async () => {
    const { adapter, stored } = await connected();
    const text = await call(adapter, 'leak');
    const tokens = (await stored())?.tokens;
    const access = tokens?.access_token ?? '';
    const refresh = tokens?.refresh_token ?? '';
    expect(access).toMatch(/^[0-9a-f-]{36}$/);
    expect(refresh).toMatch(/^[0-9a-f-]{36}$/);
    expect(text).toContain('authorization=Bearer [redacted:OAuth access token]');
    expect(text).toContain('token=[redacted:OAuth access token]');
    expect(text).toContain('refresh=[redacted:OAuth refresh token]');
    expect(text).not.toContain(access);
    expect(text).not.toContain(refresh);
    expect(text).not.toContain(encodeURIComponent(access));
  });

  it('are hidden in an error that quotes them', async () => {
    const { adapter, stored } = await connected();
    const text = await call(adapter, 'leak-error');
    const access = (await stored())?.tokens?.access_token ?? '';
    expect(text).toContain('rejected request with authorization');
    expect(text).toContain('[redacted:OAuth access token]');
    expect(text).not.toContain(access);
  });

  it('a token obtained by a refresh is hidden too, and so is the one before it', async () => {
    const { auth, adapter, stored } = await connected();
    await call(adapter, 'whoami');
    const first = (await stored())?.tokens;
    auth.provider.expireAccessTokens();
    await call(adapter, 'whoami');
    expect(auth.provider.stats.refreshes).toBe(1);
    const second = (await stored())?.tokens;
    expect(second?.access_token).not.toBe(first?.access_token);
    const text = await call(adapter, 'leak');
    for (const value of [
      first?.access_token,
      first?.refresh_token,
      second?.access_token,
      second?.refresh_token,
    ])
      expect(text).not.toContain(value);
    expect(text).toContain('Bearer [redacted:OAuth access token]');
  });
});
