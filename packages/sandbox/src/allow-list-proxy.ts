import * as dns from 'node:dns';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { foreignListener } from '@agent/core/loopback';
import { removeAtExit, removeNow } from './exit-cleanup.js';
import type { RequestStream } from './http-requests.js';
import {
  type BoundTarget,
  normalHost,
  plainHttpRequests,
  readTunnelStart,
  unrecognizedNameAlert,
} from './proxy-host-binding.js';
import { maxClientHelloBytes } from './tls-client-hello.js';

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
  const name = normalHost(host);
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
 * (loopback, `0.0.0.0`, and every address of its interfaces — a server listening on all of them,
 * a dev server's `--host`, a database, answers on its LAN or docker bridge address too),
 * link-local ones (the cloud metadata service at 169.254.169.254 hands out the VM's
 * credentials), also as IPv4-mapped IPv6. The proxy runs outside the sandbox, so a name under an
 * allowed `*.domain` that resolves there (anyone may publish such a record for a domain they
 * control, or under services like nip.io) reached what network `off` keeps out.
 */
function internalAddress(address: string): string | undefined {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  const ip = mapped ?? address;
  const special = specialAddress(ip);
  if (special !== undefined) return special;
  return ownAddresses().has(ip.toLowerCase().replace(/%.*$/, ''))
    ? 'an address of this machine'
    : undefined;
}

/** Loopback, unspecified and link-local addresses (IPv4, or IPv6 not mapped), by kind. */
function specialAddress(ip: string): string | undefined {
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

/** The addresses of this machine's interfaces, as they are now (an interface may come up later). */
function ownAddresses(): Set<string> {
  const found = new Set<string>();
  for (const entries of Object.values(os.networkInterfaces()))
    for (const entry of entries ?? []) found.add(entry.address.toLowerCase().replace(/%.*$/, ''));
  return found;
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
  client.end(forbidden(`Blocked by the sandbox proxy: ${why}\n`));
}

async function route(
  client: net.Socket,
  head: Buffer,
  rest: Buffer,
  context: { allowHosts: readonly string[]; sockets: Set<net.Socket>; lookup: HostLookup },
): Promise<void> {
  const { allowHosts, sockets } = context;
  const text = head.toString('latin1');
  const [requestLine = ''] = text.split('\r\n');
  const [method = '', target = '', version = 'HTTP/1.1'] = requestLine.split(' ');
  let host: string;
  let port: number;
  const connect = method === 'CONNECT';
  if (connect) {
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
  // A service of this machine that is allowed by name (a local registry on localhost:4873) may
  // not be running, and any user of the machine can listen on its port then: what the sandboxed
  // command sends (a publish token, the code) would go to them. Not while the kernel's socket
  // tables (Linux) name another user's process as its listener.
  if (addresses.some((address) => internalAddress(address) !== undefined)) {
    const uid = foreignListener(port);
    if (uid !== undefined) {
      refuse(
        client,
        `${host}:${port} is served on this machine by a process of another user (uid ${uid}), not yours`,
      );
      return;
    }
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
  client.on('close', () => upstream.destroy());
  const bound = { host, port };
  if (connect) {
    client.write(`${version} 200 Connection established\r\n\r\n`);
    tunnel(client, upstream, rest, bound, (name) => allowedBy(name, allowHosts) !== undefined);
    return;
  }
  // Plain HTTP: every request of the connection is read, and each must be for this host.
  upstream.pipe(client);
  startRequests(client, upstream, plainHttpRequests(bound), Buffer.concat([head, rest]));
}

/**
 * Forwards the requests of `requests` (the client's bytes from `first` on) to `upstream`, whose
 * answers are piped back already. A refused request ends the forwarding there: a 403 when nothing was forwarded
 * yet; else the upstream gets the requests before it and the end of the connection, and
 * answers them.
 */
function startRequests(
  client: net.Socket,
  upstream: net.Socket,
  requests: RequestStream,
  first: Buffer,
): void {
  const forward = requests.push(first);
  if (requests.refused !== undefined && forward.length === 0) {
    upstream.unpipe(client);
    upstream.destroy();
    refuse(client, requests.refused);
    return;
  }
  upstream.write(forward);
  if (requests.refused !== undefined) {
    stopReading(client, upstream);
    return;
  }
  relay(client, upstream, (chunk) => ({
    forward: requests.push(chunk),
    stop: requests.refused !== undefined,
  }));
}

/** The client's further bytes are dropped; the upstream answers what it got, then ends. */
function stopReading(client: net.Socket, upstream: net.Socket): void {
  client.removeAllListeners('data');
  client.removeAllListeners('end');
  client.on('data', () => undefined);
  upstream.end();
}

/**
 * Carries a CONNECT tunnel to `bound`: the server's bytes at once (some protocols speak first),
 * the client's once its first ones show what it speaks (see readTunnelStart) — a TLS server
 * name or an HTTP Host for another site ends the tunnel.
 */
function tunnel(
  client: net.Socket,
  upstream: net.Socket,
  early: Buffer,
  bound: BoundTarget,
  allowed: (host: string) => boolean,
): void {
  upstream.pipe(client);
  let start = early;
  const decide = (): boolean => {
    const read = readTunnelStart(start, bound, allowed);
    switch (read.type) {
      case 'incomplete':
        if (start.length <= maxClientHelloBytes + 2048) return false;
        upstream.destroy();
        client.destroy();
        return true;
      case 'refuse':
        upstream.unpipe(client);
        upstream.destroy();
        client.end(
          read.tls
            ? unrecognizedNameAlert
            : forbidden(`Blocked by the sandbox proxy: ${read.reason}\n`),
        );
        return true;
      case 'tls':
      case 'other':
        upstream.write(start);
        relay(client, upstream, (chunk) => ({ forward: chunk, stop: false }));
        return true;
      case 'http':
        startRequests(client, upstream, read.requests, start);
        return true;
      default: {
        const exhaustive: never = read;
        return exhaustive;
      }
    }
  };
  if (start.length > 0 && decide()) return;
  const onData = (chunk: Buffer) => {
    start = Buffer.concat([start, chunk]);
    if (decide()) client.off('data', onData);
  };
  client.on('data', onData);
  client.on('end', () => {
    if (client.listenerCount('data') > 0 && !upstream.destroyed) upstream.end();
  });
  client.resume();
}

/**
 * Forwards what the client sends through `filter`, with backpressure; `stop` (a refused request)
 * ends the forwarding after what it gives (see {@link stopReading}). The client's end ends the
 * upstream's writing side.
 */
function relay(
  client: net.Socket,
  upstream: net.Socket,
  filter: (chunk: Buffer) => { forward: Buffer; stop: boolean },
): void {
  client.removeAllListeners('data');
  client.removeAllListeners('end');
  client.on('data', (chunk: Buffer) => {
    const { forward, stop } = filter(chunk);
    if (stop) {
      if (forward.length > 0) upstream.write(forward);
      stopReading(client, upstream);
      return;
    }
    if (forward.length > 0 && !upstream.write(forward)) {
      client.pause();
      upstream.once('drain', () => client.resume());
    }
  });
  client.on('end', () => upstream.end());
  client.resume();
}

function forbidden(body: string): string {
  return `HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
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
