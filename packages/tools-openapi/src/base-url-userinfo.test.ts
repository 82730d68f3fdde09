/**
 * A base URL with a user name and password (`https://user:pass@host/v1`, as many tools accept
 * one). fetch refuses such a URL, and its error — quoted to the model — held the password twice.
 * Now the URL goes out without them and they become Basic authorization, like any credential:
 * to that origin only, hidden where an answer echoes them, dropped on a redirect elsewhere.
 * Server URLs that are not http(s) are an error naming the URL. Real servers on 127.0.0.1.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ToolError } from '@agent/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenApiToolAdapter, type OpenApiToolOptions } from './openapi-tool-adapter.js';
import { callTool, resultText } from './test-helpers.js';

interface Seen {
  url: string;
  headers: IncomingHttpHeaders;
}

async function startServer(
  answer: (url: string) => { status: number; location?: string },
): Promise<{ origin: string; seen: Seen[]; server: Server }> {
  const seen: Seen[] = [];
  const server = createServer((request, response) => {
    seen.push({ url: request.url ?? '', headers: request.headers });
    const { status, location } = answer(request.url ?? '');
    response.writeHead(status, {
      'content-type': 'application/json',
      ...(location === undefined ? {} : { location }),
    });
    // An API that echoes what it was sent (a debugging endpoint, an error page).
    response.end(
      JSON.stringify({ url: request.url, authorization: request.headers.authorization }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    server,
  };
}

let api: Awaited<ReturnType<typeof startServer>>;
let other: Awaited<ReturnType<typeof startServer>>;
beforeAll(async () => {
  other = await startServer(() => ({ status: 200 }));
  api = await startServer((url) =>
    url.startsWith('/v1/away')
      ? { status: 307, location: `${other.origin}/landed` }
      : { status: 200 },
  );
});
afterAll(() => {
  api.server.close();
  other.server.close();
});

const password = 'pa:ss w@rd/π';
const withUserinfo = (origin: string) =>
  origin.replace('://', `://alice%40example.com:${encodeURIComponent(password)}@`);
const basic = `Basic ${Buffer.from(`alice@example.com:${password}`).toString('base64')}`;

function adapter(server: string, options: OpenApiToolOptions = {}) {
  return OpenApiToolAdapter.fromSpec(
    {
      openapi: '3.1.0',
      info: { title: 'Userinfo', version: '1' },
      servers: [{ url: server }],
      paths: {
        '/{where}': {
          get: {
            operationId: 'read',
            parameters: [{ name: 'where', in: 'path', required: true, schema: { type: 'string' } }],
          },
        },
      },
    },
    { onWarning: () => undefined, ...options },
  ).tool('read');
}

describe('a base URL with a user name and password', () => {
  const ways: [string, () => ReturnType<typeof adapter>][] = [
    ['in the document’s servers', () => adapter(`${withUserinfo(api.origin)}/v1`)],
    [
      'as the baseUrl option',
      () => adapter('https://api.example.com', { baseUrl: `${withUserinfo(api.origin)}/v1` }),
    ],
  ];

  it.each(ways)('%s: sent as Basic authorization, the URL without them', async (_way, tool) => {
    const before = api.seen.length;
    const result = await callTool(tool(), { where: 'items' });
    const request = api.seen[before];
    expect(request?.url).toBe('/v1/items');
    expect(request?.headers.authorization).toBe(basic);
    expect(result.details?.url).toBe(`${api.origin}/v1/items`);
    const text = resultText(result);
    // The echo is hidden: neither the password nor the header it became reach the model.
    expect(text).not.toContain(basic.slice('Basic '.length));
    expect(text).not.toContain('pa:ss');
    expect(text).not.toContain(encodeURIComponent(password));
  });

  it.each(ways)('%s: a redirect to another origin goes without them', async (_way, tool) => {
    const before = other.seen.length;
    await callTool(tool(), { where: 'away' });
    expect(other.seen[before]?.url).toBe('/landed');
    expect(other.seen[before]?.headers.authorization).toBeUndefined();
  });

  it('auth given as an option wins over the URL’s', async () => {
    const before = api.seen.length;
    await callTool(
      adapter(`${withUserinfo(api.origin)}/v1`, { auth: { type: 'bearer', token: 'tok-123456' } }),
      { where: 'items' },
    );
    expect(api.seen[before]?.headers.authorization).toBe('Bearer tok-123456');
  });

  it('a failing call’s error does not quote them', async () => {
    const closed = await startServer(() => ({ status: 200 }));
    closed.server.close();
    const error = await callTool(adapter(`${withUserinfo(closed.origin)}/v1`), {
      where: 'items',
    }).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(ToolError.isInstance(error)).toBe(true);
    const message = (error as Error).message;
    expect(message).toContain(`GET ${closed.origin}/v1/items failed`);
    expect(message).not.toContain('alice');
    expect(message).not.toContain(encodeURIComponent(password));
  });
});

describe('a server URL that is not http or https', () => {
  it.each([
    'file:///etc/passwd',
    'ftp://127.0.0.1/x',
    'javascript://alert(1)',
    'http+unix://%2Fvar%2Frun%2Fdocker.sock',
    'ws://127.0.0.1:1/',
  ])('%s: the call fails naming it, nothing is sent', async (url) => {
    const error = await callTool(adapter(url), { where: 'items' }).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(ToolError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain(
      `The server URL "${url}" is not an http or https URL`,
    );
  });
});
