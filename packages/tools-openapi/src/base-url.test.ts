// A base URL that carries a query (Azure's `?api-version=…`) or a fragment: the operation's path
// must go before them. It was appended after, so `/v1?api-version=1` + `/items/7` asked for `/v1`
// with `api-version=1/items/7` — another route than the permission subject names — and a
// fragment swallowed the path, the query and an API key in it.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { OpenApiToolAdapter, type OpenApiToolOptions } from './openapi-tool-adapter.js';
import { callTool } from './test-helpers.js';

let server: Server;
let origin = '';
const seen: string[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    seen.push(request.url ?? '');
    response.setHeader('content-type', 'application/json');
    // An API that echoes the request it got, and fails for item 500.
    if (request.url?.includes('/items/500')) response.statusCode = 500;
    response.end(JSON.stringify({ youAsked: request.url }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  seen.length = 0;
});

function tool(serverUrl: string, options: OpenApiToolOptions = {}) {
  return OpenApiToolAdapter.fromSpec(
    {
      openapi: '3.0.3',
      info: { title: 'Bases', version: '1' },
      servers: [{ url: serverUrl }],
      components: { securitySchemes: { key: { type: 'apiKey', in: 'query', name: 'key' } } },
      security: [{ key: [] }],
      paths: {
        '/items/{id}': {
          get: {
            operationId: 'getItem',
            parameters: [
              { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
              { name: 'q', in: 'query', schema: { type: 'string' } },
            ],
            responses: { 200: { description: 'ok' } },
          },
        },
      },
    },
    { onWarning: () => undefined, ...options },
  ).tool('getItem');
}

describe('the operation path goes before the base URL’s query and fragment', () => {
  it.each([
    ['/v1?api-version=1', '/v1/items/7?api-version=1&q=z'],
    ['/v1/?api-version=1', '/v1/items/7?api-version=1&q=z'],
    ['/v1?a=1&b=2', '/v1/items/7?a=1&b=2&q=z'],
    ['/v1#section', '/v1/items/7?q=z'],
    ['/v1?api-version=1#section', '/v1/items/7?api-version=1&q=z'],
    ['/v1/', '/v1/items/7?q=z'],
    ['', '/items/7?q=z'],
  ])('server %s → %s', async (suffix, expected) => {
    await callTool(tool(`${origin}${suffix}`), { id: '7', q: 'z' });
    expect(seen).toEqual([expected]);
  });

  it('the same through the baseUrl option, with the API key after the base query', async () => {
    await callTool(
      tool('https://api.example.com', {
        baseUrl: `${origin}/v2?api-version=2024-01-01#x`,
        auth: { type: 'apiKey', value: 'key-0123456789' },
      }),
      { id: '7' },
    );
    expect(seen).toEqual(['/v2/items/7?api-version=2024-01-01&key=key-0123456789']);
  });

  it('a base query with no parameters of the call', async () => {
    await callTool(tool(`${origin}/v1?api-version=1`), { id: '7' });
    expect(seen).toEqual(['/v1/items/7?api-version=1']);
  });
});

describe('a key written into the base URL', () => {
  const key = 'AIzaSyA-0123456789abcdef';
  it.each([
    [`/v1?key=${key}`, 'key'],
    [`/v1?api-version=1&api_key=${key}`, 'api_key'],
    [`/v1?access_token=${key}`, 'access_token'],
  ])('%s: sent, but never shown to the model', async (suffix, name) => {
    const ok = await callTool(tool(`${origin}${suffix}`), { id: '7' });
    expect(seen[0]).toContain(`${name}=${key}`);
    expect(JSON.stringify(ok.content)).not.toContain(key);
    expect(JSON.stringify(ok.content)).toContain(`[redacted:query ${name}]`);
    expect(ok.details?.url).toContain(`${name}=***`);
    const failed = await callTool(tool(`${origin}${suffix}`), { id: '500' });
    expect(failed.isError).toBe(true);
    expect(JSON.stringify(failed.content)).not.toContain(key);
    const unreachable = await callTool(tool(`http://127.0.0.1:9${suffix}`), { id: '7' }).then(
      () => '',
      (error: Error) => error.message,
    );
    expect(unreachable).toContain(`${name}=***`);
    expect(unreachable).not.toContain(key);
  });

  it('a parameter that is no credential (api-version) is shown as it is', async () => {
    const result = await callTool(tool(`${origin}/v1?api-version=2024-01-01`), { id: '7' });
    expect(result.details?.url).toContain('api-version=2024-01-01');
  });
});
