// Where `serveHttp` listens, against another process on the machine: `localhost` resolves to ::1
// before 127.0.0.1 on most systems and the Host check accepts `localhost:port`, so whoever held
// [::1] on our port received the bearer token of every client configured with `localhost`. And a
// port already in use crashed the process with an unhandled 'error' event. Real sockets; the
// other process is a real child process.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { type AddressInfo, connect, createServer, type Server } from 'node:net';
import { defineTool } from '@agent/core';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { serveHttp } from './serve-http.js';

const echo = defineTool({
  name: 'echo',
  description: 'Echoes the text.',
  input: z.object({ text: z.string() }),
  policy: { permission: 'read-only' },
  execute: async ({ text }) => text,
});

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Another process listening on `host:port` (0: any); resolves with the port it holds. */
async function otherProcessListening(host: string, port = 0): Promise<number> {
  const child: ChildProcess = spawn(
    process.execPath,
    [
      '-e',
      `const s = require('node:net').createServer((c) => c.end('HTTP/1.1 200 OK\\r\\ncontent-length: 6\\r\\n\\r\\nstolen'));
       s.listen(${port}, ${JSON.stringify(host)}, () => console.log(s.address().port));`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  cleanups.push(async () => {
    if (child.exitCode === null) {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
  });
  const [line] = (await once(child.stdout as NodeJS.ReadableStream, 'data')) as [Buffer];
  return Number(line.toString().trim());
}

/** The status line's code of a POST to `host:port/mcp`, or the connection error's code. */
function postTo(host: string, port: number, headers: string[]): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, host);
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      text += chunk;
    });
    socket.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
    socket.on('close', () => resolve(/^HTTP\/1\.1 (\d+)/.exec(text)?.[1] ?? text));
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
    socket.end(
      [
        'POST /mcp HTTP/1.1',
        'Content-Type: application/json',
        'Accept: application/json, text/event-stream',
        `Content-Length: ${body.length}`,
        'Connection: close',
        ...headers,
        '',
        body,
      ].join('\r\n'),
    );
  });
}

describe('serveHttp on 127.0.0.1 also holds [::1] on its port', () => {
  it('a client dialing [::1] reaches this server: 401 without the token, served with it', async () => {
    const server = await serveHttp({ tools: [echo] });
    cleanups.push(server.close);
    const port = Number(new URL(server.url).port);
    expect(await postTo('::1', port, [`Host: localhost:${port}`])).toBe('401');
    for (const host of [`localhost:${port}`, `[::1]:${port}`])
      expect(
        await postTo('::1', port, [`Host: ${host}`, `Authorization: Bearer ${server.token}`]),
        host,
      ).toBe('200');
    // A rebinding page still gets nothing there.
    expect(
      await postTo('::1', port, [
        `Host: evil.example:${port}`,
        `Authorization: Bearer ${server.token}`,
      ]),
    ).toBe('403');
  });

  it('refuses to start when another process holds [::1] on the port asked for', async () => {
    const port = await otherProcessListening('::1');
    await expect(serveHttp({ tools: [echo], port })).rejects.toThrow(
      `Another process listens on [::1]:${port}: a client dialing localhost:${port} could reach it instead and hand it the token; choose another port`,
    );
    // Nothing was left listening on 127.0.0.1.
    expect(await postTo('127.0.0.1', port, [`Host: 127.0.0.1:${port}`])).toBe('ECONNREFUSED');
  });

  it('refuses, naming the address, a port another process holds on 127.0.0.1', async () => {
    const port = await otherProcessListening('127.0.0.1');
    await expect(serveHttp({ tools: [echo], port })).rejects.toThrow(
      `Cannot listen on 127.0.0.1:${port}: another process listens there`,
    );
  });

  it('close() lets both addresses go', async () => {
    const server = await serveHttp({ tools: [echo] });
    const port = Number(new URL(server.url).port);
    await server.close();
    for (const host of ['127.0.0.1', '::1']) {
      const probe: Server = createServer();
      await new Promise<void>((resolve, reject) => {
        probe.once('error', reject);
        probe.listen(port, host, resolve);
      });
      await new Promise((resolve) => probe.close(resolve));
    }
  });

  it('a host other than 127.0.0.1 is listened on alone', async () => {
    const server = await serveHttp({ tools: [echo], host: '::1' });
    cleanups.push(server.close);
    const port = Number(new URL(server.url).port);
    expect(server.url).toBe(`http://[::1]:${port}/mcp`);
    expect(await postTo('::1', port, [`Host: [::1]:${port}`])).toBe('401');
  });

  it.each(['0.0.0.0', '::'])(
    "auth: 'none' on %s (every interface) is refused and nothing is left listening",
    async (host) => {
      const holder = createServer();
      await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
      const { port } = holder.address() as AddressInfo;
      await new Promise((resolve) => holder.close(resolve));
      await expect(serveHttp({ tools: [echo], host, port, auth: 'none' })).rejects.toThrow(
        `auth: 'none' is for a loopback address only: on ${host} anyone who can reach port ${port} over the network could call the tools`,
      );
      expect(await postTo('127.0.0.1', port, [`Host: 127.0.0.1:${port}`])).toBe('ECONNREFUSED');
      // The control: with a token it serves there, and asks for the token.
      const served = await serveHttp({ tools: [echo], host, port });
      cleanups.push(served.close);
      expect(await postTo('127.0.0.1', port, [`Host: 127.0.0.1:${port}`])).toBe('401');
    },
  );
});
