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
const bodies: string[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    request.on('end', () => {
      bodies.push(body);
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
