// A document may name a property `__proto__` (or `constructor`, `toString`…): JSON.parse makes it
// an own property like any other, but plain assignment while converting the schema set the
// output's prototype instead — the property vanished while `required` still named it, so no
// call could ever be valid. Each such name must survive into the tool's schema and the request.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenApiToolAdapter } from './openapi-tool-adapter.js';
import { callTool } from './test-helpers.js';

let server: Server;
let origin = '';
interface Recorded {
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}
const requests: Recorded[] = [];
const bodies: string[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    request.on('end', () => {
      bodies.push(body);
      requests.push({ url: request.url ?? '', headers: request.headers, body });
      response.setHeader('content-type', 'application/json');
      response.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const names = [
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  'valueOf',
  '__defineGetter__',
];

function adapter(text: string) {
  return OpenApiToolAdapter.fromString(text, { onWarning: () => undefined });
}

function document(name: string, mediaType = 'application/json') {
  // As text, so `__proto__` is a key of the document (an object literal would set a prototype).
  return `{
    "openapi": "3.1.0",
    "info": { "title": "Names", "version": "1" },
    "servers": [{ "url": "${origin}" }],
    "components": { "schemas": { "Thing": {
      "type": "object",
      "properties": { ${JSON.stringify(name)}: { "type": "string" }, "plain": { "type": "string" } },
      "required": [${JSON.stringify(name)}],
      "patternProperties": { ${JSON.stringify(name)}: { "type": "string" } }
    } } },
    "paths": { "/things": { "post": {
      "operationId": "create",
      "requestBody": { "required": true, "content": { "${mediaType}": {
        "schema": { "$ref": "#/components/schemas/Thing" }
      } } },
      "responses": { "200": { "description": "ok" } }
    } } }
  }`;
}

describe('properties named like Object.prototype members', () => {
  it.each(names)('%s is kept in the schema, required, and sent', async (name) => {
    const tool = adapter(document(name)).tool('create');
    const body = tool?.parameters.properties?.body;
    expect(Object.hasOwn(body?.properties ?? {}, name)).toBe(true);
    expect(Object.getPrototypeOf(body?.properties)).toBe(Object.prototype);
    expect(body?.required).toEqual([name]);
    expect(Object.hasOwn((body?.patternProperties as object) ?? {}, name)).toBe(true);
    // Arguments as the model's JSON becomes them: JSON.parse, so `__proto__` is an own key.
    const args = JSON.parse(`{"body": {${JSON.stringify(name)}: "value", "plain": "p"}}`);
    bodies.length = 0;
    await callTool(tool, args);
    expect(JSON.parse(bodies[0] ?? '{}')).toEqual(
      JSON.parse(`{${JSON.stringify(name)}: "value", "plain": "p"}`),
    );
  });

  it('a multipart body keeps a __proto__ field', () => {
    const tool = adapter(document('__proto__', 'multipart/form-data')).tool('create');
    const body = tool?.parameters.properties?.body;
    expect(Object.hasOwn(body?.properties ?? {}, '__proto__')).toBe(true);
  });

  it('a `__proto__` keyword in a schema is dropped, not made the prototype', () => {
    const text = document('plain').replace(
      '"type": "object",',
      '"type": "object", "__proto__": { "type": "number", "description": "smuggled" },',
    );
    const body = adapter(text).tool('create')?.parameters.properties?.body;
    expect(Object.getPrototypeOf(body)).toBe(Object.prototype);
    expect(body?.type).toBe('object');
    expect(JSON.stringify(body)).not.toContain('smuggled');
  });
});

describe('names from the document and the arguments are own entries only', () => {
  // A query parameter `__proto__`, a header `constructor`, an optional query parameter `toString`
  // the call leaves out, and a JSON body whose required fields are `__proto__` and `toString`.
  const text = () => `{
    "openapi": "3.0.3",
    "info": { "title": "Names", "version": "1" },
    "servers": [{ "url": "${origin}" }],
    "paths": { "/things": { "post": {
      "operationId": "create",
      "parameters": [
        { "name": "__proto__", "in": "query", "required": true, "schema": { "type": "string" } },
        { "name": "constructor", "in": "header", "required": true, "schema": { "type": "string" } },
        { "name": "toString", "in": "query", "schema": { "type": "string" } }
      ],
      "requestBody": { "required": true, "content": { "application/json": { "schema": {
        "type": "object",
        "properties": {
          "__proto__": { "type": "object", "properties": { "x": { "type": "string" } } },
          "toString": { "type": "string" }
        },
        "required": ["__proto__", "toString"]
      } } } },
      "responses": { "200": { "description": "ok" } }
    } } }
  }`;

  it('the schema lists every one, and a call sends exactly what the model gave', async () => {
    const tool = adapter(text()).tool('create');
    const schema = tool?.parameters;
    expect(Object.keys(schema?.properties ?? {}).sort()).toEqual([
      'body',
      'constructor',
      'proto',
      'toString',
    ]);
    expect([...(schema?.required ?? [])].sort()).toEqual(['body', 'constructor', 'proto']);
    const body = schema?.properties?.body;
    expect(Object.keys(body?.properties ?? {})).toEqual(['__proto__', 'toString']);
    expect(body?.required).toEqual(['__proto__', 'toString']);

    const args = JSON.parse(
      '{"proto": "q", "constructor": "h", "body": {"__proto__": {"x": "1"}, "toString": "t"}}',
    );
    requests.length = 0;
    const result = await callTool(tool, args);
    expect(result.isError).not.toBe(true);
    const [sent] = requests;
    // `toString` was left out: nothing inherited is sent in its place.
    expect(sent?.url).toBe('/things?__proto__=q');
    expect(sent?.headers.constructor).toBe('h');
    expect(JSON.parse(sent?.body ?? '')).toEqual(
      JSON.parse('{"__proto__": {"x": "1"}, "toString": "t"}'),
    );
  });

  it('an optional parameter named like any Object.prototype member is not sent when left out', async () => {
    // (`__proto__` and `constructor` are taken above; `hasOwnProperty` and the rest stand in.)
    for (const name of names.filter((name) => name !== '__proto__' && name !== 'constructor')) {
      const document = text().replace('"name": "toString"', `"name": ${JSON.stringify(name)}`);
      requests.length = 0;
      const result = await callTool(
        adapter(document).tool('create'),
        JSON.parse(
          '{"proto": "q", "constructor": "h", "body": {"__proto__": {}, "toString": "t"}}',
        ),
      );
      expect(result.isError).not.toBe(true);
      expect(requests[0]?.url).toBe('/things?__proto__=q');
    }
  });

  it('a Swagger 2.0 form field named __proto__ stays a property and is sent', async () => {
    const document = `{
      "swagger": "2.0",
      "info": { "title": "Form", "version": "1" },
      "host": "${new URL(origin).host}", "schemes": ["http"],
      "paths": { "/things": { "post": {
        "operationId": "create",
        "consumes": ["application/x-www-form-urlencoded"],
        "parameters": [
          { "name": "__proto__", "in": "formData", "required": true, "type": "string" },
          { "name": "toString", "in": "formData", "type": "string" }
        ],
        "responses": { "200": { "description": "ok" } }
      } } }
    }`;
    const tool = adapter(document).tool('create');
    const body = tool?.parameters.properties?.body;
    expect(Object.keys(body?.properties ?? {})).toEqual(['__proto__', 'toString']);
    expect(body?.required).toEqual(['__proto__']);
    requests.length = 0;
    await callTool(tool, { body: JSON.parse('{"__proto__": "p"}') });
    expect(requests[0]?.body).toBe('__proto__=p');
  });

  it('an apiKey security scheme named __proto__ is found and its key sent', async () => {
    const document = text().replace(
      '"paths"',
      `"components": { "securitySchemes": { "__proto__": { "type": "apiKey", "in": "header", "name": "X-Key" } } },
       "security": [{ "__proto__": [] }],
       "paths"`,
    );
    const tools = OpenApiToolAdapter.fromString(document, {
      onWarning: () => undefined,
      auth: { type: 'apiKey', value: 'secret-key-1234' },
    });
    requests.length = 0;
    await callTool(
      tools.tool('create'),
      JSON.parse('{"proto": "q", "constructor": "h", "body": {"__proto__": {}, "toString": "t"}}'),
    );
    expect(requests[0]?.headers['x-key']).toBe('secret-key-1234');
  });

  it('a server variable named constructor takes its default, not a function', async () => {
    const document = text().replace(
      `"servers": [{ "url": "${origin}" }]`,
      `"servers": [{ "url": "${origin}/{constructor}", "variables": { "constructor": { "default": "v1" } } }]`,
    );
    const tools = OpenApiToolAdapter.fromString(document, {
      onWarning: () => undefined,
      serverVariables: {},
    });
    requests.length = 0;
    await callTool(
      tools.tool('create'),
      JSON.parse('{"proto": "q", "constructor": "h", "body": {"__proto__": {}, "toString": "t"}}'),
    );
    expect(requests[0]?.url).toBe('/v1/things?__proto__=q');
  });
});
