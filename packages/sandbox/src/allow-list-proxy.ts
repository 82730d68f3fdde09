import * as dns from 'node:dns';
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
  return allowedBy(host, allowHosts) !== undefined;
}

/** How `host` is allowed: by an entry naming it (`exact`), by a `*.domain` one, or not at all. */
function allowedBy(host: string, allowHosts: readonly string[]): 'exact' | 'wildcard' | undefined {
  const name = host
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '');
  let found: 'exact' | 'wildcard' | undefined;
  for (const pattern of allowHosts) {
    const allowed = pattern.toLowerCase().replace(/^\[|\]$/g, '');
    if (allowed.startsWith('*.')) {
      if (name.endsWith(allowed.slice(1))) found ??= 'wildcard';
    } else if (name === allowed) return 'exact';
  }
  return found;
}

/**
 * Why `address` is none of a wildcard's business, or undefined: this machine's own services
 * (loopback, `0.0.0.0`), link-local ones (the cloud metadata service at 169.254.169.254 hands out
 * the VM's credentials), also as IPv4-mapped IPv6. The proxy runs outside the sandbox, so a name
 * under an allowed `*.domain` that resolves there (anyone may publish such a record for a domain
 * they control, or under services like nip.io) reached what network `off` keeps out.
 */
function internalAddress(address: string): string | undefined {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  const ip = mapped ?? address;
  if (net.isIPv4(ip)) {
    const [first, second] = ip.split('.').map(Number);
    if (first === 127) return 'a loopback address';
    if (first === 0) return 'an unspecified address';
    if (first === 169 && second === 254) return 'a link-local address (the cloud metadata service)';
    return undefined;
  }
  const lower = ip.toLowerCase();
  if (lower === '::1') return 'a loopback address';
  if (lower === '::') return 'an unspecified address';
  if (/^fe[89ab]/.test(lower)) return 'a link-local address';
  return undefined;
}

/** The resolver the proxy uses (replaceable for tests: an attacker's DNS cannot run here). */
export type HostLookup = (host: string) => Promise<readonly string[]>;

const systemLookup: HostLookup = async (host) =>
  (await dns.promises.lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);

const maxHeaderBytes = 64 * 1024;

/**
 * Starts the proxy. It understands `CONNECT host:port` (HTTPS and any TCP) and absolute-form
 * HTTP requests (`GET http://host/path`); anything else, and any host not allowed, gets a 403.
 */
export async function startAllowListProxy(
  allowHosts: readonly string[],
  options: { lookup?: HostLookup } = {},
): Promise<AllowListProxy> {
  const lookup = options.lookup ?? systemLookup;
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
      void route(client, head.subarray(0, end + 4), head.subarray(end + 4), {
        allowHosts,
        sockets,
        lookup,
      });
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

async function route(
  client: net.Socket,
  head: Buffer,
  rest: Buffer,
  context: { allowHosts: readonly string[]; sockets: Set<net.Socket>; lookup: HostLookup },
): Promise<void> {
  const { allowHosts, sockets } = context;
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
  const allowed = allowedBy(host, allowHosts);
  if (allowed === undefined) {
    refuse(client, `${host} is not an allowed host`);
    return;
  }
  // Resolved here and connected by address: what was checked is what is reached (no second
  // lookup a rebinding DNS could answer otherwise).
  const bare = host.replace(/^\[|\]$/g, '');
  let addresses: readonly string[];
  try {
    addresses = net.isIP(bare) !== 0 ? [bare] : await context.lookup(bare);
  } catch {
    refuse(client, `cannot resolve ${host}`);
    return;
  }
  if (allowed === 'wildcard') {
    for (const address of addresses) {
      const why = internalAddress(address);
      if (why !== undefined) {
        refuse(
          client,
          `${host} resolves to ${address}, ${why}: a *.domain entry does not reach it (allow the host by its name)`,
        );
        return;
      }
    }
  }
  if (addresses.length === 0) {
    refuse(client, `cannot resolve ${host}`);
    return;
  }
  const upstream = await connectToFirst(addresses, port, sockets);
  if (upstream === undefined) {
    if (!client.writableEnded) refuse(client, `cannot reach ${host}:${port}`);
    return;
  }
  if (client.destroyed) {
    upstream.destroy();
    return;
  }
  upstream.on('error', () => upstream.destroy());
  if (forwardHead === undefined) client.write(`${version} 200 Connection established\r\n\r\n`);
  else upstream.write(forwardHead);
  if (rest.length > 0) upstream.write(rest);
  client.pipe(upstream);
  upstream.pipe(client);
  client.resume();
  client.on('close', () => upstream.destroy());
}

/** A connection to the first of `addresses` (in the resolver's order) that accepts one. */
async function connectToFirst(
  addresses: readonly string[],
  port: number,
  sockets: Set<net.Socket>,
): Promise<net.Socket | undefined> {
  for (const address of addresses) {
    const socket = net.connect({ host: address, port });
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    const connected = await new Promise<boolean>((resolve) => {
      socket.once('connect', () => resolve(true));
      socket.once('error', () => resolve(false));
    });
    if (connected) return socket;
    socket.destroy();
  }
  return undefined;
}
