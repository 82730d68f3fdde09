// A model-chosen path parameter must not move the request to another route than the operation's
// (the one its permission subject names): `..` and `.` segments are resolved away by URL
// parsing, so `/orgs/{org}/members/{user}/ping` with `..` for both would POST to `/ping`.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ToolError } from '@agent/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenApiToolAdapter } from './openapi-tool-adapter.js';
import { callTool } from './test-helpers.js';

let server: Server;
let origin = '';
const seen: string[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    seen.push(`${request.method} ${request.url}`);
    response.setHeader('content-type', 'application/json');
    response.end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const ok = { 200: { description: 'ok' } };
function adapter() {
  const pathParameter = (name: string, style?: string, explode?: boolean) => ({
    name,
    in: 'path',
    required: true,
    schema: { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] },
    ...(style === undefined ? {} : { style }),
    ...(explode === undefined ? {} : { explode }),
  });
  return OpenApiToolAdapter.fromSpec(
    {
      openapi: '3.0.3',
      info: { title: 'Routes', version: '1' },
      servers: [{ url: `${origin}/api/v1` }],
      paths: {
        '/orgs/{org}/members/{user}/ping': {
          post: {
            operationId: 'ping',
            parameters: [pathParameter('org'), pathParameter('user')],
            responses: ok,
          },
        },
        '/files/{a}{b}': {
          get: {
            operationId: 'twoInOne',
            parameters: [pathParameter('a'), pathParameter('b')],
            responses: ok,
          },
        },
        '/items/{ids}': {
          get: {
            operationId: 'items',
            parameters: [pathParameter('ids', 'simple', false)],
            responses: ok,
          },
        },
      },
    },
    { baseUrl: `${origin}/api/v1` },
  );
}

describe('path parameters stay inside their route', () => {
  it('refuses every value that would make a dot segment, before any request', async () => {
    const tools = adapter();
    const before = seen.length;
    const attempts: [string, Record<string, unknown>][] = [
      ['ping', { org: '..', user: '..' }],
      ['ping', { org: 'acme', user: '..' }],
      ['ping', { org: '.', user: 'bob' }],
      ['twoInOne', { a: '.', b: '.' }],
      ['twoInOne', { a: '', b: '..' }],
      ['items', { ids: ['..'] }],
      ['items', { ids: '..' }],
    ];
    for (const [name, args] of attempts) {
      const error = await callTool(tools.tool(name), args).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(ToolError.isInstance(error), `${name} ${JSON.stringify(args)}`).toBe(true);
      expect((error as ToolError).kind).toBe('invalid-args');
      expect((error as ToolError).message).toMatch(/"\.\.?"|dot segment|may not be empty/);
    }
    expect(seen.slice(before)).toEqual([]);
  });

  it('values that only contain dots, or encode them, reach the route as written', async () => {
    const tools = adapter();
    const before = seen.length;
    await callTool(tools.tool('ping'), { org: '...', user: '%2e%2e' });
    await callTool(tools.tool('ping'), { org: 'a..b', user: '../x' });
    await callTool(tools.tool('items'), { ids: ['..', '..'] });
    await callTool(tools.tool('twoInOne'), { a: 'report', b: '.json' });
    expect(seen.slice(before)).toEqual([
      'POST /api/v1/orgs/.../members/%252e%252e/ping',
      'POST /api/v1/orgs/a..b/members/..%2Fx/ping',
      'GET /api/v1/items/..,..',
      'GET /api/v1/files/report.json',
    ]);
  });
});
