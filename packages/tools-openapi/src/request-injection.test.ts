// What the model writes into one parameter must stay in that parameter: an `allowReserved` value
// may not end the query (`#`), start another parameter (`&`) or turn into a space (`+`); a header
// value may not hold a line break (not even at its end, which `Headers` would quietly trim); an
// exploded object may not name the API key's query parameter. And a credential the client cannot
// send is reported without its value.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ToolError } from '@agent/core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type OpenApiAuth, OpenApiToolAdapter } from './index.js';
import { callTool, resultText } from './test-helpers.js';

interface Seen {
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}
let server: Server;
let origin = '';
const seen: Seen[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    let body = '';
    request.setEncoding('latin1');
    request.on('data', (chunk: string) => {
      body += chunk;
    });
    request.on('end', () => {
      seen.push({ url: request.url ?? '', headers: request.headers, body });
      response.setHeader('content-type', 'application/json');
      response.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  seen.length = 0;
});

const ok = { 200: { description: 'ok' } };
function adapter(auth?: OpenApiAuth) {
  return OpenApiToolAdapter.fromSpec(
    {
      openapi: '3.1.0',
      info: { title: 'Injection', version: '1' },
      servers: [{ url: origin }],
      components: { securitySchemes: { key: { type: 'apiKey', in: 'query', name: 'api_key' } } },
      security: [{ key: [] }],
      paths: {
        '/search': {
          get: {
            operationId: 'search',
            parameters: [
              { name: 'q', in: 'query', allowReserved: true, schema: { type: 'string' } },
              {
                name: 'filter',
                in: 'query',
                style: 'form',
                explode: true,
                schema: { type: 'object', additionalProperties: { type: 'string' } },
              },
              { name: 'X-Trace', in: 'header', schema: { type: 'string' } },
            ],
            responses: ok,
          },
        },
        '/forms': {
          post: {
            operationId: 'postForm',
            requestBody: {
              content: {
                'application/x-www-form-urlencoded': {
                  schema: {
                    type: 'object',
                    properties: { note: { type: 'string' }, other: { type: 'string' } },
                  },
                  encoding: { note: { allowReserved: true } },
                },
              },
            },
            responses: ok,
          },
        },
      },
    },
    { ...(auth === undefined ? {} : { auth }), onWarning: () => undefined },
  );
}

async function failure(promise: Promise<unknown>): Promise<ToolError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!ToolError.isInstance(error)) throw new Error(`expected a ToolError, got ${String(error)}`);
  return error;
}

describe('allowReserved keeps only what cannot change the query', () => {
  const key = { type: 'apiKey', value: 'key-0123456789' } as const;
  // Value → what the server must see for q (decoded as a form decoder would).
  const cases: [string, string][] = [
    ['a#b', 'a#b'],
    ['a#', 'a#'],
    ['#api_key=x', '#api_key=x'],
    ['a&api_key=evil', 'a&api_key=evil'],
    ['a&b', 'a&b'],
    ['1+1', '1+1'],
    ['x[y]', 'x[y]'],
    ['a/b?c=d:e@f', 'a/b?c=d:e@f'],
    ["!$'()*,;", "!$'()*,;"],
    ['100%', '100%'],
    ['a b', 'a b'],
  ];
  it.each(cases)('%j arrives whole, with the API key after it', async (value, expected) => {
    const result = await callTool(adapter(key).tool('search'), { q: value });
    expect(result.isError).toBeFalsy();
    const query = new URL(seen[0]?.url ?? '', origin).searchParams;
    expect(query.getAll('q')).toEqual([expected]);
    expect(query.getAll('api_key')).toEqual(['key-0123456789']);
  });

  it('reserved characters that do not change the query are sent as they are', async () => {
    await callTool(adapter().tool('search'), { q: 'a/b?c=d:e@f' });
    expect(seen[0]?.url).toBe('/search?q=a/b?c=d:e@f');
  });

  it.each(cases)(
    'a form field with allowReserved keeps %j in its field',
    async (value, expected) => {
      await callTool(adapter().tool('postForm'), { body: { note: value, other: 'o' } });
      const fields = new URLSearchParams(seen[0]?.body ?? '');
      expect(fields.getAll('note')).toEqual([expected]);
      expect(fields.getAll('other')).toEqual(['o']);
      expect([...fields.keys()].sort()).toEqual(['note', 'other']);
    },
  );
});

describe('an exploded object may not fill the API key parameter', () => {
  // Servers read names leniently: case-insensitively (ASP.NET, many gateways), `.` ` ` `[` as `_`
  // (PHP), `name[]` / `name[0]` as the name itself (PHP, qs). One that took the model's key
  // first would run the call on the account of whoever wrote that key.
  it.each([
    'api_key',
    'api%5Fkey',
    'API_KEY',
    'Api_Key',
    'api.key',
    'api key',
    'api[key',
    'api_key[]',
    'api_key[0]',
    'API_KEY[x]',
    'api%2Ekey',
  ])('key %j', async (name) => {
    const filter = { [decodeURIComponent(name)]: 'attacker-key', status: 'open' };
    const error = await failure(
      callTool(adapter({ type: 'apiKey', value: 'key-0123456789' }).tool('search'), { filter }),
    );
    expect(error.kind).toBe('invalid-args');
    expect(error.message).toContain('at "filter"');
    expect(error.message).toContain('"api_key"');
    expect(seen).toHaveLength(0);
  });

  it('a declared parameter named like the key in another spelling is not asked of the model', () => {
    const tool = OpenApiToolAdapter.fromSpec(
      {
        openapi: '3.1.0',
        info: { title: 'Spelling', version: '1' },
        servers: [{ url: origin }],
        components: { securitySchemes: { key: { type: 'apiKey', in: 'query', name: 'api_key' } } },
        security: [{ key: [] }],
        paths: {
          '/x': {
            get: {
              operationId: 'x',
              parameters: ['API_KEY', 'api.key', 'Api-Key', 'q'].map((name) => ({
                name,
                in: 'query',
                schema: { type: 'string' },
              })),
              responses: ok,
            },
          },
        },
      },
      { auth: { type: 'apiKey', value: 'key-0123456789' }, onWarning: () => undefined },
    ).tool('x');
    expect(Object.keys(tool?.parameters.properties ?? {})).toEqual(['Api-Key', 'q']);
  });

  it('a declared header named like the key header in another spelling is not asked either', () => {
    const tool = OpenApiToolAdapter.fromSpec(
      {
        openapi: '3.1.0',
        info: { title: 'Spelling', version: '1' },
        servers: [{ url: origin }],
        components: {
          securitySchemes: { key: { type: 'apiKey', in: 'header', name: 'X-Api-Key' } },
        },
        security: [{ key: [] }],
        paths: {
          '/x': {
            get: {
              operationId: 'x',
              parameters: ['X_API_KEY', 'x-api-key', 'X-Trace'].map((name) => ({
                name,
                in: 'header',
                schema: { type: 'string' },
              })),
              responses: ok,
            },
          },
        },
      },
      { auth: { type: 'apiKey', value: 'key-0123456789' }, onWarning: () => undefined },
    ).tool('x');
    expect(Object.keys(tool?.parameters.properties ?? {})).toEqual(['X-Trace']);
  });

  // PHP's $_REQUEST, Rails' params and Laravel's input() read the body over the query.
  it.each(['api_key', 'API_KEY', 'api.key', 'api_key[x]'])(
    'a form field the model names %j is refused too; declared fields and others are sent',
    async (field) => {
      const tool = adapter({ type: 'apiKey', value: 'key-0123456789' }).tool('postForm');
      const error = await failure(callTool(tool, { body: { note: 'n', [field]: 'attacker-key' } }));
      expect(error.kind).toBe('invalid-args');
      expect(error.message).toContain(`at "body.${field}"`);
      expect(error.message).toContain('"api_key"');
      expect(seen).toHaveLength(0);
      await callTool(tool, { body: { note: 'n', extra: 'e' } });
      expect(new URLSearchParams(seen[0]?.body ?? '').get('extra')).toBe('e');
    },
  );

  it('other keys are sent, and without credentials the name is free', async () => {
    await callTool(adapter({ type: 'apiKey', value: 'key-0123456789' }).tool('search'), {
      filter: { status: 'open', api: 'x' },
    });
    expect(seen[0]?.url).toBe('/search?status=open&api=x&api_key=key-0123456789');
    await callTool(adapter().tool('search'), { filter: { api_key: 'mine' } });
    expect(seen[1]?.url).toBe('/search?api_key=mine');
  });
});

describe('header values', () => {
  const refused = [
    'a\r\nX-Injected: 1',
    'a\nX-Injected: 1',
    'a\rb',
    'abc\r\n',
    'abc\n',
    '\r\nabc',
    '\nabc',
    'a\u0000b',
    'a\u0001b',
    'a\u001fb',
    'a\u007fb',
    'a\u2028b',
    'caf\u00e9\u2019',
  ];
  it.each(refused)('%j is refused naming the argument, and nothing is sent', async (value) => {
    const error = await failure(callTool(adapter().tool('search'), { 'X-Trace': value }));
    expect(error.kind).toBe('invalid-args');
    expect(error.message).toContain('at "X-Trace"');
    expect(seen).toHaveLength(0);
  });

  it.each(['plain', 'tab\there', 'caf\u00e9', ' padded '])('%j is sent', async (value) => {
    await callTool(adapter().tool('search'), { 'X-Trace': value });
    expect(seen[0]?.headers['x-trace']).toBe(value.trim());
  });
});

describe('a credential that cannot be a header value is not quoted', () => {
  const spec = () => ({
    openapi: '3.0.3',
    info: { title: 'Creds', version: '1' },
    servers: [{ url: origin }],
    components: { securitySchemes: { key: { type: 'apiKey', in: 'header', name: 'X-Key' } } },
    paths: { '/me': { get: { operationId: 'me', responses: ok } } },
  });
  const secret = 'SECRET-0123456789';
  const bad = [
    `${secret}\nmore`,
    `${secret}\r`,
    `${secret}\u0000x`,
    `${secret}\u007f`,
    `x\u2019${secret}`,
  ];
  const options: [string, (value: string) => Parameters<typeof OpenApiToolAdapter.fromSpec>[1]][] =
    [
      ['bearer', (value) => ({ auth: { type: 'bearer', token: value } })],
      ['api key', (value) => ({ auth: { type: 'apiKey', scheme: 'key', value } })],
      ['headers option', (value) => ({ headers: { 'X-Other': value } })],
      ['headers function', (value) => ({ headers: () => ({ Authorization: `Token ${value}` }) })],
    ];
  for (const [label, make] of options)
    it.each(bad)(`${label}: %j`, async (value) => {
      const tool = OpenApiToolAdapter.fromSpec(spec(), {
        ...make(value),
        onWarning: () => undefined,
      }).tool('me');
      const error = await failure(callTool(tool, {}));
      expect(error.message).not.toContain(secret);
      expect(error.message).toMatch(/cannot be sent in the .+ header/);
      expect(seen).toHaveLength(0);
    });
});

describe('what still goes through', () => {
  it('a plain value of every kind', async () => {
    const result = await callTool(adapter().tool('search'), {
      q: 'plain',
      filter: { a: '1' },
      'X-Trace': 't',
    });
    expect(resultText(result)).toContain('{}');
    expect(seen[0]?.url).toBe('/search?q=plain&a=1');
  });
});
