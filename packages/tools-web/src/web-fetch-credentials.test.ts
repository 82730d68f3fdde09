// A URL with a user name and password (`https://alice:s3cr3t@host/`): web_fetch sends them as
// Basic authentication, and must never repeat them — not in the header of a page, an error
// page, a network error, a redirect report, the details kept in history, nor in every relative
// link of the page (resolved against the page's URL). Before the fix each of these showed them.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { executeTool, ToolError, toolResultText } from '@agent/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testContext } from './test-helpers.js';
import { createWebFetchTool } from './web-fetch.js';

const user = 'alice';
const password = 's3cr3tpw';
let server: Server;
let host = '';
const hanging = new Set<import('node:http').ServerResponse>();

beforeAll(async () => {
  server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://x').pathname;
    const auth = request.headers.authorization ?? 'none';
    const routes: Record<string, () => void> = {
      '/page': () => {
        response.writeHead(200, { 'content-type': 'text/html' });
        response.end(
          `<html><head><title>T</title></head><body><h1>Page</h1><p>auth=${auth === `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` ? 'ok' : 'missing'}</p><p><a href="/about">About</a> <img src="logo.png" alt="logo"></p></body></html>`,
        );
      },
      '/text': () => {
        response.writeHead(200, { 'content-type': 'text/plain' });
        response.end('plain');
      },
      '/missing': () => {
        response.writeHead(404, { 'content-type': 'text/plain' });
        response.end('not here');
      },
      '/hop': () => {
        response.writeHead(302, { location: '/text' });
        response.end();
      },
      '/loop': () => {
        response.writeHead(302, { location: '/loop' });
        response.end();
      },
      '/away': () => {
        response.writeHead(302, { location: 'http://localhost:1/elsewhere' });
        response.end();
      },
      '/ftp': () => {
        response.writeHead(302, { location: `ftp://${host}/file` });
        response.end();
      },
      '/slow': () => {
        hanging.add(response);
        response.writeHead(200, { 'content-type': 'text/plain' });
        response.write('a');
      },
    };
    (routes[path] ?? routes['/missing'])?.();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const response of hanging) response.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const secretFree = (text: string) => {
  expect(text).not.toContain(password);
  expect(text).not.toContain(`${user}:`);
  expect(text).not.toContain(`${user}@`);
};

/** Every spelling of the credentials in a URL: both parts, user only, percent-encoded, upper-case scheme. */
const spellings = [
  (path: string) => `http://${user}:${password}@${host}${path}`,
  (path: string) => `HTTP://${user}:${password}@${host}${path}`,
  (path: string) =>
    `http://${user}:${encodeURIComponent(password).replace('3', '%33')}@${host}${path}`,
  (path: string) => `  http://${user}:${password}@${host}${path}`,
];

describe('credentials in the URL are sent, never shown', () => {
  const tool = createWebFetchTool({ allowPrivateNetwork: true, timeoutMs: 3000 });

  it.each(spellings.map((spell, index) => [index, spell] as const))(
    'a page, its links and its details (spelling %i)',
    async (_index, spell) => {
      const result = await tool.execute({ url: spell('/page') }, testContext());
      const text = toolResultText(result.content);
      expect(text).toContain('auth=ok');
      expect(text).toContain(`[About](http://${host}/about)`);
      secretFree(text);
      secretFree(JSON.stringify(result.details));
    },
  );

  it.each([
    ['an error page', '/missing'],
    ['a same-host redirect', '/hop'],
    ['a redirect to another host', '/away'],
    ['a redirect to another scheme', '/ftp'],
    ['a redirect loop', '/loop'],
    ['plain text in raw format', '/text'],
  ])('%s', async (_name, path) => {
    for (const spell of spellings) {
      const message = await executeTool(tool, { url: spell(path), format: 'raw' });
      secretFree(toolResultText(message.content));
      secretFree(JSON.stringify(message.details ?? {}));
    }
  });

  it('network errors, refusals, timeouts and unusable URLs', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const guarded = createWebFetchTool({ timeoutMs: 3000 });
    const quick = createWebFetchTool({ allowPrivateNetwork: true, timeoutMs: 200 });
    const cases: [ReturnType<typeof createWebFetchTool>, string][] = [
      [tool, `http://${user}:${password}@127.0.0.1:${port}/`],
      [guarded, `http://${user}:${password}@${host}/page`],
      [guarded, `http://${user}:${password}@[::1]:${port}/`],
      [quick, `http://${user}:${password}@${host}/slow`],
      [tool, `ftp://${user}:${password}@example.com/file`],
      [tool, `file://${user}:${password}@localhost/etc/passwd`],
      [tool, `http://${user}:${password}@exa mple.com/`],
      [tool, `javascript://${user}:${password}@x/%0aalert(1)`],
    ];
    for (const [which, url] of cases) {
      const error = await which.execute({ url }, testContext()).then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect(ToolError.isInstance(error), url).toBe(true);
      secretFree((error as Error).message);
    }
  });
});
