import * as dns from 'node:dns';
import * as http from 'node:http';
import * as net from 'node:net';
import * as os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AllowListProxy, type HostLookup, startAllowListProxy } from './allow-list-proxy.js';

// The allow-list proxy runs outside the sandbox: a name under an allowed `*.domain` that
// resolves to this machine's loopback or to the cloud metadata service (169.254.169.254 hands
// out the VM's credentials) reached what the sandbox's network namespace keeps out. Anyone may
// publish such a record under a domain they control (or use nip.io-style services). The names
// below resolve through a stand-in resolver — an attacker's DNS cannot run here — to a real
// HTTP server of the test's; everything else is real (the proxy's Unix socket, TCP).

const names: Record<string, string[]> = {
  'loop.attacker.test': ['127.0.0.1'],
  'zero.attacker.test': ['0.0.0.0'],
  'mapped.attacker.test': ['::ffff:127.0.0.1'],
  'six.attacker.test': ['::1'],
  'metadata.attacker.test': ['169.254.169.254'],
  'mixed.attacker.test': ['192.0.2.10', '127.0.0.1'],
};
const outward = Object.values(os.networkInterfaces())
  .flat()
  .find((entry) => entry?.family === 'IPv4' && !entry.internal)?.address;
// This machine's own address on its network: its services listening on every interface answer there.
if (outward !== undefined) {
  names['own.attacker.test'] = [outward];
  names['own.example.test'] = [outward];
}
// The attacker's names from the table; every other name (localhost) as the system resolves it.
const lookup: HostLookup = async (host) => {
  const found = names[host];
  if (found !== undefined) return found;
  if (host.endsWith('.attacker.test')) throw new Error(`ENOTFOUND ${host}`);
  return (await dns.promises.lookup(host, { all: true, verbatim: true })).map(
    (entry) => entry.address,
  );
};

let server: http.Server;
let port = 0;
let reached = 0;
let proxy: AllowListProxy;

beforeAll(async () => {
  server = http.createServer((_request, response) => {
    reached++;
    response.end('SERVICE-REACHED\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
  port = (server.address() as net.AddressInfo).port;
  proxy = await startAllowListProxy(['*.attacker.test', 'localhost', 'own.example.test'], {
    lookup,
  });
});
afterAll(async () => {
  await proxy.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** What the proxy answers `request` (sent whole on its Unix socket), up to the connection's end. */
function ask(request: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(proxy.socketPath);
    let answer = '';
    socket.on('data', (chunk) => {
      answer += chunk.toString('latin1');
      // A tunnel stays open: once the server answered through it, that is the whole answer.
      if (answer.includes('SERVICE-REACHED')) socket.end();
    });
    socket.on('close', () => resolve(answer));
    socket.on('error', () => resolve(answer));
    socket.write(request);
  });
}

const viaConnect = (host: string) =>
  `CONNECT ${host}:${port} HTTP/1.1\r\nHost: ${host}:${port}\r\n\r\nGET / HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`;
const viaAbsolute = (host: string) =>
  `GET http://${host}:${port}/ HTTP/1.1\r\nHost: ${host}:${port}\r\nConnection: close\r\n\r\n`;

describe('a name under an allowed *.domain that resolves to this machine or the metadata service', () => {
  it.each([
    'loop.attacker.test',
    'zero.attacker.test',
    'mapped.attacker.test',
    'six.attacker.test',
    'metadata.attacker.test',
    'mixed.attacker.test',
  ])('%s is refused, through CONNECT and absolute-form HTTP', async (host) => {
    const before = reached;
    for (const request of [viaConnect(host), viaAbsolute(host)]) {
      const answer = await ask(request);
      expect(answer).toMatch(/^HTTP\/1\.1 403 Forbidden/);
      expect(answer).toMatch(
        new RegExp(
          `Blocked by the sandbox proxy: ${host.replaceAll('.', '\\.')} resolves to \\S+, an? (loopback|unspecified|link-local) address`,
        ),
      );
      expect(answer).not.toContain('SERVICE-REACHED');
    }
    expect(reached).toBe(before);
  });

  it('a host allowed by its own name still reaches loopback (localhost)', async () => {
    expect(await ask(viaConnect('localhost'))).toContain('SERVICE-REACHED');
    expect(await ask(viaAbsolute('localhost'))).toContain('SERVICE-REACHED');
  });

  it.runIf(outward !== undefined)(
    "a name under the *.domain that resolves to this machine's own network address is refused; one allowed by its name reaches it",
    async () => {
      const before = reached;
      for (const request of [viaConnect('own.attacker.test'), viaAbsolute('own.attacker.test')]) {
        const answer = await ask(request);
        expect(answer).toMatch(/^HTTP\/1\.1 403 Forbidden/);
        expect(answer).toMatch(/own\.attacker\.test resolves to \S+, an address of this machine/);
      }
      expect(reached).toBe(before);
      expect(await ask(viaConnect('own.example.test'))).toContain('SERVICE-REACHED');
    },
  );

  it('a name that does not resolve, or is not allowed, is refused', async () => {
    expect(await ask(viaConnect('nowhere.attacker.test'))).toMatch(
      /403 Forbidden[\s\S]*cannot resolve nowhere\.attacker\.test/,
    );
    expect(await ask(viaConnect('example.com'))).toMatch(/example\.com is not an allowed host/);
  });
});
