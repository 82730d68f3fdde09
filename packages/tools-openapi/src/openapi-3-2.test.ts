// OpenAPI 3.2: the QUERY method, `additionalOperations` (and the `x-oai-additionalOperations`
// extension that carries them in older documents), `in: querystring` — and Swagger 2.0 documents
// that write a URL in `host`. Before, 3.2 documents were read as 3.1 with a warning and all of
// these were dropped without a word (QUERY and PURGE operations made no tool; a querystring
// parameter stopped the load).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ToolError } from '@agent/core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type OpenApiDocument, OpenApiToolAdapter } from './index.js';
import { callTool } from './test-helpers.js';

let server: Server;
let origin = '';
const seen: { method: string; url: string; body: string }[] = [];
beforeAll(async () => {
  server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => {
      body += chunk;
    });
    request.on('end', () => {
      seen.push({ method: request.method ?? '', url: request.url ?? '', body });
      response.setHeader('content-type', 'application/json');
      response.end('{"ok":true}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  seen.length = 0;
});

const ok = { 200: { description: 'ok', content: { 'application/json': { schema: {} } } } };
const searchBody = {
  required: true,
  content: {
    'application/json': {
      schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    },
  },
};

function document(version: string, paths: Record<string, unknown>, extra: object = {}) {
  return {
    openapi: version,
    info: { title: 'New', version: '1' },
    servers: [{ url: origin }],
    paths,
    ...extra,
  };
}

function load(spec: OpenApiDocument, withKey = false) {
  const warnings: string[] = [];
  const adapter = OpenApiToolAdapter.fromSpec(spec, {
    onWarning: (text) => warnings.push(text),
    ...(withKey ? { auth: { type: 'apiKey', value: 'key-0123456789' } as const } : {}),
  });
  return { adapter, warnings };
}

async function refusal(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!ToolError.isInstance(error)) throw new Error(`expected a ToolError, got ${String(error)}`);
  return error.message;
}

describe('OpenAPI 3.2 operations', () => {
  it('a QUERY operation is a read-only, repeatable tool that sends its body with QUERY', async () => {
    const { adapter, warnings } = load(
      document('3.2.0', {
        '/products': {
          query: { operationId: 'searchProducts', requestBody: searchBody, responses: ok },
        },
      }),
    );
    expect(warnings).toEqual([]);
    const tool = adapter.tool('searchProducts');
    expect(tool?.operation.method).toBe('QUERY');
    expect(tool?.policy?.permission).toBe('read-only');
    expect(tool?.policy?.repeatable).toBe(true);
    const result = await callTool(tool, { body: { text: 'red shoes' } });
    expect(result.isError).toBeFalsy();
    expect(seen).toEqual([{ method: 'QUERY', url: '/products', body: '{"text":"red shoes"}' }]);
  });

  it('additionalOperations become tools sending their own method, never read-only by default', async () => {
    const { adapter, warnings } = load(
      document('3.2.0', {
        '/cache/{key}': {
          parameters: [{ name: 'key', in: 'path', required: true, schema: { type: 'string' } }],
          get: { operationId: 'readCache', responses: ok },
          additionalOperations: { PURGE: { operationId: 'purgeCache', responses: ok } },
        },
      }),
    );
    expect(warnings).toEqual([]);
    const tool = adapter.tool('purgeCache');
    expect(tool?.operation.method).toBe('PURGE');
    expect(tool?.policy?.permission).toBe('full-access');
    expect(tool?.policy?.repeatable).toBe(false);
    await callTool(tool, { key: 'home page' });
    expect(seen).toEqual([{ method: 'PURGE', url: '/cache/home%20page', body: '' }]);
  });

  it('x-oai-additionalOperations carries QUERY in a 3.1 document', async () => {
    const { adapter } = load(
      document('3.1.0', {
        '/products': {
          'x-oai-additionalOperations': {
            QUERY: { operationId: 'searchProducts', requestBody: searchBody, responses: ok },
          },
        },
      }),
    );
    await callTool(adapter.tool('searchProducts'), { body: { text: 'boots' } });
    expect(seen.map((request) => request.method)).toEqual(['QUERY']);
  });

  it('methods fetch cannot send, names that are not methods and duplicates are named and left out', () => {
    const { adapter, warnings } = load(
      document('3.2.0', {
        '/x': {
          get: { operationId: 'getX', responses: ok },
          trace: { operationId: 'traceX', responses: ok },
          additionalOperations: {
            CONNECT: { operationId: 'connectX', responses: ok },
            'BAD METHOD': { operationId: 'badX', responses: ok },
            GET: { operationId: 'getAgain', responses: ok },
          },
        },
      }),
    );
    expect(adapter.tools.map((tool) => tool.name)).toEqual(['getX']);
    expect(warnings).toEqual([
      '#/paths/~1x/additionalOperations/BAD METHOD: "BAD METHOD" is not an HTTP method name; the operation is ignored.',
      '#/paths/~1x/additionalOperations/GET: the path item already has a GET operation; this one is ignored.',
      '#/paths/~1x/trace: fetch cannot send TRACE requests; the operation is ignored.',
      '#/paths/~1x/additionalOperations/CONNECT: fetch cannot send CONNECT requests; the operation is ignored.',
    ]);
  });

  it('a 3.2 document loads without a version warning; a later 3.x says it is read as 3.2', () => {
    const paths = { '/x': { get: { operationId: 'getX', responses: ok } } };
    expect(load(document('3.2.0', paths)).warnings).toEqual([]);
    expect(load(document('3.3.0', paths)).warnings).toEqual([
      'OpenAPI 3.3.0 is read as OpenAPI 3.2; features newer than 3.2 are ignored.',
    ]);
  });
});

describe('in: querystring', () => {
  const criteria = {
    type: 'object',
    properties: {
      startDate: { type: 'string' },
      tags: { type: 'array', items: { type: 'string' } },
      api_key: { type: 'string' },
    },
  };
  function events(content: Record<string, unknown>, withKey = false) {
    return load(
      document(
        '3.2.0',
        {
          '/events': {
            get: {
              operationId: 'listEvents',
              parameters: [{ name: 'criteria', in: 'querystring', content }],
              responses: ok,
            },
          },
        },
        withKey
          ? {
              components: {
                securitySchemes: { key: { type: 'apiKey', in: 'query', name: 'api_key' } },
              },
              security: [{ key: [] }],
            }
          : {},
      ),
      withKey,
    );
  }

  it('a form object is the whole query string, each field as a form writes it', async () => {
    const { adapter, warnings } = events({
      'application/x-www-form-urlencoded': { schema: criteria },
    });
    expect(warnings).toEqual([]);
    const tool = adapter.tool('listEvents');
    expect(tool?.parameters.properties?.criteria?.description).toBe(
      'The whole query string, written as application/x-www-form-urlencoded.',
    );
    await callTool(tool, { criteria: { startDate: '2026-11-01', tags: ['a b', 'c&d'] } });
    expect(seen.at(-1)?.url).toBe('/events?startDate=2026-11-01&tags=a%20b&tags=c%26d');
  });

  it('a query string the model wrote is kept, but for what a query cannot hold', async () => {
    const { adapter } = events({
      'application/x-www-form-urlencoded': { schema: { type: 'string' } },
    });
    await callTool(adapter.tool('listEvents'), { criteria: '?$filter=name eq 50%&top=5#frag' });
    expect(seen.at(-1)?.url).toBe('/events?$filter=name%20eq%2050%25&top=5%23frag');
  });

  it('JSON content is one percent-encoded piece', async () => {
    const { adapter } = events({ 'application/json': { schema: criteria } });
    await callTool(adapter.tool('listEvents'), { criteria: { startDate: '2026-11-01' } });
    expect(seen.at(-1)?.url).toBe(`/events?${encodeURIComponent('{"startDate":"2026-11-01"}')}`);
  });

  it("the model cannot write the API key's query parameter through it, by field or by text", async () => {
    const { adapter } = events({ 'application/x-www-form-urlencoded': { schema: {} } }, true);
    const tool = adapter.tool('listEvents');
    for (const criteria of [{ api_key: 'mine' }, 'a=1&API_KEY=mine', 'api%5Fkey=mine']) {
      expect(await refusal(callTool(tool, { criteria }))).toContain(
        "carries the API's credential and is filled by the client",
      );
    }
    expect(seen).toEqual([]);
  });

  it('a second querystring parameter is named and left out', () => {
    const { adapter, warnings } = load(
      document('3.2.0', {
        '/events': {
          get: {
            operationId: 'listEvents',
            parameters: [
              {
                name: 'first',
                in: 'querystring',
                content: { 'application/x-www-form-urlencoded': { schema: {} } },
              },
              {
                name: 'second',
                in: 'querystring',
                content: { 'application/json': { schema: {} } },
              },
            ],
            responses: ok,
          },
        },
      }),
    );
    expect(Object.keys(adapter.tool('listEvents')?.parameters.properties ?? {})).toEqual(['first']);
    expect(warnings).toEqual([
      'GET /events: more than one querystring parameter; "first" is the query string, "second" is ignored.',
    ]);
  });
});

describe('Swagger 2.0 with a URL in host', () => {
  it("the URL's scheme is used and its slash does not double the base path's", async () => {
    const hostUrl = `${origin}/`;
    const { adapter } = load({
      swagger: '2.0',
      info: { title: 'Old', version: '1' },
      host: hostUrl,
      basePath: '/v1',
      schemes: ['https'],
      paths: {
        '/pets': { get: { operationId: 'listPets', responses: { 200: { description: 'ok' } } } },
      },
    });
    const result = await callTool(adapter.tool('listPets'), {});
    expect(result.isError).toBeFalsy();
    expect(seen.at(-1)?.url).toBe('/v1/pets');
  });
});
