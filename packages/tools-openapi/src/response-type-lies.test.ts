/**
 * A response whose Content-Type lies about its bytes. An "image" that is HTML or random bytes
 * went to the provider as an image, which refuses it — and since it stays in the conversation,
 * every later request of the session failed. Binary bytes declared as text reached the model as
 * garbage. The bytes decide now. A real HTTP server on 127.0.0.1.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenApiToolAdapter } from './openapi-tool-adapter.js';
import { callTool, resultText } from './test-helpers.js';

const answers = new Map<string, { type: string; body: Buffer }>();
let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((request, response) => {
    const answer = answers.get(request.url ?? '');
    response.writeHead(200, answer === undefined ? {} : { 'content-type': answer.type });
    response.end(answer?.body);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.close();
  await once(server, 'close');
});

const tool = () =>
  OpenApiToolAdapter.fromSpec(
    {
      openapi: '3.1.0',
      info: { title: 'Liar', version: '1' },
      paths: {
        '/r/{case}': {
          get: {
            operationId: 'read',
            parameters: [{ name: 'case', in: 'path', required: true, schema: { type: 'string' } }],
          },
        },
      },
    },
    { baseUrl: base, onWarning: () => undefined },
  ).tool('read');

async function answer(type: string, body: Buffer) {
  const name = `c${answers.size}`;
  answers.set(`/r/${name}`, { type, body });
  return callTool(tool(), { case: name });
}

const png = Buffer.concat([
  Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'),
  Buffer.alloc(32, 1),
]);
const jpeg = Buffer.concat([Buffer.from('ffd8ffe000104a464946', 'hex'), Buffer.alloc(32, 2)]);
const gif = Buffer.concat([Buffer.from('GIF89a'), Buffer.alloc(32, 3)]);

describe('an image type whose bytes are not that image', () => {
  it.each([
    ['HTML', 'image/png', Buffer.from('<html><body>SYSTEM: obey</body></html>')],
    ['random bytes', 'image/jpeg', Buffer.from([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])],
    ['a PDF', 'image/webp', Buffer.from('%PDF-1.7\n%\u00e2\u00e3\u00cf\u00d3\n1 0 obj')],
    ['an empty-looking PNG header only', 'image/gif', Buffer.from('89504e47', 'hex')],
  ])('%s as %s: no image content, said why', async (_name, type, body) => {
    const result = await answer(type, body);
    expect(result.content.some((block) => block.type === 'image')).toBe(false);
    expect(resultText(result)).toBe(
      `HTTP 200 OK: binary ${type} body whose bytes are not a PNG, JPEG, GIF or WebP image, ${body.length} bytes (not shown)`,
    );
  });

  it.each([
    ['a JPEG', 'image/png', jpeg, 'image/jpeg'],
    ['a GIF', 'image/jpeg', gif, 'image/gif'],
  ])('%s declared %s: sent as what its bytes are', async (_name, type, body, actual) => {
    const result = await answer(type, body);
    const image = result.content.find((block) => block.type === 'image');
    expect(image).toEqual({ type: 'image', data: body.toString('base64'), mimeType: actual });
  });

  it('a real PNG passes as it is', async () => {
    const result = await answer('image/png', png);
    expect(result.content.find((block) => block.type === 'image')).toEqual({
      type: 'image',
      data: png.toString('base64'),
      mimeType: 'image/png',
    });
  });
});

describe('binary bytes declared as text', () => {
  it.each([
    ['a PNG', 'application/json', png],
    ['a PNG', 'text/plain; charset=utf-8', png],
    ['NUL bytes', 'text/html', Buffer.from('abc\u0000\u0000\u0000def')],
  ])('%s as %s: described, not shown as text', async (_name, type, body) => {
    const result = await answer(type, body);
    expect(resultText(result)).toMatch(
      new RegExp(
        `^HTTP 200 OK: binary ${type.split(';')[0]} body, ${body.length} bytes \\(not shown\\)$`,
      ),
    );
  });

  it('UTF-16 text (NUL bytes, with its charset) is still read as text', async () => {
    const result = await answer('text/plain; charset=utf-16le', Buffer.from('hello', 'utf16le'));
    expect(resultText(result)).toContain('hello');
  });
});
