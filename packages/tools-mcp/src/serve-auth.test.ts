import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { defineTool } from '@agent/core';
import {
  discoverOAuthProtectedResourceMetadata,
  extractWWWAuthenticateParams,
} from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { McpToolAdapter } from './mcp-tool-adapter.js';
import { createBearerCheck, generateBearerToken, readBearerTokenFile } from './serve-auth.js';
import { type HttpToolServer, serveHttp } from './serve-http.js';
import { makeTempDir, resultText, testContext } from './test-helpers.js';

const echo = defineTool({
  name: 'echo',
  description: 'Echoes the text.',
  input: z.object({ text: z.string() }),
  policy: { permission: 'read-only' },
  execute: async ({ text }) => text,
});

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

function tempDir(): string {
  const dir = makeTempDir('serve-token-');
  closers.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function served(options: Partial<Parameters<typeof serveHttp>[0]> = {}) {
  const server = await serveHttp({ tools: [echo], ...options });
  closers.push(server.close);
  return server;
}

function tokenOf(server: HttpToolServer): string {
  if (server.token === undefined) throw new Error('served without a token');
  return server.token;
}

const initialize = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 't', version: '1' },
  },
});
const mcpHeaders = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
};

/** One raw request (node:http: any method, repeated headers); resolves with status and headers. */
function send(
  url: string,
  options: { method?: string; headers?: Record<string, string | string[]>; body?: string } = {},
): Promise<{
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      url,
      { method: options.method ?? 'POST', headers: options.headers ?? {} },
      (response) => {
        let body = '';
        response.setEncoding('utf8').on('data', (chunk: string) => {
          body += chunk;
        });
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body }),
        );
      },
    );
    request.on('error', reject);
    request.end(options.body);
  });
}

describe('serveHttp: the bearer token', () => {
  it('answers 401 with the challenge to every method and path without a token', async () => {
    const server = await served();
    const origin = new URL(server.url).origin;
    const metadata = `${origin}/.well-known/oauth-protected-resource/mcp`;
    const requests: [string, string, string | undefined][] = [
      ['POST', '/mcp', initialize],
      ['POST', '/mcp', JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' })],
      [
        'POST',
        '/mcp',
        JSON.stringify({
          jsonrpc: '2.0',
          id: 3,
          method: 'tools/call',
          params: { name: 'echo', arguments: { text: 'hi' } },
        }),
      ],
      ['POST', '/mcp', 'not json'],
      ['GET', '/mcp', undefined], // the SSE stream
      ['DELETE', '/mcp', undefined], // ending a session
      ['PUT', '/mcp', undefined],
      ['PATCH', '/mcp', undefined],
      ['OPTIONS', '/mcp', undefined],
      ['HEAD', '/mcp', undefined],
      ['GET', '/', undefined],
      ['POST', '/other', initialize],
      ['GET', '/mcp/../mcp', undefined],
      ['GET', '/MCP', undefined],
      ['POST', '/.well-known/oauth-protected-resource/mcp', initialize],
      ['DELETE', '/.well-known/oauth-protected-resource', undefined],
      ['GET', '/.well-known/oauth-authorization-server', undefined],
    ];
    for (const [method, path, body] of requests) {
      const response = await send(`${origin}${path}`, {
        method,
        headers: { ...mcpHeaders, accept: 'application/json, text/event-stream' },
        ...(body === undefined ? {} : { body }),
      });
      expect({ method, path, status: response.status }).toEqual({ method, path, status: 401 });
      // No credentials sent: no error code (RFC 6750 §3.1).
      expect(response.headers['www-authenticate']).toBe(`Bearer resource_metadata="${metadata}"`);
    }
  });

  it('refuses every token but the right one, whatever differs', async () => {
    const server = await served();
    const token = tokenOf(server);
    const flip = (character: string) => (character === 'A' ? 'B' : 'A');
    const wrong = [
      `Bearer ${token.slice(0, -1)}${flip(token.slice(-1))}`, // the last character
      `Bearer ${flip(token.slice(0, 1))}${token.slice(1)}`, // the first character
      `Bearer ${token.slice(0, -1)}`, // one shorter
      `Bearer ${token}A`, // one longer
      `Bearer ${token}${token}`,
      `Bearer ${token.toUpperCase()}`,
      `Bearer ${generateBearerToken()}`, // another server's token
      'Bearer x',
      'Bearer ',
      'Bearer',
      token, // no scheme
      `Basic ${token}`,
      `Token ${token}`,
      `Bearer ${token} extra`,
      `Bearer  ${token.slice(1)}`,
      `Bearer ${token},Bearer ${token}`,
    ];
    for (const authorization of wrong) {
      const response = await send(server.url, {
        headers: { ...mcpHeaders, authorization },
        body: initialize,
      });
      expect({ authorization, status: response.status }).toEqual({ authorization, status: 401 });
    }
    // A token in the query string is not read (RFC 6750 discourages it; logs keep URLs).
    const query = await send(`${server.url}?access_token=${token}`, {
      headers: mcpHeaders,
      body: initialize,
    });
    expect(query.status).toBe(401);
    // A wrong token is named as such.
    const invalid = await send(server.url, {
      headers: { ...mcpHeaders, authorization: 'Bearer nope' },
      body: initialize,
    });
    expect(invalid.headers['www-authenticate']).toContain('error="invalid_token"');
    // Of two Authorization headers Node keeps the first: a wrong one first is refused.
    const twice = await send(server.url, {
      headers: { ...mcpHeaders, authorization: ['Bearer nope', `Bearer ${token}`] },
      body: initialize,
    });
    expect(twice.status).toBe(401);
  });

  it('the right token passes, the scheme in any case; then the routes answer as before', async () => {
    const server = await served();
    const token = tokenOf(server);
    for (const scheme of ['Bearer', 'bearer', 'BEARER']) {
      const response = await send(server.url, {
        headers: { ...mcpHeaders, authorization: `${scheme} ${token}` },
        body: initialize,
      });
      expect(response.status).toBe(200);
    }
    const authorization = `Bearer ${token}`;
    // Stateless: no SSE stream, no session to end; an unknown path is not found.
    expect((await send(server.url, { method: 'GET', headers: { authorization } })).status).toBe(
      405,
    );
    expect((await send(server.url, { method: 'DELETE', headers: { authorization } })).status).toBe(
      405,
    );
    const other = `${new URL(server.url).origin}/other`;
    expect((await send(other, { method: 'GET', headers: { authorization } })).status).toBe(404);
  });

  it('works through the SDK client (requestInit headers) and our own adapter (headers)', async () => {
    const server = await served();
    const client = new Client({ name: 'sdk', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(server.url), {
        requestInit: { headers: server.clientConfig.headers },
      }),
    );
    closers.push(() => client.close());
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['echo']);
    const called = await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
    expect(called.content).toEqual([{ type: 'text', text: 'hi' }]);

    const adapter = await McpToolAdapter.connect({
      name: 'served',
      transport: { type: 'http', url: server.url, headers: server.clientConfig.headers },
    });
    closers.push(() => adapter.close());
    const result = await adapter.tools()[0]?.execute({ text: 'again' }, testContext());
    expect(result === undefined ? '' : resultText(result)).toBe('again');

    // Without it the SDK client cannot even initialize.
    const stranger = new Client({ name: 'sdk', version: '1' });
    await expect(
      stranger.connect(new StreamableHTTPClientTransport(new URL(server.url))),
    ).rejects.toThrow(/Unauthorized/);
  });

  it('publishes honest protected-resource metadata (RFC 9728) that the SDK finds', async () => {
    const server = await served({ name: 'my-tools' });
    const response = await fetch(server.url, { method: 'POST', headers: mcpHeaders, body: '{}' });
    expect(response.status).toBe(401);
    const { resourceMetadataUrl } = extractWWWAuthenticateParams(response);
    const origin = new URL(server.url).origin;
    expect(resourceMetadataUrl?.href).toBe(`${origin}/.well-known/oauth-protected-resource/mcp`);
    const metadata = await discoverOAuthProtectedResourceMetadata(server.url, {
      ...(resourceMetadataUrl === undefined ? {} : { resourceMetadataUrl }),
    });
    // No authorization server issues this token: none is named.
    expect(metadata).toEqual({
      resource: server.url,
      resource_name: 'my-tools',
      bearer_methods_supported: ['header'],
    });
    const root = await fetch(`${origin}/.well-known/oauth-protected-resource`);
    expect(await root.json()).toEqual(metadata);
    // The resource is the URL the client dialed.
    const { port } = new URL(server.url);
    const viaLocalhost = await send(`${origin}/.well-known/oauth-protected-resource/mcp`, {
      method: 'GET',
      headers: { host: `localhost:${port}` },
    });
    expect(JSON.parse(viaLocalhost.body)).toMatchObject({
      resource: `http://localhost:${port}/mcp`,
    });
  });

  it('the Host check comes first: a rebinding page gets 403, token or not', async () => {
    const server = await served();
    const { port } = new URL(server.url);
    for (const path of ['/mcp', '/.well-known/oauth-protected-resource/mcp']) {
      for (const authorization of [undefined, `Bearer ${tokenOf(server)}`]) {
        const response = await send(`${new URL(server.url).origin}${path}`, {
          method: path === '/mcp' ? 'POST' : 'GET',
          headers: {
            ...mcpHeaders,
            host: `evil.example:${port}`,
            ...(authorization === undefined ? {} : { authorization }),
          },
          body: path === '/mcp' ? initialize : '',
        });
        expect(response.status).toBe(403);
      }
    }
  });

  it("auth: 'none' serves anyone and publishes no metadata", async () => {
    const server = await served({ auth: 'none' });
    expect(server.token).toBeUndefined();
    expect(server.clientConfig).toEqual({ type: 'http', url: server.url, headers: {} });
    const client = new Client({ name: 'sdk', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    closers.push(() => client.close());
    expect((await client.listTools()).tools).toHaveLength(1);
    const metadata = await fetch(
      `${new URL(server.url).origin}/.well-known/oauth-protected-resource/mcp`,
    );
    expect(metadata.status).toBe(404);
  });

  it('takes a token of its caller, and refuses one that cannot be a secret', async () => {
    const token = 'a'.repeat(16) + generateBearerToken();
    const server = await served({ auth: { token } });
    expect(server.token).toBe(token);
    expect(server.clientConfig.headers).toEqual({ Authorization: `Bearer ${token}` });
    for (const bad of ['', 'short', 'x'.repeat(31), `${'x'.repeat(40)} y`, `${'x'.repeat(40)}\n`])
      await expect(serveHttp({ tools: [echo], auth: { token: bad } })).rejects.toThrow(
        /bearer token/,
      );
  });

  it.each(['a'.repeat(40), '0'.repeat(64), 'ab'.repeat(20), 'passwordpasswordpasswordpassword'])(
    'refuses a token of few different characters: %s',
    async (token) => {
      await expect(serveHttp({ tools: [echo], auth: { token } })).rejects.toThrow(
        /The bearer token is guessable: it has only \d different characters?/,
      );
    },
  );

  it('generates a different 256-bit token for every server', () => {
    const tokens = new Set(Array.from({ length: 100 }, generateBearerToken));
    expect(tokens.size).toBe(100);
    for (const token of tokens) expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('createBearerCheck tells missing from invalid', () => {
    const token = generateBearerToken();
    const check = createBearerCheck(token);
    expect(check(undefined)).toBe('missing');
    expect(check('')).toBe('missing');
    expect(check(`Bearer ${token}`)).toBe('valid');
    expect(check(`Bearer ${token.slice(0, -1)}`)).toBe('invalid');
  });
});

describe('readBearerTokenFile', () => {
  const token = generateBearerToken();

  function tokenFile(name: string, content: string, mode: number): string {
    const dir = tempDir();
    const path = join(dir, name);
    writeFileSync(path, content);
    chmodSync(path, mode);
    return path;
  }

  it.each(['0600', '0400', '0700'])('reads a file of mode %s, trimmed', async (mode) => {
    const path = tokenFile('token', `${token}\n`, Number.parseInt(mode, 8));
    expect(await readBearerTokenFile(path)).toBe(token);
  });

  it.each(['0644', '0640', '0604', '0660', '0620', '0602', '0666', '0610', '0601', '0777'])(
    'refuses mode %s, naming the file and the fix',
    async (mode) => {
      const path = tokenFile('token', token, Number.parseInt(mode, 8));
      await expect(readBearerTokenFile(path)).rejects.toThrow(
        `The token file ${path} can be read or written by others (mode ${mode}): run chmod 600 ${path}`,
      );
    },
  );

  it('refuses a file another user owns', async () => {
    const uid = process.getuid?.();
    if (uid === 0) {
      const path = tokenFile('token', token, 0o600);
      chownSync(path, 65534, 65534);
      await expect(readBearerTokenFile(path)).rejects.toThrow(
        `The token file ${path} belongs to uid 65534, not to this user (uid 0)`,
      );
    } else {
      // Not root: a file root owns stands for another user's.
      await expect(readBearerTokenFile('/etc/passwd')).rejects.toThrow(/belongs to uid 0/);
    }
  });

  it('refuses what is not a token file', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'folder'), { mode: 0o700 });
    await expect(readBearerTokenFile(join(dir, 'folder'))).rejects.toThrow(/not a regular file/);
    await expect(readBearerTokenFile(join(dir, 'missing'))).rejects.toThrow(
      `The token file ${join(dir, 'missing')} cannot be opened`,
    );
    // A FIFO must not hang the start.
    execFileSync('mkfifo', ['-m', '600', join(dir, 'fifo')]);
    await expect(readBearerTokenFile(join(dir, 'fifo'))).rejects.toThrow(/not a regular file/);
    await expect(readBearerTokenFile(tokenFile('empty', '\n', 0o600))).rejects.toThrow(/is empty/);
    await expect(
      readBearerTokenFile(tokenFile('same', `${'0'.repeat(64)}\n`, 0o600)),
    ).rejects.toThrow(/is guessable: it has only 1 different character,/);
    await expect(readBearerTokenFile(tokenFile('short', 'secret\n', 0o600))).rejects.toThrow(
      /too short for a secret/,
    );
    await expect(
      readBearerTokenFile(tokenFile('two', `${token}\n${token}\n`, 0o600)),
    ).rejects.toThrow(/no spaces/);
    await expect(readBearerTokenFile(tokenFile('big', 'x'.repeat(5000), 0o600))).rejects.toThrow(
      /holds one token/,
    );
  });

  it('judges the file a symlink points at', async () => {
    const loose = tokenFile('loose', token, 0o644);
    const tight = tokenFile('tight', token, 0o600);
    const dir = tempDir();
    symlinkSync(loose, join(dir, 'to-loose'));
    symlinkSync(tight, join(dir, 'to-tight'));
    await expect(readBearerTokenFile(join(dir, 'to-loose'))).rejects.toThrow(/chmod 600/);
    expect(await readBearerTokenFile(join(dir, 'to-tight'))).toBe(token);
  });
});
