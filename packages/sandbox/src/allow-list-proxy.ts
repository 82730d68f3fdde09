import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { removeAtExit, removeNow } from './exit-cleanup.js';

/** A forward proxy on a unix socket that lets sandboxed processes reach only allowed hosts. */
export interface AllowListProxy {
  socketPath: string;
  close(): Promise<void>;
}

/** Whether `host` is allowed: an exact name or address, or `*.domain` for its subdomains. */
export function hostAllowed(host: string, allowHosts: readonly string[]): boolean {
  const name = host
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '');
  return allowHosts.some((pattern) => {
    const allowed = pattern.toLowerCase().replace(/^\[|\]$/g, '');
    if (allowed.startsWith('*.')) return name.endsWith(allowed.slice(1));
    return name === allowed;
  });
}

const maxHeaderBytes = 64 * 1024;

/**
 * Starts the proxy. It understands `CONNECT host:port` (HTTPS and any TCP) and absolute-form
 * HTTP requests (`GET http://host/path`); anything else, and any host not allowed, gets a 403.
 */
export async function startAllowListProxy(allowHosts: readonly string[]): Promise<AllowListProxy> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sandbox-proxy-'));
  const socketPath = path.join(dir, 'proxy.sock');
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end === -1) {
        if (head.length > maxHeaderBytes) refuse(client, 'request head too large');
        return;
      }
      client.off('data', onData);
      client.pause();
      route(client, head.subarray(0, end + 4), head.subarray(end + 4), allowHosts, sockets);
    };
    client.on('data', onData);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });
  // The proxy serves sandboxed commands, which keep the process alive themselves: a listening
  // proxy alone must not (a script whose sandbox was never closed would never exit).
  server.unref();
  // A sandbox nobody closed still leaves nothing behind when the process exits.
  removeAtExit(dir);
  return {
    socketPath,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      removeNow(dir);
    },
  };
}

function refuse(client: net.Socket, why: string): void {
  const body = `Blocked by the sandbox proxy: ${why}\n`;
  client.end(
    `HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

function route(
  client: net.Socket,
  head: Buffer,
  rest: Buffer,
  allowHosts: readonly string[],
  sockets: Set<net.Socket>,
): void {
  const text = head.toString('latin1');
  const [requestLine = '', ...headerLines] = text.split('\r\n');
  const [method = '', target = '', version = 'HTTP/1.1'] = requestLine.split(' ');
  let host: string;
  let port: number;
  let forwardHead: Buffer | undefined;
  if (method === 'CONNECT') {
    const at = target.lastIndexOf(':');
    host = target.slice(0, at);
    port = Number(target.slice(at + 1));
  } else {
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      refuse(client, 'only proxy requests (absolute URLs or CONNECT) are served');
      return;
    }
    if (url.protocol !== 'http:') {
      refuse(client, `unsupported scheme ${url.protocol}`);
      return;
    }
    host = url.hostname;
    port = url.port === '' ? 80 : Number(url.port);
    const headers = headerLines.filter(
      (line) => line !== '' && !/^proxy-(connection|authorization):/i.test(line),
    );
    forwardHead = Buffer.from(
      `${method} ${url.pathname}${url.search} ${version}\r\n${headers.join('\r\n')}\r\n\r\n`,
      'latin1',
    );
  }
  if (!Number.isInteger(port) || port < 1 || port > 65_535 || host === '') {
    refuse(client, `bad target ${target}`);
    return;
  }
  if (!hostAllowed(host, allowHosts)) {
    refuse(client, `${host} is not an allowed host`);
    return;
  }
  const upstream = net.connect({ host: host.replace(/^\[|\]$/g, ''), port });
  sockets.add(upstream);
  upstream.on('close', () => sockets.delete(upstream));
  upstream.on('error', () => {
    if (!client.writableEnded) refuse(client, `cannot reach ${host}:${port}`);
    upstream.destroy();
  });
  upstream.on('connect', () => {
    if (forwardHead === undefined) client.write(`${version} 200 Connection established\r\n\r\n`);
    else upstream.write(forwardHead);
    if (rest.length > 0) upstream.write(rest);
    client.pipe(upstream);
    upstream.pipe(client);
    client.resume();
  });
  client.on('close', () => upstream.destroy());
}
