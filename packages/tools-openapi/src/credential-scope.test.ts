import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenApiToolAdapter } from './openapi-tool-adapter.js';
import { callTool, resultText } from './test-helpers.js';

/** What one server saw: method, path, headers and body of each request. */
interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

interface TestServer {
  origin: string;
  seen: Seen[];
  server: Server;
}

/** A server on 127.0.0.1 (port 0) whose routes answer with a status and optional Location. */
async function startServer(
  routes: (url: string, origin: string) => { status: number; location?: string },
): Promise<TestServer> {
  const seen: Seen[] = [];
  let origin = '';
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    request.on('end', () => {
      seen.push({
        method: request.method ?? '',
        url: request.url ?? '',
        headers: request.headers,
        body,
      });
      const route = routes(request.url ?? '', origin);
      response.writeHead(route.status, {
        'content-type': 'application/json',
        ...(route.location === undefined ? {} : { location: route.location }),
      });
      response.end(JSON.stringify({ at: origin, path: request.url }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { origin, seen, server };
}

const credentialHeaders = ['authorization', 'x-api-key', 'cookie', 'x-tenant'];

function credentialsIn(request: Seen | undefined): string[] {
  return credentialHeaders.filter((name) => request?.headers[name] !== undefined);
}

describe('credentials are scoped to the API origin', () => {
  let api: TestServer;
  let other: TestServer;

  beforeAll(async () => {
    other = await startServer(() => ({ status: 200 }));
    api = await startServer((url) => {
      if (url.startsWith('/away')) return { status: 302, location: `${other.origin}/landed` };
      if (url.startsWith('/post-away'))
        return { status: 307, location: `${other.origin}/kept-body` };
      if (url.startsWith('/see-other')) return { status: 303, location: '/here' };
      if (url.startsWith('/moved')) return { status: 308, location: '/here' };
      if (url.startsWith('/loop')) return { status: 302, location: '/loop' };
      if (url.startsWith('/bounce')) return { status: 302, location: `${other.origin}/back` };
      return { status: 200 };
    });
  });
  afterAll(async () => {
    await Promise.all(
      [api, other].map((entry) => new Promise((resolve) => entry.server.close(resolve))),
    );
  });

  function spec(extraServers: Record<string, unknown> = {}) {
    return {
      openapi: '3.0.3',
      info: { title: 'Scoped', version: '1' },
      servers: [{ url: api.origin }],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer' },
          key: { type: 'apiKey', in: 'header', name: 'X-Api-Key' },
          session: { type: 'apiKey', in: 'cookie', name: 'sid' },
        },
      },
      security: [{ bearer: [], key: [], session: [] }],
      paths: {
        '/away': { get: { operationId: 'away', responses: { 200: { description: 'ok' } } } },
        '/here': { get: { operationId: 'here', responses: { 200: { description: 'ok' } } } },
        '/see-other': {
          post: {
            operationId: 'seeOther',
            requestBody: { content: { 'application/json': { schema: { type: 'object' } } } },
            responses: { 200: { description: 'ok' } },
          },
        },
        '/post-away': {
          post: {
            operationId: 'postAway',
            requestBody: { content: { 'application/json': { schema: { type: 'object' } } } },
            responses: { 200: { description: 'ok' } },
          },
        },
        '/moved': { get: { operationId: 'moved', responses: { 200: { description: 'ok' } } } },
        '/loop': { get: { operationId: 'loop', responses: { 200: { description: 'ok' } } } },
        '/bounce': { get: { operationId: 'bounce', responses: { 200: { description: 'ok' } } } },
        '/upload': {
          get: {
            operationId: 'upload',
            servers: [{ url: other.origin }],
            responses: { 200: { description: 'ok' } },
          },
        },
        ...extraServers,
      },
    };
  }

  function adapter(options: Record<string, unknown> = {}) {
    const warnings: string[] = [];
    const built = OpenApiToolAdapter.fromSpec(spec(), {
      auth: [
        { type: 'bearer', token: 'secret-token' },
        { type: 'apiKey', value: 'secret-key', scheme: 'key' },
        { type: 'apiKey', value: 'secret-session', scheme: 'session' },
      ],
      headers: { 'X-Tenant': 'acme' },
      onWarning: (message) => warnings.push(message),
      ...options,
    });
    return { built, warnings };
  }

  it('a redirect to another origin is followed without any credential', async () => {
    const { built } = adapter();
    api.seen.length = 0;
    other.seen.length = 0;
    const result = await callTool(built.tool('away'), {});
    expect(resultText(result)).toContain(other.origin);
    expect(credentialsIn(api.seen[0])).toEqual(credentialHeaders);
    expect(api.seen[0]?.headers.authorization).toBe('Bearer secret-token');
    expect(other.seen).toHaveLength(1);
    expect(credentialsIn(other.seen[0])).toEqual([]);
    expect(JSON.stringify(other.seen[0]?.headers)).not.toContain('secret');
  });

  it('keeps credentials on a same-origin redirect, with fetch’s method rules', async () => {
    const { built } = adapter();
    api.seen.length = 0;
    await callTool(built.tool('moved'), {});
    expect(api.seen.map((request) => `${request.method} ${request.url}`)).toEqual([
      'GET /moved',
      'GET /here',
    ]);
    expect(credentialsIn(api.seen[1])).toEqual(credentialHeaders);

    api.seen.length = 0;
    await callTool(built.tool('seeOther'), { body: { a: 1 } });
    expect(api.seen.map((request) => `${request.method} ${request.url} ${request.body}`)).toEqual([
      'POST /see-other {"a":1}',
      'GET /here ',
    ]);
    expect(api.seen[1]?.headers['content-type']).toBeUndefined();
  });

  it('a 307 to another origin keeps method and body but drops credentials', async () => {
    const { built } = adapter();
    other.seen.length = 0;
    await callTool(built.tool('postAway'), { body: { order: 7 } });
    expect(other.seen[0]?.method).toBe('POST');
    expect(other.seen[0]?.body).toBe('{"order":7}');
    expect(credentialsIn(other.seen[0])).toEqual([]);
  });

  it('credentials dropped on the way stay off when a redirect comes back', async () => {
    const bounceBack = await startServer(() => ({ status: 302, location: `${api.origin}/here` }));
    try {
      const spec2 = spec();
      const tool = OpenApiToolAdapter.fromSpec(
        {
          ...spec2,
          paths: {
            '/bounce': {
              get: {
                operationId: 'bounce2',
                servers: [{ url: api.origin }],
                responses: { 200: { description: 'ok' } },
              },
            },
          },
        },
        {
          auth: [{ type: 'bearer', token: 'secret-token' }],
          fetch: (input, init) =>
            globalThis.fetch(
              String(input).startsWith(`${other.origin}/back`) ? `${bounceBack.origin}/x` : input,
              init,
            ),
          onWarning: () => undefined,
        },
      ).tool('bounce2');
      api.seen.length = 0;
      await callTool(tool, {});
      const last = api.seen.at(-1);
      expect(last?.url).toBe('/here');
      expect(last?.headers.authorization).toBeUndefined();
    } finally {
      await new Promise((resolve) => bounceBack.server.close(resolve));
    }
  });

  it('an operation served from another origin gets no credentials unless that origin is allowed', async () => {
    const { built, warnings } = adapter();
    other.seen.length = 0;
    await callTool(built.tool('upload'), {});
    expect(credentialsIn(other.seen[0])).toEqual([]);
    expect(warnings.join('\n')).toContain(
      `1 operation calls ${other.origin}, which is not the API's origin (${api.origin}): no credentials are sent there`,
    );

    const allowed = adapter({ credentialOrigins: [other.origin] });
    other.seen.length = 0;
    await callTool(allowed.built.tool('upload'), {});
    expect(credentialsIn(other.seen[0])).toEqual(credentialHeaders);
    expect(allowed.warnings.join('\n')).not.toContain('no credentials are sent');
  });

  it('stops a redirect loop with a clear error', async () => {
    const { built } = adapter();
    await expect(callTool(built.tool('loop'), {})).rejects.toThrow(/more than 10 redirects/);
  });

  it('server variables must be one of their enum', async () => {
    const document = {
      openapi: '3.0.3',
      info: { title: 'Regions', version: '1' },
      servers: [
        {
          url: 'https://{region}.api.example.com',
          variables: { region: { default: 'eu', enum: ['eu', 'us'] } },
        },
      ],
      paths: { '/x': { get: { operationId: 'x', responses: { 200: { description: 'ok' } } } } },
    };
    const bad = OpenApiToolAdapter.fromSpec(document, {
      serverVariables: { region: 'evil.com/steal?' },
      onWarning: () => undefined,
    });
    await expect(callTool(bad.tool('x'), {})).rejects.toThrow(
      /only allows listed values: region="evil.com\/steal\?" \(one of "eu", "us"\)/,
    );
  });
});

describe('API keys in the query and parameters of operations on other origins', () => {
  let api: TestServer;
  let other: TestServer;
  beforeAll(async () => {
    other = await startServer(() => ({ status: 200 }));
    // The API echoes the whole query (key included) into the Location, as some APIs do.
    api = await startServer((url) => ({
      status: 302,
      location: `${other.origin}/next${url.slice(url.indexOf('?'))}`,
    }));
  });
  afterAll(async () => {
    for (const { server } of [api, other]) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  const document = () => ({
    openapi: '3.0.3',
    info: { title: 'Query keys', version: '1' },
    servers: [{ url: api.origin }],
    components: {
      securitySchemes: { key: { type: 'apiKey', in: 'query', name: 'api_key' } },
    },
    paths: {
      '/echo': {
        get: {
          operationId: 'echo',
          parameters: [{ name: 'page', in: 'query', schema: { type: 'integer' } }],
          responses: { 200: { description: 'ok' } },
        },
      },
      '/upload': {
        servers: [{ url: other.origin }],
        post: {
          operationId: 'upload',
          parameters: [
            { name: 'api_key', in: 'query', schema: { type: 'string' } },
            { name: 'X-Tenant', in: 'header', schema: { type: 'string' } },
          ],
          responses: { 200: { description: 'ok' } },
        },
      },
    },
  });

  it('a query API key echoed into a cross-origin Location is removed, other parameters kept', async () => {
    const adapter = OpenApiToolAdapter.fromSpec(document(), {
      auth: { type: 'apiKey', value: 'secret-query-key' },
      onWarning: () => undefined,
    });
    other.seen.length = 0;
    await callTool(adapter.tool('echo'), { page: 2 });
    expect(api.seen.at(-1)?.url).toBe('/echo?page=2&api_key=secret-query-key');
    expect(other.seen.map((request) => request.url)).toEqual(['/next?page=2']);
  });

  it('an error about a redirect never quotes the query its key is in (the model reads it)', async () => {
    const loop = await startServer((url) => ({ status: 302, location: url }));
    try {
      const adapter = OpenApiToolAdapter.fromSpec(
        { ...document(), servers: [{ url: loop.origin }] },
        { auth: { type: 'apiKey', value: 'secret-query-key' }, onWarning: () => undefined },
      );
      const error = await callTool(adapter.tool('echo'), { page: 2 }).then(
        () => undefined,
        (thrown: unknown) => thrown as Error,
      );
      expect(error?.message).toBe(`GET ${loop.origin}/echo: more than 10 redirects`);
      expect(loop.seen.at(-1)?.url).toBe('/echo?page=2&api_key=secret-query-key');
    } finally {
      loop.server.closeAllConnections();
      await new Promise((resolve) => loop.server.close(resolve));
    }
  });

  it('parameters that credentials would fill are asked of the model where credentials do not go', () => {
    const adapter = OpenApiToolAdapter.fromSpec(document(), {
      auth: { type: 'apiKey', value: 'secret-query-key' },
      headers: { 'X-Tenant': 'acme' },
      onWarning: () => undefined,
    });
    expect(Object.keys(adapter.tool('upload')?.parameters.properties ?? {})).toEqual([
      'api_key',
      'X-Tenant',
    ]);
  });
});
