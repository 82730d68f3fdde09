// An API on the internet that redirects its caller into the caller's own network: the agent's
// machine would make the request (a 307 keeps method and body) and the model would read the
// answer. Such a hop is refused unless the API itself is on a private network.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ToolError } from '@agent/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenApiToolAdapter } from './openapi-tool-adapter.js';
import { nonPublicHostReason } from './redirect-guard.js';
import { callTool } from './test-helpers.js';

let api: Server;
let internal: Server;
let apiPort = 0;
let internalPort = 0;
const internalRequests: string[] = [];
let redirectTo = '';
let redirectStatus = 302;

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

beforeAll(async () => {
  api = createServer((_request, response) => {
    response.writeHead(redirectStatus, { location: redirectTo });
    response.end();
  });
  internal = createServer((request, response) => {
    internalRequests.push(`${request.method} ${request.url}`);
    response.setHeader('content-type', 'application/json');
    response.end('{"secret":"internal-only"}');
  });
  apiPort = await listen(api);
  internalPort = await listen(internal);
});
afterAll(async () => {
  await Promise.all(
    [api, internal].map((server) => new Promise((resolve) => server.close(resolve))),
  );
});

// The API's public name stands for a public host; only its DNS is simulated (there is no public
// DNS here): this fetch sends requests for api.example.test to the local API server.
const publicApi = 'http://api.example.test';
const viaPublicName: typeof fetch = (input, init) => {
  const url = new URL(String(input));
  if (url.hostname === 'api.example.test') {
    url.hostname = '127.0.0.1';
    url.port = String(apiPort);
  }
  return fetch(url, init);
};

function adapter(baseUrl: string, options: Record<string, unknown> = {}) {
  return OpenApiToolAdapter.fromSpec(
    {
      openapi: '3.0.3',
      info: { title: 'Redirecting', version: '1' },
      paths: {
        '/go': { get: { operationId: 'go', responses: { 200: { description: 'ok' } } } },
        '/send': {
          post: {
            operationId: 'send',
            requestBody: { content: { 'application/json': { schema: { type: 'object' } } } },
            responses: { 200: { description: 'ok' } },
          },
        },
      },
    },
    { baseUrl, fetch: viaPublicName, ...options },
  );
}

async function refusal(promise: Promise<unknown>): Promise<ToolError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!ToolError.isInstance(error)) throw new Error(`expected a ToolError, got ${String(error)}`);
  return error;
}

describe('redirects from a public API into a private network', () => {
  const targets = () => [
    `http://127.0.0.1:${internalPort}/admin`,
    `http://localhost:${internalPort}/admin`,
    `http://2130706433:${internalPort}/admin`,
    `http://0x7f.1:${internalPort}/admin`,
    `http://0.0.0.0:${internalPort}/admin`,
    `http://[::1]:${internalPort}/admin`,
    `http://[::ffff:127.0.0.1]:${internalPort}/admin`,
  ];

  it('are refused for GET and POST, every status, every spelling; nothing reaches the target', async () => {
    const tools = adapter(publicApi);
    for (const status of [302, 307, 308]) {
      for (const target of targets()) {
        redirectStatus = status;
        redirectTo = target;
        const before = internalRequests.length;
        for (const [name, args] of [
          ['go', {}],
          ['send', { body: { action: 'drop-table' } }],
        ] as const) {
          const error = await refusal(callTool(tools.tool(name), args));
          expect(error.kind, `${status} ${target}`).toBe('denied');
          expect(error.message).toContain('which is not followed');
          expect(error.message).toMatch(/loopback|unspecified/);
        }
        expect(internalRequests.length, `${status} ${target}`).toBe(before);
      }
    }
  });

  it('allowPrivateRedirects follows them; an API on a private host may redirect within it', async () => {
    redirectStatus = 307;
    redirectTo = `http://127.0.0.1:${internalPort}/admin`;
    const before = internalRequests.length;
    const allowed = await callTool(
      adapter(publicApi, { allowPrivateRedirects: true }).tool('send'),
      { body: { a: 1 } },
    );
    expect(allowed.isError).not.toBe(true);
    const local = await callTool(adapter(`http://127.0.0.1:${apiPort}`).tool('go'), {});
    expect(local.isError).not.toBe(true);
    expect(internalRequests.slice(before)).toEqual(['POST /admin', 'GET /admin']);
  });
});

describe('nonPublicHostReason', () => {
  it('classifies literals in every spelling URL parsing leaves, and every address of a name', async () => {
    const host = (url: string) => new URL(url).hostname;
    for (const url of [
      'http://127.0.0.1/',
      'http://2130706433/',
      'http://0177.0.0.1/',
      'http://10.1.2.3/',
      'http://172.16.0.1/',
      'http://192.168.1.1/',
      'http://100.64.0.1/',
      'http://169.254.169.254/',
      'http://0xa9fea9fe/',
      'http://0.0.0.0/',
      'http://[::1]/',
      'http://[::]/',
      'http://[fe80::1]/',
      'http://[fd00:ec2::254]/',
      'http://[::ffff:10.0.0.1]/',
      'http://[::ffff:127.0.0.1]/',
      'http://[::127.0.0.1]/',
      'http://[::ffff:0:7f00:1]/',
      'http://[64:ff9b::a00:1]/',
      'http://[2002:a00:1::]/',
      'http://224.0.0.1/',
    ])
      expect(await nonPublicHostReason(host(url)), url).toBeDefined();
    for (const url of [
      'http://8.8.8.8/',
      'http://[2606:4700:4700::1111]/',
      'http://[::ffff:8.8.8.8]/',
    ])
      expect(await nonPublicHostReason(host(url)), url).toBeUndefined();
    expect(await nonPublicHostReason('localhost')).toMatch(/localhost resolves to .* loopback/);
    const mixed = async () => ['93.184.216.34', '10.0.0.7'];
    expect(await nonPublicHostReason('intranet.test', mixed)).toBe(
      'intranet.test resolves to 10.0.0.7, a private-network address',
    );
    const unknown = async (): Promise<string[]> => {
      throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    };
    expect(await nonPublicHostReason('nowhere.test', unknown)).toBeUndefined();
  });
});
