// Kept tokens go only to the server they were obtained for. The store is keyed by the server's
// name, so when the name came to point at another URL (a config edited, a trusted project's
// `.mcp.json` naming a server like one of the user's own), the user's access token was sent as
// the bearer of the first request to the new URL. A real authorization server and MCP server
// (src/__fixtures__/oauth-server.mjs) and a second real HTTP server that records what it is sent.
import { rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type OAuthTestServer, startOAuthServer } from './__fixtures__/oauth-server.mjs';
import { McpToolAdapter } from './mcp-tool-adapter.js';
import { makeTempDir, resultText } from './test-helpers.js';
import { fileTokenStore, type McpTokenStore } from './token-store.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** What a browser does: load the authorization URL, follow its redirect to the loopback listener. */
async function browse(url: URL): Promise<void> {
  const authorize = await fetch(url, { redirect: 'manual' });
  const location = authorize.headers.get('location');
  if (location === null) throw new Error(`authorize answered ${authorize.status}`);
  await (await fetch(location)).text();
}

async function connect(url: string, store: McpTokenStore, openUrl: (url: URL) => void) {
  const adapter = await McpToolAdapter.connect({
    name: 'docs',
    transport: { type: 'http', url, oauth: { openUrl, store, timeoutMs: 2000 } },
  });
  cleanups.push(() => adapter.close());
  return adapter;
}

/** A server that records every Authorization header it is sent and answers 401. */
async function recorder(): Promise<{ url: string; seen: string[] }> {
  const seen: string[] = [];
  const server: Server = createServer((request, response) => {
    seen.push(request.headers.authorization ?? '');
    response.writeHead(401).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(resolve);
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/mcp`, seen };
}

async function signedIn(): Promise<{ auth: OAuthTestServer; file: string; access: string }> {
  const auth = await startOAuthServer();
  cleanups.push(() => auth.close());
  const dir = makeTempDir('mcp-token-audience-');
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'tokens.json');
  const adapter = await connect(auth.url, fileTokenStore(file), (url) => {
    void browse(url).catch(() => undefined);
  });
  expect(resultText(await adapter.callTool('whoami', {}))).toMatch(/scopes mcp:tools/);
  const access = [...auth.provider.accessTokens.keys()][0] ?? '';
  expect(access).not.toBe('');
  return { auth, file, access };
}

describe('kept OAuth tokens and the URL they were obtained for', () => {
  it('a server of the same name at another URL is never sent them', async () => {
    const { file, access } = await signedIn();
    const elsewhere = await recorder();
    const opened: string[] = [];
    await expect(
      connect(elsewhere.url, fileTokenStore(file), (url) => {
        opened.push(url.href);
      }),
    ).rejects.toThrow();
    expect(elsewhere.seen.length).toBeGreaterThan(0);
    for (const header of elsewhere.seen) expect(header).not.toContain(access);
  });

  it('the same URL uses them, no browser (the control)', async () => {
    const { auth, file } = await signedIn();
    const opened: string[] = [];
    const again = await connect(auth.url, fileTokenStore(file), (url) => {
      opened.push(url.href);
    });
    expect(resultText(await again.callTool('whoami', {}))).toMatch(/scopes mcp:tools/);
    expect(opened).toEqual([]);
    expect(auth.provider.stats.authorizations).toBe(1);
  });
});
