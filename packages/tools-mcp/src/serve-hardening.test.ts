// `serveHttp` attacked as a local page or a local process would: Host and Origin in every shape a
// browser or a rebinding page can produce, CORS preflights, the token where it must not be
// accepted (query, other schemes, repeated headers), oversize bodies (with and without the token),
// and the token never echoed back. Real server on 127.0.0.1, raw sockets where node:http would
// tidy the request up.
import { connect } from 'node:net';
import { defineTool } from '@agent/core';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { maximumRequestBodyBytes, serveHttp } from './serve-http.js';

const echo = defineTool({
  name: 'echo',
  description: 'Echoes the text.',
  input: z.object({ text: z.string() }),
  policy: { permission: 'read-only' },
  execute: async ({ text }) => text,
});

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

async function served() {
  const server = await serveHttp({ tools: [echo] });
  closers.push(server.close);
  const { hostname, port } = new URL(server.url);
  return { server, hostname, port: Number(port), token: server.token ?? '' };
}

const ping = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });

/**
 * Sends `head` (the request line and headers, CRLF-separated, without the blank line) and `body`
 * over a raw socket; resolves with the status and the whole response text.
 */
function raw(
  port: number,
  head: string[],
  body: string | Buffer = '',
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      text += chunk;
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      // The server may close while a large body is still being written: what it said counts.
      if (text !== '' && (error.code === 'EPIPE' || error.code === 'ECONNRESET')) return;
      reject(error);
    });
    socket.on('close', () =>
      resolve({ status: Number(/^HTTP\/1\.1 (\d+)/.exec(text)?.[1] ?? 0), text }),
    );
    socket.write(`${head.join('\r\n')}\r\n\r\n`);
    socket.end(body);
  });
}

function post(
  port: number,
  headers: string[],
  body: string | Buffer = ping,
  target = '/mcp',
): Promise<{ status: number; text: string }> {
  return raw(
    port,
    [
      `POST ${target} HTTP/1.1`,
      'Content-Type: application/json',
      'Accept: application/json, text/event-stream',
      `Content-Length: ${Buffer.byteLength(body)}`,
      'Connection: close',
      ...headers,
    ],
    body,
  );
}

describe('Host and Origin (DNS rebinding, local pages), with the right token', () => {
  const refusedHosts = (port: number) => [
    `evil.example:${port}`,
    `localhost.:${port}`,
    `127.0.0.1.:${port}`,
    'localhost',
    `0.0.0.0:${port}`, // what a page calling http://0.0.0.0:port sends
    `[::ffff:127.0.0.1]:${port}`,
    `127.0.0.2:${port}`,
    `user@localhost:${port}`,
    `localhost:${port + 1}`,
    '',
  ];
  it('refuses every Host but the loopback names of this port', async () => {
    const { port, token } = await served();
    for (const host of refusedHosts(port)) {
      const response = await post(port, [`Host: ${host}`, `Authorization: Bearer ${token}`]);
      expect(response.status, host).toBe(403);
    }
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LOCALHOST:${port}`]) {
      const response = await post(port, [`Host: ${host}`, `Authorization: Bearer ${token}`]);
      expect(response.status, host).toBe(200);
    }
  });

  it('refuses a request with no Host, and one with two', async () => {
    const { port, token } = await served();
    const none = await raw(port, [
      'POST /mcp HTTP/1.0',
      `Authorization: Bearer ${token}`,
      'Content-Length: 0',
    ]);
    expect(none.status).not.toBe(200);
    const two = await post(port, [
      `Host: evil.example:${port}`,
      `Host: 127.0.0.1:${port}`,
      `Authorization: Bearer ${token}`,
    ]);
    expect(two.status).not.toBe(200);
  });

  it('refuses every Origin a page elsewhere can have', async () => {
    const { port, token } = await served();
    for (const origin of [
      'null', // sandboxed iframes, file:// pages, data: URLs
      'http://evil.example',
      `http://localhost:${port + 1}`, // another local web app
      `http://127.0.0.1:${port}@evil.example`,
      `http://localhost:${port}.evil.example`,
      `http://0.0.0.0:${port}`,
      `http://evil.example, http://localhost:${port}`,
    ]) {
      const response = await post(port, [
        `Host: 127.0.0.1:${port}`,
        `Origin: ${origin}`,
        `Authorization: Bearer ${token}`,
      ]);
      expect(response.status, origin).toBe(403);
    }
    // Two Origin headers, one of them foreign.
    for (const pair of [
      ['http://evil.example', `http://localhost:${port}`],
      [`http://localhost:${port}`, 'http://evil.example'],
    ]) {
      const response = await post(port, [
        `Host: 127.0.0.1:${port}`,
        ...pair.map((origin) => `Origin: ${origin}`),
        `Authorization: Bearer ${token}`,
      ]);
      expect(response.status, pair.join(' + ')).toBe(403);
    }
  });

  it('a CORS preflight from a page elsewhere is refused and allows nothing', async () => {
    const { port } = await served();
    const response = await raw(port, [
      'OPTIONS /mcp HTTP/1.1',
      `Host: 127.0.0.1:${port}`,
      'Origin: http://evil.example',
      'Access-Control-Request-Method: POST',
      'Access-Control-Request-Headers: authorization, content-type',
      'Connection: close',
    ]);
    expect(response.status).toBe(403);
    expect(response.text.toLowerCase()).not.toContain('access-control-allow');
  });
});

describe('the token only where it belongs', () => {
  it('is not taken from the query, a cookie, another scheme, or a second header', async () => {
    const { port, token } = await served();
    const host = `Host: 127.0.0.1:${port}`;
    const attempts: [string, string[], string][] = [
      ['query token', [host], `/mcp?token=${token}`],
      ['query access_token', [host], `/mcp?access_token=${token}`],
      ['cookie', [host, `Cookie: token=${token}`], '/mcp'],
      [
        'Basic',
        [host, `Authorization: Basic ${Buffer.from(`x:${token}`).toString('base64')}`],
        '/mcp',
      ],
      ['token with no scheme', [host, `Authorization: ${token}`], '/mcp'],
      ['token then more', [host, `Authorization: Bearer ${token} more`], '/mcp'],
      ['a prefix of it', [host, `Authorization: Bearer ${token.slice(0, -1)}`], '/mcp'],
      [
        'a wrong one first, the right one second',
        [host, 'Authorization: Bearer wrong', `Authorization: Bearer ${token}`],
        '/mcp',
      ],
      ['X-Api-Key', [host, `X-Api-Key: ${token}`], '/mcp'],
    ];
    for (const [label, headers, target] of attempts) {
      const response = await post(port, headers, ping, target);
      expect(response.status, label).toBe(401);
    }
  });

  it('is never echoed: not in 401s, errors, or the metadata', async () => {
    const { port, token } = await served();
    const host = `Host: 127.0.0.1:${port}`;
    const texts = [
      (await post(port, [host, `Authorization: Bearer ${token}x`])).text,
      (await post(port, [host, `Authorization: Bearer ${token}`], '{"not json')).text,
      (await post(port, [host, `Authorization: Bearer ${token}`], '[1,2')).text,
      (
        await raw(port, [
          'GET /.well-known/oauth-protected-resource/mcp HTTP/1.1',
          host,
          'Connection: close',
        ])
      ).text,
    ];
    for (const text of texts) expect(text).not.toContain(token);
  });
});

describe('request bodies', () => {
  it(`a body over ${maximumRequestBodyBytes} bytes gets 413, and the server keeps serving`, async () => {
    const { port, token } = await served();
    const host = `Host: 127.0.0.1:${port}`;
    const big = Buffer.alloc(maximumRequestBodyBytes + 1, 0x20);
    const response = await post(port, [host, `Authorization: Bearer ${token}`], big);
    expect(response.status).toBe(413);
    // A length announced that is never sent is refused at once (nothing waits for it).
    const announced = await raw(port, [
      'POST /mcp HTTP/1.1',
      host,
      `Authorization: Bearer ${token}`,
      'Content-Type: application/json',
      `Content-Length: ${10 ** 12}`,
      'Connection: close',
    ]);
    expect(announced.status).toBe(413);
    // A chunked body past the limit too.
    const chunked = await raw(
      port,
      [
        'POST /mcp HTTP/1.1',
        host,
        `Authorization: Bearer ${token}`,
        'Content-Type: application/json',
        'Transfer-Encoding: chunked',
        'Connection: close',
      ],
      `${big.length.toString(16)}\r\n${big.toString('latin1')}\r\n0\r\n\r\n`,
    );
    expect(chunked.status).toBe(413);
    const after = await post(port, [host, `Authorization: Bearer ${token}`]);
    expect(after.status).toBe(200);
  });

  it('a body under the limit is served', async () => {
    const { port, token } = await served();
    const text = 'x'.repeat(100_000);
    const call = JSON.stringify({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'echo', arguments: { text } },
    });
    const response = await post(
      port,
      [`Host: 127.0.0.1:${port}`, `Authorization: Bearer ${token}`],
      call,
    );
    expect(response.status).toBe(200);
    expect(response.text).toContain(text);
  });

  it('without the token, a large body is refused with 401 before it is read', async () => {
    const { port } = await served();
    const response = await post(
      port,
      [`Host: 127.0.0.1:${port}`],
      Buffer.alloc(maximumRequestBodyBytes * 2, 0x20),
    );
    expect(response.status).toBe(401);
  });
});

describe('connections', () => {
  /** A raw connection; `closed` resolves when the server ends it. */
  function idle(port: number): Promise<{ closed: Promise<void>; end(): void }> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      const closed = new Promise<void>((done) => socket.once('close', () => done()));
      socket.on('error', () => undefined);
      socket.once('connect', () => resolve({ closed, end: () => socket.destroy() }));
      socket.once('error', reject);
    });
  }

  it('a connection that never completes its headers is closed (nothing, or a byte at a time)', async () => {
    const server = await serveHttp({ tools: [echo], headersTimeoutMs: 200 });
    closers.push(server.close);
    const port = Number(new URL(server.url).port);
    const silent = await idle(port);
    const dribbling = connect(port, '127.0.0.1');
    dribbling.on('error', () => undefined);
    dribbling.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`);
    const dribbled = new Promise<void>((done) => dribbling.once('close', () => done()));
    // Resolves only if the server closes them (the test's own timeout is the failure).
    await Promise.all([silent.closed, dribbled]);
    // A client that sends its request is served as before.
    const response = await post(port, [
      `Host: 127.0.0.1:${port}`,
      `Authorization: Bearer ${server.token}`,
    ]);
    expect(response.status).toBe(200);
  });
});
