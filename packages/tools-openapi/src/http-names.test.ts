// Header and cookie names no request can carry are reported at load, naming the place in the
// document (they were a TypeError from `Headers` when the tool was called); cookie values keep
// `;` `=` `,` and non-ASCII text inside the one cookie; an API key goes into its cookie as it is
// or not at all; a lone UTF-16 surrogate is an invalid argument, not `URIError: URI malformed`.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AgentError, ToolError } from '@agent/core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type OpenApiAuth, OpenApiSpecError, OpenApiToolAdapter } from './index.js';
import { callTool, resultText } from './test-helpers.js';

let server: Server;
let origin = '';
const seen: { url: string; headers: IncomingHttpHeaders; body: string }[] = [];
beforeAll(async () => {
  server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
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
const quiet = { onWarning: () => undefined };

function documentWith(options: {
  parameters?: object[];
  schemes?: Record<string, object>;
  body?: boolean;
}) {
  return {
    openapi: '3.1.0',
    info: { title: 'Names', version: '1' },
    servers: [{ url: origin }],
    components: { securitySchemes: options.schemes ?? {} },
    paths: {
      '/items/{id}': {
        post: {
          operationId: 'call',
          parameters: [
            { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
            ...(options.parameters ?? []),
          ],
          ...(options.body === true
            ? {
                requestBody: {
                  content: {
                    'application/x-www-form-urlencoded': {
                      schema: { type: 'object', properties: { note: { type: 'string' } } },
                    },
                  },
                },
              }
            : {}),
          responses: ok,
        },
      },
    },
  };
}

function loadError(load: () => unknown): unknown {
  try {
    load();
  } catch (error) {
    return error;
  }
  return undefined;
}

const badNames = [
  'X Request Id',
  'X-Id:',
  'X-Id\r\nInjected: 1',
  'Ünïcode',
  'a(b)',
  'X-"quoted"',
  'tab\there',
  '@at',
  '{curly}',
  'a/b',
  'semi;colon',
  'equals=sign',
  ' X-Leading',
  'X-Trailing ',
];

describe('header and cookie parameter names', () => {
  it.each(
    badNames.flatMap((name) => [
      ['header', name],
      ['cookie', name],
    ]),
  )('a %s parameter named %j is a spec error at load, naming where', (location, name) => {
    const error = loadError(() =>
      OpenApiToolAdapter.fromSpec(
        documentWith({ parameters: [{ name, in: location, schema: { type: 'string' } }] }),
        quiet,
      ),
    );
    expect(OpenApiSpecError.isInstance(error)).toBe(true);
    const specError = error as OpenApiSpecError;
    expect(specError.pointer).toBe('#/paths/~1items~1{id}/post/parameters/1');
    expect(specError.message).toContain(`the ${location} parameter's name ${JSON.stringify(name)}`);
    expect(specError.message).toContain('is not an HTTP token');
  });

  it('a Swagger 2.0 header parameter too', () => {
    const error = loadError(() =>
      OpenApiToolAdapter.fromSpec(
        {
          swagger: '2.0',
          info: { title: 'Old', version: '1' },
          paths: {
            '/x': {
              get: {
                parameters: [{ name: 'X Bad', in: 'header', type: 'string' }],
                responses: ok,
              },
            },
          },
        },
        quiet,
      ),
    );
    expect(OpenApiSpecError.isInstance(error) && error.pointer).toBe(
      '#/paths/~1x/get/parameters/0',
    );
  });

  it('every token character is a name that loads and is sent', async () => {
    const names = ['X-Request-Id', 'x_api.key', "X!#$%&'*+-.^_`|~1"];
    const adapter = OpenApiToolAdapter.fromSpec(
      documentWith({
        parameters: [
          ...names.map((name) => ({ name, in: 'header', schema: { type: 'string' } })),
          { name: "c!#$%&'*+-.^_`|~", in: 'cookie', schema: { type: 'string' } },
        ],
      }),
      quiet,
    );
    const tool = adapter.tool('call');
    const { properties } = (tool?.parameters ?? {}) as { properties: Record<string, unknown> };
    const args: Record<string, unknown> = { id: '1' };
    for (const property of Object.keys(properties))
      if (property !== 'id') args[property] = `v-${property.length}`;
    const result = await callTool(tool, args);
    expect(result.isError).toBeFalsy();
    const headers = seen.at(-1)?.headers ?? {};
    for (const name of names) expect(headers[name.toLowerCase()]).toMatch(/^v-\d+$/);
    expect(headers.cookie).toMatch(/^c!#\$%&'\*\+-\.\^_`\|~=v-\d+$/);
  });
});

describe('apiKey security scheme names', () => {
  const rapid = { type: 'apiKey', in: 'header', name: 'RapidAPI.com API Key' };

  it('a scheme no key is sent through only warns', () => {
    const warnings: string[] = [];
    OpenApiToolAdapter.fromSpec(documentWith({ schemes: { rapid } }), {
      onWarning: (message) => warnings.push(message),
    });
    expect(warnings.join('\n')).toContain(
      'Security scheme "rapid": the header name "RapidAPI.com API Key" is not an HTTP token',
    );
  });

  it.each<[string, OpenApiAuth]>([
    ['by its name', { type: 'apiKey', value: 'k', scheme: 'rapid' }],
    ['as the first apiKey scheme', { type: 'apiKey', value: 'k' }],
  ])('a key sent through it (%s) is a spec error at load, naming the scheme', (_, auth) => {
    const error = loadError(() =>
      OpenApiToolAdapter.fromSpec(documentWith({ schemes: { rapid } }), { ...quiet, auth }),
    );
    expect(OpenApiSpecError.isInstance(error)).toBe(true);
    expect((error as OpenApiSpecError).pointer).toBe('#/components/securitySchemes/rapid');
    expect(String(error)).toContain('give the key\'s "in" and "name" in the auth option');
  });

  it.each(['header', 'cookie'] as const)(
    'a %s key given its own valid name is sent; an invalid one is a configuration error',
    async (location) => {
      const adapter = OpenApiToolAdapter.fromSpec(documentWith({ schemes: { rapid } }), {
        ...quiet,
        auth: { type: 'apiKey', value: 'key-1', in: location, name: 'X-RapidAPI-Key' },
      });
      await callTool(adapter.tool('call'), { id: '1' });
      const headers = seen.at(-1)?.headers ?? {};
      if (location === 'header') expect(headers['x-rapidapi-key']).toBe('key-1');
      else expect(headers.cookie).toBe('X-RapidAPI-Key=key-1');
      const error = loadError(() =>
        OpenApiToolAdapter.fromSpec(documentWith({}), {
          ...quiet,
          auth: { type: 'apiKey', value: 'k', in: location, name: 'X Key' },
        }),
      );
      expect(AgentError.isInstance(error) && !OpenApiSpecError.isInstance(error)).toBe(true);
      expect(String(error)).toContain(`auth: the apiKey's ${location} name "X Key"`);
    },
  );

  it('a query key may have any name (it is percent-encoded)', async () => {
    const adapter = OpenApiToolAdapter.fromSpec(
      documentWith({ schemes: { q: { type: 'apiKey', in: 'query', name: 'api key' } } }),
      { ...quiet, auth: { type: 'apiKey', value: 'k1' } },
    );
    await callTool(adapter.tool('call'), { id: '1' });
    expect(seen.at(-1)?.url).toBe('/items/1?api%20key=k1');
  });
});

describe('the headers option', () => {
  it('an invalid name in a headers object is an error at load', () => {
    const error = loadError(() =>
      OpenApiToolAdapter.fromSpec(documentWith({}), {
        ...quiet,
        headers: { 'X Team': 'secret-team-value' },
      }),
    );
    expect(AgentError.isInstance(error)).toBe(true);
    expect(String(error)).toContain('headers: "X Team" is not an HTTP token');
    expect(String(error)).not.toContain('secret-team-value');
  });

  it('an invalid name from a headers function fails the call without quoting its value', async () => {
    const adapter = OpenApiToolAdapter.fromSpec(documentWith({}), {
      ...quiet,
      headers: () => ({ 'X:Team': 'secret-team-value' }),
    });
    const error = await callTool(adapter.tool('call'), { id: '1' }).catch((caught) => caught);
    const text = ToolError.isInstance(error) ? error.message : resultText(error);
    expect(text).toContain('"X:Team" is not an HTTP token');
    expect(text).not.toContain('secret-team-value');
    expect(seen).toEqual([]);
  });
});

/** The cookies of a `Cookie` header as a server splits them: at `; `, then at the first `=`. */
function cookiePairs(header: string | undefined): [string, string][] {
  return (header ?? '').split('; ').map((pair) => {
    const at = pair.indexOf('=');
    return [pair.slice(0, at), pair.slice(at + 1)];
  });
}

describe('cookie parameter values', () => {
  const adapter = () =>
    OpenApiToolAdapter.fromSpec(
      documentWith({
        schemes: { session: { type: 'apiKey', in: 'cookie', name: 'session' } },
        parameters: [
          { name: 'pref', in: 'cookie', schema: { type: 'string' } },
          { name: 'list', in: 'cookie', schema: { type: 'array', items: { type: 'string' } } },
          {
            name: 'map',
            in: 'cookie',
            schema: { type: 'object', additionalProperties: { type: 'string' } },
          },
        ],
      }),
      { ...quiet, auth: { type: 'apiKey', value: 'S3ss/ion+key==' } },
    );

  it.each([
    'a;b=c',
    'x; session=evil',
    'session=evil',
    'a=b=c',
    'comma, space',
    'quote"back\\slash',
    'été',
    'emoji 😀',
    '%41 already encoded',
    'tab\there',
    '',
  ])('%j stays inside its one cookie, the key cookie untouched', async (text) => {
    await callTool(adapter().tool('call'), { id: '1', pref: text });
    const pairs = cookiePairs(seen.at(-1)?.headers.cookie);
    expect(pairs.map(([name]) => name)).toEqual(['pref', 'session']);
    expect(decodeURIComponent(pairs[0]?.[1] ?? '')).toBe(text);
    expect(pairs[0]?.[1]).toMatch(/^[!#-+\--:<-[\]-~]*$/);
    expect(pairs[1]).toEqual(['session', 'S3ss/ion+key==']);
  });

  it('arrays and objects: form, not exploded — literal commas between encoded values', async () => {
    await callTool(adapter().tool('call'), {
      id: '1',
      list: ['a,b', 'c;d', 'é'],
      map: { 'k;1': 'v=1', k2: 'v 2' },
    });
    expect(cookiePairs(seen.at(-1)?.headers.cookie)).toEqual([
      ['list', 'a%2Cb,c%3Bd,%C3%A9'],
      ['map', 'k%3B1,v%3D1,k2,v%202'],
      ['session', 'S3ss/ion+key=='],
    ]);
  });

  it.each([
    ['a ";"', 'ab;session=x', 'would end the cookie'],
    ['a space', 'ab cd', 'outside ASCII'],
    ['a comma', 'ab,cd', 'which a cookie value may not hold'],
    ['a double quote', 'ab"cd', 'which a cookie value may not hold'],
    ['a backslash', 'ab\\cd', 'which a cookie value may not hold'],
    ['non-ASCII', 'clé-secrète', 'outside ASCII'],
    ['a control character', 'ab\u0001cd', 'control character'],
  ])('an API key with %s is not sent in a cookie, and not quoted', async (_, key, reason) => {
    const keyed = OpenApiToolAdapter.fromSpec(
      documentWith({ schemes: { session: { type: 'apiKey', in: 'cookie', name: 'session' } } }),
      { ...quiet, auth: { type: 'apiKey', value: key } },
    );
    const error = await callTool(keyed.tool('call'), { id: '1' }).catch((caught) => caught);
    expect(ToolError.isInstance(error)).toBe(true);
    expect(String(error)).toContain('The API key session cannot be sent in a cookie');
    expect(String(error)).toContain(reason);
    expect(String(error)).not.toContain(key);
    expect(seen).toEqual([]);
  });
});

describe('a lone UTF-16 surrogate', () => {
  const adapter = () =>
    OpenApiToolAdapter.fromSpec(
      documentWith({
        body: true,
        parameters: [
          { name: 'q', in: 'query', schema: { type: 'string' } },
          { name: 'c', in: 'cookie', schema: { type: 'string' } },
          {
            name: 'filter',
            in: 'query',
            style: 'deepObject',
            schema: { type: 'object', additionalProperties: { type: 'string' } },
          },
        ],
      }),
      quiet,
    );

  it.each([
    ['q', { q: 'a\uD800b' }],
    ['q', { q: 'tail \uDC00' }],
    ['c', { c: '\uDBFF' }],
    ['id', { id: 'x\uD83D' }],
    ['filter', { filter: { k: 'v\uD800' } }],
    ['body.note', { body: { note: '\uDFFF' } }],
  ])('in "%s" is an invalid argument naming it; nothing is sent', async (property, args) => {
    const error = await callTool(adapter().tool('call'), { id: '1', ...args }).catch(
      (caught) => caught,
    );
    expect(ToolError.isInstance(error) && error.kind).toBe('invalid-args');
    expect(String(error)).toContain(`at "${property}": the value holds a lone UTF-16 surrogate`);
    expect(seen).toEqual([]);
  });

  it('a whole pair (an emoji) is sent', async () => {
    await callTool(adapter().tool('call'), { id: '😀', q: '😀', c: '😀', body: { note: '😀' } });
    expect(seen.at(-1)?.url).toBe('/items/%F0%9F%98%80?q=%F0%9F%98%80');
    expect(seen.at(-1)?.headers.cookie).toBe('c=%F0%9F%98%80');
    expect(seen.at(-1)?.body).toBe('note=%F0%9F%98%80');
  });
});
