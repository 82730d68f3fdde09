import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OpenApiAuth, OpenApiToolAdapter } from './index.js';
import { callTool, resultText } from './test-helpers.js';

// An API that hands the request back: its headers and URL as JSON (httpbin's /anything), as
// text, inside an error body, and in redirects that loop or leave for another scheme (whose
// error messages quote the URL). Whatever credential the adapter sent, the model reads a marker.

const secret = 'k3y+Value/with=chars-0123456789';

let server: Server;
let origin = '';

beforeAll(async () => {
  server = createServer((request, response) => {
    const url = request.url ?? '/';
    const echo = { url, headers: request.headers };
    if (url.startsWith('/json'))
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(echo));
    else if (url.startsWith('/text'))
      response
        .writeHead(200, { 'content-type': 'text/plain' })
        .end(`you sent ${JSON.stringify(echo)} and ${decodeURIComponent(url)}`);
    else if (url.startsWith('/error'))
      response
        .writeHead(401, { 'content-type': 'text/plain' })
        .end(`invalid credentials: ${JSON.stringify(request.headers)} ${url}`);
    else if (url.startsWith('/loop')) response.writeHead(302, { location: url }).end();
    else response.writeHead(302, { location: `ftp://files.example${url}` }).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const routes = ['json', 'text', 'error', 'loop', 'ftp'] as const;

function document() {
  return {
    openapi: '3.0.3',
    info: { title: 'Echo', version: '1' },
    servers: [{ url: origin }],
    components: {
      securitySchemes: {
        query: { type: 'apiKey', in: 'query', name: 'api_key' },
        header: { type: 'apiKey', in: 'header', name: 'X-Api-Key' },
        cookie: { type: 'apiKey', in: 'cookie', name: 'session' },
      },
    },
    paths: Object.fromEntries(
      routes.map((route) => [
        `/${route}`,
        {
          get: {
            operationId: route,
            security: [{ query: [] }, { header: [] }, { cookie: [] }],
            responses: { 200: { description: 'ok' } },
          },
        },
      ]),
    ),
  };
}

const auths: [string, { auth?: OpenApiAuth; headers?: Record<string, string> }][] = [
  ['a bearer token', { auth: { type: 'bearer', token: secret } }],
  ['a bearer token from a function', { auth: { type: 'bearer', token: () => secret } }],
  ['a basic password', { auth: { type: 'basic', username: 'me', password: secret } }],
  ['an API key in the query', { auth: { type: 'apiKey', scheme: 'query', value: secret } }],
  ['an API key in a header', { auth: { type: 'apiKey', scheme: 'header', value: secret } }],
  ['an API key in a cookie', { auth: { type: 'apiKey', scheme: 'cookie', value: secret } }],
  ['an Authorization header option', { headers: { Authorization: `Bearer ${secret}` } }],
  ['an X-Api-Key header option', { headers: { 'X-Api-Key': secret } }],
];

/** Every spelling of the secret the API could hand back. */
function expectNoSecret(text: string) {
  expect(text).not.toContain(secret);
  expect(text).not.toContain(encodeURIComponent(secret));
  expect(text).not.toContain(btoa(`me:${secret}`));
}

describe('credentials an API echoes never reach the model', () => {
  it.each(auths)('%s: every route', async (_label, options) => {
    const adapter = OpenApiToolAdapter.fromSpec(document(), { ...options, onWarning: () => {} });
    for (const route of routes) {
      let shown: string;
      try {
        const result = await callTool(adapter.tool(route), {});
        shown = resultText(result);
      } catch (error) {
        shown = String(error);
      }
      expectNoSecret(shown);
      // The marker is there: the answer was not merely cut before the secret.
      if (route !== 'ftp' && route !== 'loop') expect(shown).toContain('[redacted:');
    }
  });

  it('the error messages of redirects name the URL without its query (the key and any other)', async () => {
    const adapter = OpenApiToolAdapter.fromSpec(document(), {
      auth: { type: 'apiKey', scheme: 'query', value: secret },
      onWarning: () => {},
    });
    await expect(callTool(adapter.tool('loop'), {})).rejects.toThrow(
      /^GET http:\/\/127\.0\.0\.1:\d+\/loop: more than 10 redirects/,
    );
    await expect(callTool(adapter.tool('ftp'), {})).rejects.toThrow(
      /\/ftp redirected to a ftp: URL/,
    );
    const error = await callTool(adapter.tool('ftp'), {}).catch((e: unknown) => String(e));
    expect(error).not.toContain('api_key');
  });

  it('a key under a header name that does not say so (X-Honeycomb-Team) is hidden', async () => {
    const team = 'a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6';
    const adapter = OpenApiToolAdapter.fromSpec(document(), {
      headers: { 'X-Honeycomb-Team': team, 'X-Title': 'My App 2' },
      onWarning: () => {},
    });
    const text = resultText(await callTool(adapter.tool('json'), {}));
    expect(text).not.toContain(team);
    expect(text).toContain('[redacted:header X-Honeycomb-Team]');
    expect(text).toContain('My App 2');
  });

  it('a value that is no credential (Accept) stays; a short key is hidden only where it stands alone', async () => {
    const adapter = OpenApiToolAdapter.fromSpec(document(), {
      headers: {
        'X-Client': 'application/json',
        'X-Tenant-Key': 'acme',
        'X-Note': 'acmes and acme_co',
      },
      onWarning: () => {},
    });
    const text = resultText(await callTool(adapter.tool('json'), {}));
    expect(text).toContain('application/json');
    // A word that merely contains the short key keeps its letters.
    expect(text).toContain('"x-note": "acmes and acme_co"');
    // Named a key, so a credential, however short: the echo of the header is hidden…
    expect(text).toContain('"x-tenant-key": "[redacted:header X-Tenant-Key]"');
    expect(text).not.toMatch(/\bacme\b/);
  });
});
