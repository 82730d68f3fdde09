import { getEventListeners, once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ToolError } from '@agent/core';
import { afterEach, describe, expect, it } from 'vitest';
import { OpenApiToolAdapter, type OpenApiToolOptions } from './openapi-tool-adapter.js';
import { OpenApiSpecError } from './spec-error.js';
import { callTool, fixture, resultJson, resultText, untrustedBody } from './test-helpers.js';

const quiet: OpenApiToolOptions = { onWarning: () => undefined };

function spec(paths: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return {
    openapi: '3.0.3',
    info: { title: 'Test API', version: '1' },
    servers: [{ url: 'http://127.0.0.1:1/api' }],
    paths,
    ...extra,
  };
}

function specErrorOf(load: () => unknown): OpenApiSpecError {
  try {
    load();
  } catch (error) {
    if (OpenApiSpecError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected an OpenApiSpecError');
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
    await once(server, 'close');
  }
});

// A port on which nothing listens: a server is started on a free port and closed again.
async function closedPort(): Promise<string> {
  const url = await listen(() => undefined);
  const server = servers.pop();
  server?.close();
  if (server !== undefined) await once(server, 'close');
  return url;
}

async function listen(
  handler: (request: IncomingMessage, response: import('node:http').ServerResponse) => void,
) {
  const server = createServer(handler);
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('bad documents', () => {
  it('names an external $ref and where it is', () => {
    const error = specErrorOf(() =>
      OpenApiToolAdapter.fromSpec(
        spec({
          '/pets': {
            post: {
              requestBody: {
                content: { 'application/json': { schema: { $ref: 'pet.yaml#/Pet' } } },
              },
              responses: {},
            },
          },
        }),
        quiet,
      ),
    );
    expect(error.message).toBe(
      'External $ref "pet.yaml#/Pet" at #/paths/~1pets/post/requestBody/content/application~1json/schema/$ref is not supported: only local references ("#/...") are resolved. Bundle the document into one file first (e.g. `redocly bundle`).',
    );
    expect(error.pointer).toBe(
      '#/paths/~1pets/post/requestBody/content/application~1json/schema/$ref',
    );
  });

  it('names a dangling $ref, a parameter without a name, a bad location and a bad operation', () => {
    const dangling = specErrorOf(() =>
      OpenApiToolAdapter.fromSpec(
        spec({ '/a': { get: { parameters: [{ $ref: '#/components/parameters/Nope' }] } } }),
        quiet,
      ),
    );
    expect(dangling.message).toBe(
      'Invalid OpenAPI document at #/paths/~1a/get/parameters/0/$ref: $ref "#/components/parameters/Nope" points at nothing in the document',
    );
    const unnamed = specErrorOf(() =>
      OpenApiToolAdapter.fromSpec(
        spec({ '/a': { get: { parameters: [{ in: 'query' }] } } }),
        quiet,
      ),
    );
    expect(unnamed.pointer).toBe('#/paths/~1a/get/parameters/0');
    expect(unnamed.message).toContain('a parameter needs a non-empty "name"');
    const location = specErrorOf(() =>
      OpenApiToolAdapter.fromSpec(
        spec({ '/a': { get: { parameters: [{ name: 'x', in: 'body' }] } } }),
        quiet,
      ),
    );
    expect(location.message).toContain(
      'parameter "x" has "in": "body"; expected one of path, query, querystring, header, cookie',
    );
    const operation = specErrorOf(() =>
      OpenApiToolAdapter.fromSpec(spec({ '/a': { get: 'nope' } }), quiet),
    );
    expect(operation.message).toBe(
      'Invalid OpenAPI document at #/paths/~1a/get: an operation must be an object, found a string "nope"',
    );
  });

  it('rejects unsupported versions, missing paths, and unparseable or empty text', () => {
    expect(
      specErrorOf(() => OpenApiToolAdapter.fromSpec({ openapi: '4.0.0', paths: {} }, quiet))
        .message,
    ).toBe(
      'Invalid OpenAPI document at #/openapi: unsupported OpenAPI version "4.0.0": 3.0, 3.1, 3.2 and Swagger 2.0 are supported',
    );
    expect(specErrorOf(() => OpenApiToolAdapter.fromSpec({ info: {} }, quiet)).message).toContain(
      'it has neither an "openapi" nor a "swagger" field',
    );
    expect(
      specErrorOf(() => OpenApiToolAdapter.fromSpec({ openapi: '3.0.0' }, quiet)).message,
    ).toContain('the document has no "paths" object');
    expect(
      specErrorOf(() => OpenApiToolAdapter.fromString('openapi: 3.0.0\npaths: [', quiet)).message,
    ).toMatch(/^Cannot parse the OpenAPI document as YAML: .*line 2/s);
    expect(
      specErrorOf(() => OpenApiToolAdapter.fromString('{"openapi": "3.0.0",', quiet)).message,
    ).toMatch(/^Cannot parse the OpenAPI document as JSON: /);
    expect(specErrorOf(() => OpenApiToolAdapter.fromString('  \n', quiet)).message).toBe(
      'Cannot parse the OpenAPI document: it is empty',
    );
    // A web page (the docs site, not its openapi.json) and commented JSON: said as such, unquoted
    // (was: "the document must be an object, found a string" quoting the page).
    const page =
      '<!DOCTYPE html>\n<html><head><title>Pets API docs</title></head><body>Pets</body></html>';
    const pageError = specErrorOf(() => OpenApiToolAdapter.fromString(page, quiet)).message;
    expect(pageError).toBe(
      'Cannot parse the OpenAPI document: it is an HTML or XML page, not an OpenAPI document (JSON or YAML); for a documentation site, give the address of its openapi.json or openapi.yaml',
    );
    for (const commented of ['// pets\n{"openapi": "3.0.0"}', '/* pets */ {"openapi": "3.0.0"}'])
      expect(specErrorOf(() => OpenApiToolAdapter.fromString(commented, quiet)).message).toBe(
        'Cannot parse the OpenAPI document: it starts with a comment, which JSON does not allow (remove the comments, or write the document as YAML, whose comments start with #)',
      );
  });

  it('reads unquoted YAML versions and a 3.1 document without paths', () => {
    expect(OpenApiToolAdapter.fromString('openapi: 3.0\npaths: {}\n', quiet).specVersion).toBe(
      '3.0',
    );
    expect(OpenApiToolAdapter.fromString('swagger: 2.0\npaths: {}\n', quiet).specVersion).toBe(
      '2.0',
    );
    const warnings: string[] = [];
    const webhooksOnly = OpenApiToolAdapter.fromSpec(
      { openapi: '3.1.0', info: { title: 'Hooks', version: '1' }, webhooks: {} },
      { onWarning: (message) => warnings.push(message) },
    );
    expect(webhooksOnly.tools).toEqual([]);
    expect(warnings).toEqual(['The document has no "paths": no operations, no tools.']);
  });

  it('adds an undeclared path parameter with a warning and drops one not in the template', () => {
    const adapter = OpenApiToolAdapter.fromSpec(
      spec({
        '/users/{id}': { get: { parameters: [{ name: 'other', in: 'path', required: true }] } },
      }),
      quiet,
    );
    expect(adapter.warnings).toEqual([
      'GET /users/{id}: path parameter "id" is not declared; it is added as a required string.',
      'GET /users/{id}: path parameter "other" is not in the path template; it is ignored.',
    ]);
    expect(adapter.tools[0]?.parameters).toEqual({
      type: 'object',
      properties: { id: { type: 'string', minLength: 1 } },
      required: ['id'],
      additionalProperties: false,
    });
  });
});

describe('Swagger 2.0 body parameters the dialect does not allow', () => {
  it('uses the first body parameter and names the ones left out (a second one, formData beside it)', () => {
    const adapter = OpenApiToolAdapter.fromSpec(
      {
        swagger: '2.0',
        info: { title: 'Two bodies', version: '1' },
        paths: {
          '/pets': {
            post: {
              parameters: [
                { name: 'pet', in: 'body', schema: { type: 'object' } },
                { name: 'owner', in: 'body', schema: { type: 'object' } },
                { name: 'photo', in: 'formData', type: 'string' },
              ],
            },
          },
        },
      },
      quiet,
    );
    expect(adapter.warnings).toEqual([
      'POST /pets: 2 body parameters (Swagger 2.0 allows one); "pet" is the body, "owner" ignored.',
      'POST /pets: a body parameter and formData parameters (Swagger 2.0 allows one or the other); "pet" is the body, the formData parameters "photo" ignored.',
    ]);
    expect(adapter.tools).toHaveLength(1);
  });
});

describe('naming and selection', () => {
  const many = () =>
    spec({
      '/a': { get: { operationId: 'get a/b', tags: ['x'] }, post: { operationId: 'get-a_b' } },
      '/a/{id}': { get: { tags: ['X'] }, delete: { operationId: 'a'.repeat(80) } },
      '/b': { get: { operationId: '日本' }, put: { operationId: 'get_a_b' } },
    });

  it('sanitises names, falls back to method_path, shortens long ones with a hash, and keeps them unique', () => {
    const names = OpenApiToolAdapter.fromSpec(many(), quiet).tools.map((tool) => tool.name);
    expect(names).toEqual([
      'get_a_b',
      'get-a_b',
      'get_a_id',
      expect.stringMatching(/^a{55}_[0-9a-f]{8}$/),
      'get_b',
      'get_a_b_2',
    ]);
  });

  it('includes and excludes by operationId, tag, METHOD /path glob and predicate; prefixes names', () => {
    const names = (options: OpenApiToolOptions) =>
      OpenApiToolAdapter.fromSpec(many(), { ...quiet, ...options }).tools.map((tool) => tool.name);
    expect(names({ include: ['tag:x'] })).toEqual(['get_a_b', 'get_a_id']);
    expect(names({ include: ['get-a_b', 'GET /b'] })).toEqual(['get-a_b', 'get_b']);
    expect(names({ include: ['* /a/*'] })).toEqual(['get_a_id', expect.stringMatching(/^a{55}_/)]);
    // An operationId pattern never matches an operation without an operationId.
    expect(names({ include: ['/**'], exclude: ['get*', 'DELETE /a/{id}'] })).toEqual([
      'get_a_id',
      'get_b',
    ]);
    expect(
      names({ include: [(operation) => operation.method === 'PUT'], namePrefix: 'api_' }),
    ).toEqual(['api_get_a_b']);
  });

  it('caps the number of tools with a warning', () => {
    const warnings: string[] = [];
    const adapter = OpenApiToolAdapter.fromSpec(many(), {
      maxTools: 2,
      onWarning: (message) => warnings.push(message),
    });
    expect(adapter.tools).toHaveLength(2);
    expect(adapter.operationCount).toBe(6);
    expect(warnings.at(-1)).toBe(
      'Test API has 6 operations; only the first 2 became tools (maxTools). Choose operations with include/exclude or raise maxTools.',
    );
  });

  it('gives a clashing query parameter a location prefix; the body never clashes', () => {
    const adapter = OpenApiToolAdapter.fromSpec(
      spec({
        '/items/{id}': {
          put: {
            operationId: 'put',
            parameters: [
              { name: 'id', in: 'path', required: true, schema: { type: 'integer' } },
              { name: 'id', in: 'query', schema: { type: 'string' } },
              { name: 'body', in: 'query', schema: { type: 'string' } },
              { name: 'filter[name]', in: 'query', schema: { type: 'string' } },
            ],
            requestBody: {
              required: true,
              content: {
                'application/json': {
                  schema: { type: 'object', properties: { id: { type: 'string' } } },
                },
              },
            },
          },
        },
      }),
      quiet,
    );
    const parameters = adapter.tools[0]?.parameters;
    expect(Object.keys(parameters?.properties ?? {})).toEqual([
      'id',
      'query_id',
      'query_body',
      'filter_name',
      'body',
    ]);
    expect(parameters?.properties?.query_id?.description).toBe('(query parameter "id")');
    expect(parameters?.properties?.filter_name?.description).toBe(
      '(query parameter "filter[name]")',
    );
    expect(parameters?.required).toEqual(['id', 'body']);
  });
});

describe('requests', () => {
  it('refuses "." and ".." as path parameters: the request would leave the permitted path', async () => {
    const seen: string[] = [];
    const base = await listen((request, response) => {
      seen.push(request.url ?? '');
      response.writeHead(204);
      response.end();
    });
    const adapter = OpenApiToolAdapter.fromSpec(
      spec(
        {
          '/repos/{owner}/{repo}': {
            delete: {
              operationId: 'deleteRepo',
              parameters: [
                { name: 'owner', in: 'path', required: true, schema: { type: 'string' } },
                { name: 'repo', in: 'path', required: true, schema: { type: 'string' } },
              ],
              responses: { '204': { description: 'gone' } },
            },
          },
        },
        { servers: [{ url: base }] },
      ),
      quiet,
    );
    const tool = adapter.tool('deleteRepo');
    for (const repo of ['..', '.']) {
      const error = await callTool(tool, { owner: 'me', repo }).catch((caught: unknown) => caught);
      expect(ToolError.isInstance(error) && error.kind).toBe('invalid-args');
    }
    // An escaped dot is sent as the literal text it is (%25 for the percent sign).
    await callTool(tool, { owner: 'me', repo: '%2e%2E' });
    await callTool(tool, { owner: 'me', repo: '..x' });
    expect(seen).toEqual(['/repos/me/%252e%252E', '/repos/me/..x']);
  });

  it('resolves relative servers against the URL the document came from (fromUrl)', async () => {
    const seen: string[] = [];
    const base = await listen((request, response) => {
      seen.push(request.url ?? '');
      if (request.url === '/specs/api.yaml') {
        response.writeHead(200, { 'content-type': 'application/yaml' });
        response.end(
          'openapi: 3.1.0\ninfo: {title: Rel, version: "1"}\nservers: [{url: ../api/v2}]\npaths:\n  /things:\n    get: {operationId: listThings}\n',
        );
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('[1,2]');
    });
    const adapter = await OpenApiToolAdapter.fromUrl(`${base}/specs/api.yaml`, quiet);
    const result = await callTool(adapter.tool('listThings'), {});
    expect(resultJson(result)).toEqual([1, 2]);
    expect(seen).toEqual(['/specs/api.yaml', '/api/v2/things']);
    const closed = await closedPort();
    await expect(OpenApiToolAdapter.fromUrl(`${closed}/x.yaml`, quiet)).rejects.toThrow(
      `Cannot fetch the OpenAPI document ${closed}/x.yaml: connect ECONNREFUSED`,
    );
  });

  it('loads from a file, and explains a relative server without baseUrl at call time', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'openapi-'));
    try {
      const path = join(dir, 'api.yaml');
      await writeFile(
        path,
        'openapi: 3.0.0\ninfo: {title: T, version: "1"}\nservers: [{url: /v1}]\npaths:\n  /x:\n    get: {}\n',
      );
      const adapter = await OpenApiToolAdapter.fromFile(path, quiet);
      const error = await callTool(adapter.tools[0], {}).catch((caught: unknown) => caught);
      expect(ToolError.isInstance(error) && error.message).toBe(
        'The document\'s server URL "/v1" is relative and the document was not loaded from a URL; pass the baseUrl option.',
      );
      await expect(OpenApiToolAdapter.fromFile(join(dir, 'missing.yaml'), quiet)).rejects.toThrow(
        /^Cannot read the OpenAPI document .*missing\.yaml: no such file/,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('sends bearer, basic, apiKey-in-query (masked in details) and custom headers, but nothing for security: []', async () => {
    const seen: IncomingMessage[] = [];
    const base = await listen((request, response) => {
      seen.push(request);
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.end('ok');
    });
    const document = spec(
      {
        '/private': { get: { operationId: 'private' } },
        '/public': { get: { operationId: 'public', security: [] } },
        '/keyed': { get: { operationId: 'keyed', security: [{ key: [] }] } },
      },
      {
        security: [{ bearer: [] }],
        components: {
          securitySchemes: {
            bearer: { type: 'http', scheme: 'bearer' },
            key: { type: 'apiKey', in: 'query', name: 'api_key' },
          },
        },
      },
    );
    const bearer = OpenApiToolAdapter.fromSpec(document, {
      ...quiet,
      baseUrl: base,
      auth: { type: 'bearer', token: async () => 't0ken' },
      headers: (operation) => ({ 'x-operation': operation.operationId ?? '' }),
    });
    await callTool(bearer.tool('private'), {});
    expect(seen.at(-1)?.headers.authorization).toBe('Bearer t0ken');
    expect(seen.at(-1)?.headers['x-operation']).toBe('private');
    await callTool(bearer.tool('public'), {});
    expect(seen.at(-1)?.headers.authorization).toBeUndefined();

    const basic = OpenApiToolAdapter.fromSpec(document, {
      ...quiet,
      baseUrl: base,
      auth: { type: 'basic', username: 'zoë', password: 'p:w' },
    });
    await callTool(basic.tool('private'), {});
    expect(seen.at(-1)?.headers.authorization).toBe(
      `Basic ${Buffer.from('zoë:p:w').toString('base64')}`,
    );

    const keyed = OpenApiToolAdapter.fromSpec(document, {
      ...quiet,
      baseUrl: base,
      auth: { type: 'apiKey', value: 's3cret' },
    });
    const result = await callTool(keyed.tool('keyed'), {});
    expect(seen.at(-1)?.url).toBe('/keyed?api_key=s3cret');
    expect(result.details?.url).toBe(`${base}/keyed?api_key=***`);
    await callTool(keyed.tool('private'), {});
    expect(seen.at(-1)?.url).toBe('/private');
    const cookie = OpenApiToolAdapter.fromSpec(document, {
      ...quiet,
      baseUrl: base,
      auth: { type: 'apiKey', value: 'ab/c+d==', in: 'cookie', name: 'sid' },
    });
    await callTool(cookie.tool('public'), {});
    expect(seen.at(-1)?.headers.cookie).toBeUndefined();
    await callTool(cookie.tool('keyed'), {});
    // As it is: servers read cookie octets without percent-decoding them.
    expect(seen.at(-1)?.headers.cookie).toBe('sid=ab/c+d==');
    expect(() =>
      OpenApiToolAdapter.fromSpec(document, {
        ...quiet,
        auth: { type: 'apiKey', value: 'x', scheme: 'nope' },
      }),
    ).toThrow(
      'auth: the document has no apiKey security scheme named "nope" (apiKey schemes: key)',
    );
  });

  it('does not ask the model for a header the options fill, nor for an apiKey parameter', () => {
    const adapter = OpenApiToolAdapter.fromSpec(
      spec(
        {
          '/a': {
            get: {
              operationId: 'a',
              parameters: [
                { name: 'X-Api-Version', in: 'header', required: true, schema: { type: 'string' } },
                { name: 'api_key', in: 'query', required: true, schema: { type: 'string' } },
                { name: 'Authorization', in: 'header', schema: { type: 'string' } },
                { name: 'q', in: 'query', schema: { type: 'string' } },
              ],
            },
          },
        },
        {
          components: {
            securitySchemes: { key: { type: 'apiKey', in: 'query', name: 'api_key' } },
          },
        },
      ),
      {
        ...quiet,
        headers: { 'x-api-version': '2022-11-28' },
        auth: { type: 'apiKey', value: 'k' },
      },
    );
    expect(Object.keys(adapter.tools[0]?.parameters.properties ?? {})).toEqual(['q']);
  });

  it('reports a refused connection as a failed ToolError with the reason', async () => {
    const closed = await closedPort();
    const adapter = OpenApiToolAdapter.fromSpec(spec({ '/a': { get: { operationId: 'a' } } }), {
      ...quiet,
      baseUrl: closed,
    });
    const error = await callTool(adapter.tool('a'), {}).catch((caught: unknown) => caught);
    expect(ToolError.isInstance(error)).toBe(true);
    if (!ToolError.isInstance(error)) return;
    expect(error.kind).toBe('failed');
    expect(error.message).toMatch(
      /^GET http:\/\/127\.0\.0\.1:\d+\/a failed: connect ECONNREFUSED 127\.0\.0\.1:\d+$/,
    );
  });

  it('cancels a request in flight when the call is aborted', async () => {
    const controller = new AbortController();
    let closedByClient: Promise<unknown> = Promise.resolve();
    const base = await listen((request) => {
      // Never answers; abort once the request has arrived.
      closedByClient = once(request.socket, 'close');
      controller.abort(new Error('user pressed stop'));
    });
    const adapter = OpenApiToolAdapter.fromSpec(
      spec({ '/slow': { get: { operationId: 'slow' } } }),
      {
        ...quiet,
        baseUrl: base,
      },
    );
    const error = await callTool(adapter.tool('slow'), {}, controller.signal).catch(
      (caught: unknown) => caught,
    );
    expect(ToolError.isInstance(error) && error.kind).toBe('cancelled');
    await closedByClient;
  });

  it('leaves no listener on the call’s signal once the call is over', async () => {
    // undici keeps its own abort listener on the signal it is given until the request is garbage
    // collected; the tool gives fetch a per-call signal so a long-lived one does not pile them up.
    const base = await listen((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{"ok":true}');
    });
    const adapter = OpenApiToolAdapter.fromSpec(spec({ '/a': { get: { operationId: 'a' } } }), {
      ...quiet,
      baseUrl: base,
    });
    const controller = new AbortController();
    for (let call = 0; call < 3; call++) await callTool(adapter.tool('a'), {}, controller.signal);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('reads only maxResponseBytes of a body and says so', async () => {
    const base = await listen((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.end('a'.repeat(100_000));
    });
    const adapter = OpenApiToolAdapter.fromSpec(spec({ '/big': { get: { operationId: 'big' } } }), {
      ...quiet,
      baseUrl: base,
      maxResponseBytes: 1000,
    });
    const result = await callTool(adapter.tool('big'), {});
    const { before, inner, after } = untrustedBody(resultText(result));
    expect(before).toBe('');
    expect(inner).toBe('a'.repeat(1000));
    // Our own note stays outside the markers.
    expect(after).toBe('\n[Only the first 1000 bytes of the body were read (maxResponseBytes).]');
    expect(result.details).toMatchObject({ truncated: true, bytes: 1000 });
  });

  it('shows a 429 with its Retry-After, and fails clearly when a server variable has no value', async () => {
    const base = await listen((_request, response) => {
      response.writeHead(429, { 'content-type': 'application/json', 'retry-after': '30' });
      response.end('{"message":"slow down"}');
    });
    const adapter = OpenApiToolAdapter.fromSpec(spec({ '/a': { get: { operationId: 'a' } } }), {
      ...quiet,
      baseUrl: base,
    });
    const result = await callTool(adapter.tool('a'), {});
    expect(result.isError).toBe(true);
    const { before, inner, after } = untrustedBody(resultText(result));
    expect(before).toBe(`HTTP 429 Too Many Requests\nGET ${base}/a\nRetry-After: 30\n\n`);
    expect(inner).toBe('{\n  "message": "slow down"\n}');
    expect(after).toBe('');

    const templated = OpenApiToolAdapter.fromSpec(
      spec(
        { '/a': { get: { operationId: 'a' } } },
        { servers: [{ url: 'https://{tenant}.example.com', variables: {} }] },
      ),
      quiet,
    );
    await expect(callTool(templated.tool('a'), {})).rejects.toThrow(
      'The server URL "https://{tenant}.example.com" has variables without a value (tenant); pass serverVariables or baseUrl.',
    );
  });
});

describe('fixtures', () => {
  it('the three petstore fixtures describe the same operations', () => {
    const names = ['petstore-3.0.yaml', 'petstore-3.1.json', 'petstore-2.0.yaml'].map((name) =>
      OpenApiToolAdapter.fromString(fixture(name), {
        ...quiet,
        baseUrl: 'http://127.0.0.1:1',
      }).tools.map((tool) => `${tool.operation.method} ${tool.operation.path} ${tool.name}`),
    );
    expect(names[1]).toEqual(names[0]);
    expect(names[2]).toEqual(names[0]);
  });
});
