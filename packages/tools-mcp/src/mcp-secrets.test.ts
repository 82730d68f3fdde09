// The credentials the user configured for a server never reach the model through it: a stdio
// server printing its environment (the everything server's get-env), an HTTP server echoing the
// request's headers or URL in a result, in an error, or in a resource. What the server sent stays
// in `details` for the application.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AgentError } from '@agent/core';
import { afterEach, describe, expect, it } from 'vitest';
import { McpToolAdapter } from './mcp-tool-adapter.js';
import { modelText, nodeServer, referenceServerEntry, testContext } from './test-helpers.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const token = 'ghp_0123456789abcdefABCDEF0123456789';

describe('a stdio server that prints its environment', () => {
  it('configured env and passEnv credentials are hidden; other values shown', async () => {
    process.env.RT_SECRETS_TEST_TOKEN = `${token}-host`;
    cleanups.push(async () => {
      delete process.env.RT_SECRETS_TEST_TOKEN;
    });
    const adapter = await McpToolAdapter.connect({
      name: 'everything',
      transport: nodeServer(referenceServerEntry('everything'), ['stdio'], {
        env: { GITHUB_TOKEN: token, PLAIN_SETTING: 'visible-value' },
        passEnv: ['RT_SECRETS_TEST_TOKEN'],
      }),
    });
    cleanups.push(() => adapter.close());
    const tool = adapter.tools().find((candidate) => candidate.name === 'everything__get-env');
    const result = await tool?.execute({}, testContext());
    const text = result === undefined ? '' : modelText(result);
    expect(text).not.toContain(token);
    expect(text).toContain('[redacted:env GITHUB_TOKEN]');
    expect(text).toContain('[redacted:env RT_SECRETS_TEST_TOKEN]');
    expect(text).toContain('visible-value');
    const sent = result?.details?.content[0];
    expect(sent?.type === 'text' && sent.text.includes(token)).toBe(true);
  });
});

/** A raw MCP server over HTTP whose tool `echo` answers with the request's URL and headers. */
async function echoingServer(): Promise<string> {
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    request.on('end', () => {
      if (request.method !== 'POST') {
        response.writeHead(405).end();
        return;
      }
      const message = JSON.parse(body) as { id?: unknown; method: string; params?: never };
      if (message.id === undefined) {
        response.writeHead(202).end();
        return;
      }
      const call = message.params as { arguments?: unknown } | undefined;
      const seen = JSON.stringify({
        url: request.url,
        headers: request.headers,
        arguments: call?.arguments,
      });
      const send = (payload: object) => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, ...payload }));
      };
      const params = message.params as { name?: string; protocolVersion?: string } | undefined;
      if (message.method === 'initialize')
        send({
          result: {
            protocolVersion: params?.protocolVersion,
            capabilities: { tools: {}, resources: {} },
            serverInfo: { name: 'echoing', version: '1.0.0' },
          },
        });
      else if (message.method === 'tools/list')
        send({
          result: {
            tools: ['echo', 'fail'].map((name) => ({ name, inputSchema: { type: 'object' } })),
          },
        });
      else if (message.method === 'tools/call' && params?.name === 'echo')
        send({ result: { content: [{ type: 'text', text: seen }], structuredContent: { seen } } });
      else if (message.method === 'tools/call')
        send({ error: { code: -32603, message: `refused the request ${seen}` } });
      else if (message.method === 'resources/read')
        send({ result: { contents: [{ uri: 'echo://request', text: seen }] } });
      else send({ result: {} });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}

describe('an HTTP server that echoes the request', () => {
  const configs = [
    ['an API-key header', { headers: { 'X-Api-Key': token } }, '[redacted:header X-Api-Key]'],
    [
      'a bearer header',
      { headers: { Authorization: `Bearer ${token}` } },
      '[redacted:header Authorization]',
    ],
    ['a key in the URL', { query: `?api_key=${token}` }, '[redacted:query api_key]'],
    // Sent as Basic authorization: the server echoes the header's base64, never the password.
    ['a password in the URL', { userinfo: `user:${token}@` }, '[redacted:URL password]'],
  ] as const;
  const basicToken = Buffer.from(`user:${token}`, 'utf8').toString('base64');

  it.each(configs)(
    '%s: hidden in results, errors and resources',
    async (_label, config, marker) => {
      const base = await echoingServer();
      const url =
        'userinfo' in config
          ? base.replace('http://', `http://${config.userinfo}`)
          : `${base}${'query' in config ? config.query : ''}`;
      const adapter = await McpToolAdapter.connect({
        name: 'echoing',
        transport: {
          type: 'http',
          url,
          ...('headers' in config ? { headers: config.headers } : {}),
        },
      });
      cleanups.push(() => adapter.close());
      const tool = (name: string) =>
        adapter.tools().find((each) => each.name === `echoing__${name}`);
      const echoed = await tool('echo')?.execute({}, testContext());
      const text = echoed === undefined ? '' : modelText(echoed);
      expect(text).not.toContain(token);
      expect(text).not.toContain(basicToken);
      expect(text).toContain(marker);
      const failed = await tool('fail')
        ?.execute({}, testContext())
        .then(
          () => '',
          (error: Error) => error.message,
        );
      expect(failed).toContain('refused the request');
      expect(failed).not.toContain(token);
      expect(failed).not.toContain(basicToken);
      const resource = await tool('read_resource')?.execute(
        { uri: 'echo://request' },
        testContext(),
      );
      expect(resource === undefined ? '' : modelText(resource)).not.toContain(token);
    },
  );
});

describe('an HTTP server that echoes headers whose names do not say "key"', () => {
  it('a key under any name is hidden; a header that describes the request is not', async () => {
    const team = 'a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6';
    const adapter = await McpToolAdapter.connect({
      name: 'echoing',
      transport: {
        type: 'http',
        url: await echoingServer(),
        headers: { 'X-Honeycomb-Team': team, 'X-Title': 'My App 2', 'X-Region': 'eu-west' },
      },
    });
    cleanups.push(() => adapter.close());
    const echo = adapter.tools().find((each) => each.name === 'echoing__echo');
    const echoed = await echo?.execute({}, testContext());
    const text = echoed === undefined ? '' : modelText(echoed);
    expect(text).not.toContain(team);
    expect(text).toContain('[redacted:header X-Honeycomb-Team]');
    expect(text).toContain('My App 2');
    expect(text).toContain('eu-west');
  });
});

describe('secrets the client obtains: a user-supplied OAuth provider', () => {
  it('its access token is hidden in results, errors and resources like a configured one', async () => {
    const access = 'user-provider-access-0123456789';
    const refresh = 'user-provider-refresh-0123456789';
    const authProvider = {
      get redirectUrl() {
        return 'http://127.0.0.1:1/callback';
      },
      get clientMetadata() {
        return { redirect_uris: ['http://127.0.0.1:1/callback'] };
      },
      clientInformation: () => ({ client_id: 'mine' }),
      tokens: async () => ({ access_token: access, token_type: 'bearer', refresh_token: refresh }),
      saveTokens: () => undefined,
      redirectToAuthorization: () => undefined,
      saveCodeVerifier: () => undefined,
      codeVerifier: () => 'verifier',
    };
    const adapter = await McpToolAdapter.connect({
      name: 'echoing',
      transport: { type: 'http', url: await echoingServer(), authProvider },
    });
    cleanups.push(() => adapter.close());
    const tool = (name: string) => adapter.tools().find((each) => each.name === `echoing__${name}`);
    // The model itself writing the refresh token into arguments: the server echoes it back.
    const echoed = await tool('echo')?.execute({ note: refresh }, testContext());
    const text = echoed === undefined ? '' : modelText(echoed);
    expect(text).toContain('Bearer [redacted:OAuth access token]');
    expect(text).toContain('[redacted:OAuth refresh token]');
    expect(text).not.toContain(access);
    expect(text).not.toContain(refresh);
    const failed = await tool('fail')
      ?.execute({}, testContext())
      .then(
        () => '',
        (error: Error) => error.message,
      );
    expect(failed).toContain('[redacted:OAuth access token]');
    expect(failed).not.toContain(access);
    const resource = await tool('read_resource')?.execute({ uri: 'echo://request' }, testContext());
    expect(resource === undefined ? '' : modelText(resource)).not.toContain(access);
  });
});

describe('a short configured credential (under 6 characters)', () => {
  it('is hidden where it stands alone, not inside the words of an answer', async () => {
    const adapter = await McpToolAdapter.connect({
      name: 'echoing',
      transport: { type: 'http', url: await echoingServer(), headers: { 'X-Api-Key': 'k3y9' } },
    });
    cleanups.push(() => adapter.close());
    const echo = adapter.tools().find((each) => each.name === 'echoing__echo');
    const note = 'k3y9x, ak3y9 and k3y9_old stay; alone: k3y9.';
    const result = await echo?.execute({ note }, testContext());
    const text = result === undefined ? '' : modelText(result);
    expect(text).toContain('"x-api-key":"[redacted:header X-Api-Key]"');
    expect(text).toContain('k3y9x, ak3y9 and k3y9_old stay; alone: [redacted:header X-Api-Key].');
    expect(text).not.toMatch(/(?<![\p{L}\p{N}_])k3y9(?![\p{L}\p{N}_])/u);
  });
});

describe('errors the application gets', () => {
  it('a connection refused by a server that echoes the request hides the URL key and the password', async () => {
    const secretKey = 'sk-abcdef0123456789abcdef';
    const password = 's3cretPassw0rd';
    const server: Server = createServer((request, response) => {
      response.writeHead(500, { 'content-type': 'text/plain' });
      response.end(`refused ${request.url} ${request.headers.authorization}`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const port = (server.address() as AddressInfo).port;
    const basic = Buffer.from(`alice:${password}`, 'utf8').toString('base64');
    const error = await McpToolAdapter.connect({
      name: 'echoing',
      transport: {
        type: 'http',
        url: `http://alice:${password}@127.0.0.1:${port}/mcp?api_key=${secretKey}`,
      },
    }).then(
      () => undefined,
      (caught: Error) => caught,
    );
    const texts: string[] = [];
    for (let item: unknown = error; item instanceof Error; item = item.cause)
      texts.push(item.message, item.stack ?? '');
    // The same error, hidden in place: its class (and its causes') is what callers look for.
    expect(AgentError.isInstance(error)).toBe(true);
    expect(texts[0]).toContain('Cannot connect to MCP server "echoing"');
    expect(texts[0]).toContain('refused /mcp?api_key=[redacted:query api_key]');
    for (const text of texts) {
      expect(text).not.toContain(secretKey);
      expect(text).not.toContain(password);
      expect(text).not.toContain(basic);
    }
  });
});
