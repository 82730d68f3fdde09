import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formFieldPairs } from './body-encoding.js';
import { OpenApiToolAdapter } from './openapi-tool-adapter.js';
import { callTool } from './test-helpers.js';

interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

let server: Server;
let origin = '';
const received: Received[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({
        method: request.method ?? '',
        url: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks),
      });
      response.setHeader('content-type', 'application/json');
      response.end('{"ok":true}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

function api(paths: Record<string, unknown>) {
  return OpenApiToolAdapter.fromSpec(
    { openapi: '3.0.3', info: { title: 'Enc', version: '1' }, servers: [{ url: origin }], paths },
    { onWarning: () => undefined },
  );
}

function lastForm(): string[] {
  return decodeURIComponent(received.at(-1)?.body.toString() ?? '')
    .split('&')
    .filter((pair) => pair !== '');
}

describe('form bodies follow the encoding of each field', () => {
  const formOperation = (encoding: Record<string, unknown>, schema: Record<string, unknown>) => ({
    post: {
      operationId: 'send',
      requestBody: {
        content: { 'application/x-www-form-urlencoded': { schema, encoding } },
      },
      responses: { 200: { description: 'ok' } },
    },
  });

  it("Stripe's deepObject fields: metadata[key]=value, items[0][price]=…", async () => {
    const adapter = api({
      '/v1/customers': formOperation(
        {
          metadata: { style: 'deepObject', explode: true },
          items: { style: 'deepObject', explode: true },
          expand: { style: 'deepObject', explode: true },
        },
        {
          type: 'object',
          properties: {
            email: { type: 'string' },
            metadata: { type: 'object', additionalProperties: { type: 'string' } },
            items: { type: 'array', items: { type: 'object' } },
            expand: { type: 'array', items: { type: 'string' } },
          },
        },
      ),
    });
    await callTool(adapter.tool('send'), {
      body: {
        email: 'a@b.co',
        metadata: { order: '7', 'note with space': 'x y' },
        items: [{ price: 'p_1', quantity: 2 }, { price: 'p_2' }],
        expand: ['customer', 'invoice'],
      },
    });
    expect(lastForm()).toEqual([
      'email=a@b.co',
      'metadata[order]=7',
      'metadata[note with space]=x y',
      'items[0][price]=p_1',
      'items[0][quantity]=2',
      'items[1][price]=p_2',
      'expand[0]=customer',
      'expand[1]=invoice',
    ]);
    expect(received.at(-1)?.headers['content-type']).toBe('application/x-www-form-urlencoded');
  });

  it('defaults (style form, explode true), delimited styles, and a JSON field', async () => {
    const adapter = api({
      '/things': formOperation(
        {
          csv: { style: 'form', explode: false },
          spaced: { style: 'spaceDelimited' },
          piped: { style: 'pipeDelimited' },
          config: { contentType: 'application/json' },
        },
        { type: 'object' },
      ),
    });
    await callTool(adapter.tool('send'), {
      body: {
        tags: ['a', 'b'],
        filter: { state: 'open', mine: true },
        csv: ['x', 'y'],
        spaced: ['1', '2'],
        piped: ['3', '4'],
        config: { deep: { a: [1] } },
      },
    });
    expect(lastForm()).toEqual([
      'tags=a',
      'tags=b',
      'state=open',
      'mine=true',
      'csv=x,y',
      'spaced=1 2',
      'piped=3|4',
      'config={"deep":{"a":[1]}}',
    ]);
  });

  it('formFieldPairs: nulls are skipped, explode false joins an object', () => {
    expect(formFieldPairs('a', null, undefined)).toEqual([]);
    expect(
      formFieldPairs(
        'o',
        { k: 'v', n: 1 },
        { style: 'form', explode: false, contentType: undefined, allowReserved: false },
      ),
    ).toEqual([['o', 'k,v,n,1']]);
  });
});

describe('multipart bodies', () => {
  it('objects are JSON parts, encoding contentType wins, files are file parts', async () => {
    const adapter = api({
      '/upload': {
        post: {
          operationId: 'upload',
          requestBody: {
            content: {
              'multipart/form-data': {
                schema: {
                  type: 'object',
                  properties: {
                    meta: { type: 'object' },
                    note: { type: 'string' },
                    file: { type: 'string', format: 'binary' },
                    csv: { type: 'string' },
                  },
                },
                encoding: { csv: { contentType: 'text/csv' } },
              },
            },
          },
          responses: { 200: { description: 'ok' } },
        },
      },
    });
    await callTool(adapter.tool('upload'), {
      body: { meta: { a: 1 }, note: 'hello', file: 'file text', csv: 'a,b\n1,2' },
    });
    const last = received.at(-1) as Received;
    const form = await new Request('http://x/', {
      method: 'POST',
      body: new Uint8Array(last.body),
      headers: { 'content-type': String(last.headers['content-type']) },
    }).formData();
    const meta = form.get('meta') as File;
    expect(meta.type).toBe('application/json');
    expect(await meta.text()).toBe('{"a":1}');
    expect(form.get('note')).toBe('hello');
    expect(await (form.get('file') as File).text()).toBe('file text');
    const csv = form.get('csv') as File;
    expect(csv.type).toBe('text/csv');
    expect(await csv.text()).toBe('a,b\n1,2');
  });
});

describe('parameters', () => {
  const adapter = () =>
    api({
      '/items/{id}': {
        get: {
          operationId: 'getItem',
          parameters: [
            { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
            { name: 'Content-Length', in: 'header', schema: { type: 'integer' } },
            { name: 'Host', in: 'header', schema: { type: 'string' } },
            { name: 'Transfer-Encoding', in: 'header', schema: { type: 'string' } },
            { name: 'Sec-Fetch-Mode', in: 'header', schema: { type: 'string' } },
            { name: 'X-Request-Id', in: 'header', schema: { type: 'string' } },
          ],
          responses: { 200: { description: 'ok' } },
        },
      },
    });

  it('headers the HTTP client owns are never asked of the model', () => {
    const tool = adapter().tool('getItem');
    expect(Object.keys(tool?.parameters.properties ?? {})).toEqual(['id', 'X-Request-Id']);
  });

  it('a path parameter can never be empty', async () => {
    const tool = adapter().tool('getItem');
    const before = received.length;
    expect(tool?.validate?.({ id: '' }).ok).toBe(false);
    await expect(
      tool?.execute(
        { id: '' },
        {
          toolCallId: 'c',
          toolName: 'getItem',
          signal: new AbortController().signal,
          onUpdate: () => undefined,
          onProgress: () => undefined,
        },
      ),
    ).rejects.toThrow('at "id": the path parameter may not be empty');
    expect(received.length).toBe(before);
    await callTool(tool, { id: 'a b' });
    expect(received.at(-1)?.url).toBe('/items/a%20b');
  });
});
