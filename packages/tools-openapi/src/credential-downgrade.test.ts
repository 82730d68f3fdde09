// A document that lists an `http://` server besides its `https://` one (a twin of the same host,
// or a plain-http sandbox) must not get credentials sent in clear text when an operation's or a
// path's own `servers` picks that one. The API is never contacted over https here: it is the
// first server, so it only decides which origins count as the API's.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type OpenApiAuth, OpenApiToolAdapter } from './index.js';
import { callTool } from './test-helpers.js';

let server: Server;
let plain = '';
const seen: IncomingHttpHeaders[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    seen.push(request.headers);
    response.setHeader('content-type', 'application/json');
    response.end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  plain = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  seen.length = 0;
});

const secret = 'secret-0123456789';
const auths: [string, OpenApiAuth][] = [
  ['bearer', { type: 'bearer', token: secret }],
  ['basic', { type: 'basic', username: 'me', password: secret }],
  ['api key header', { type: 'apiKey', in: 'header', name: 'X-Api-Key', value: secret }],
  ['api key cookie', { type: 'apiKey', in: 'cookie', name: 'sid', value: secret }],
];
const bearer: OpenApiAuth = { type: 'bearer', token: secret };
const ok = { 200: { description: 'ok' } };

function spec(documentServers: string[], place: 'operation' | 'path') {
  const servers = [{ url: plain }];
  return {
    openapi: '3.0.3',
    info: { title: 'Twins', version: '1' },
    servers: documentServers.map((url) => ({ url })),
    paths: {
      '/me': {
        ...(place === 'path' ? { servers } : {}),
        get: { operationId: 'me', ...(place === 'operation' ? { servers } : {}), responses: ok },
      },
    },
  };
}

describe('an http server listed after an https one gets no credentials', () => {
  const documents: [string, () => string[]][] = [
    ['its https twin first', () => [plain.replace('http:', 'https:'), plain]],
    ['another https host first', () => ['https://api.example.com', plain]],
    ['two https hosts first', () => ['https://api.example.com', 'https://eu.example.com', plain]],
  ];
  for (const [label, servers] of documents)
    for (const place of ['operation', 'path'] as const)
      it.each(auths)(`${label}, picked by the ${place}: %s`, async (_name, auth) => {
        const warnings: string[] = [];
        const adapter = OpenApiToolAdapter.fromSpec(spec(servers(), place), {
          auth,
          headers: { 'X-Tenant': 'tenant-0123456789' },
          onWarning: (message) => warnings.push(message),
        });
        await callTool(adapter.tool('me'), {});
        expect(seen).toHaveLength(1);
        const sent = JSON.stringify(seen[0]);
        expect(sent).not.toContain(secret);
        expect(sent).not.toContain(Buffer.from(`me:${secret}`).toString('base64'));
        expect(sent).not.toContain('tenant-0123456789');
        expect(warnings.join('\n')).toContain(`${plain}, which is not the API's origin`);
      });
});

describe('where http is the API itself, or the user says so', () => {
  it.each(auths)('the first server is http (a local API): %s is sent', async (_name, auth) => {
    const adapter = OpenApiToolAdapter.fromSpec(spec([plain], 'operation'), { auth });
    await callTool(adapter.tool('me'), {});
    expect(JSON.stringify(seen[0])).toMatch(
      new RegExp(`${secret}|${Buffer.from(`me:${secret}`).toString('base64')}`),
    );
  });

  it('credentialOrigins lists the http origin: sent', async () => {
    const adapter = OpenApiToolAdapter.fromSpec(
      spec([plain.replace('http:', 'https:'), plain], 'operation'),
      { auth: bearer, credentialOrigins: [plain] },
    );
    await callTool(adapter.tool('me'), {});
    expect(seen[0]?.authorization).toBe(`Bearer ${secret}`);
  });

  it('baseUrl on http: sent', async () => {
    const adapter = OpenApiToolAdapter.fromSpec(spec(['https://api.example.com'], 'path'), {
      auth: bearer,
      baseUrl: plain,
    });
    await callTool(adapter.tool('me'), {});
    expect(seen[0]?.authorization).toBe(`Bearer ${secret}`);
  });

  it('a second https server picked by an operation still gets them (fetch recorded: no TLS server here)', async () => {
    const requests: [string, string | null][] = [];
    const adapter = OpenApiToolAdapter.fromSpec(
      {
        ...spec(['https://api.example.com', 'https://eu.example.com'], 'operation'),
        paths: {
          '/me': {
            get: { operationId: 'me', servers: [{ url: 'https://eu.example.com' }], responses: ok },
          },
        },
      },
      {
        auth: bearer,
        fetch: async (url, init) => {
          requests.push([String(url), new Headers(init?.headers).get('authorization')]);
          return new Response('{}', { headers: { 'content-type': 'application/json' } });
        },
      },
    );
    await callTool(adapter.tool('me'), {});
    expect(requests).toEqual([['https://eu.example.com/me', `Bearer ${secret}`]]);
  });
});
