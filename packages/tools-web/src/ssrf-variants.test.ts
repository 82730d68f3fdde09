// Ways of naming a private address that a model (or a page it read) might try: every spelling of
// an IP literal, DNS answers that mix public and private addresses, and redirects. None may
// open a connection to the local server below.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { executeTool } from '@agent/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebFetchTool, type WebFetchToolOptions } from './web-fetch.js';

let server: Server;
let port = 0;
let connections = 0;

beforeAll(async () => {
  server = createServer((request, response) => {
    if (request.url === '/to-file') response.writeHead(302, { location: 'file:///etc/passwd' });
    else if (request.url === '/to-gopher') response.writeHead(302, { location: 'gopher://x/' });
    else if (request.url === '/to-metadata')
      response.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' });
    else if (request.url === '/to-loopback-name')
      response.writeHead(302, { location: `http://www.site.test:${port}/secret` });
    response.end('secret');
  });
  server.on('connection', () => {
    connections++;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

async function outcome(url: string, options: WebFetchToolOptions = {}) {
  const message = await executeTool(createWebFetchTool(options), { url });
  const first = message.content[0];
  return { text: first?.type === 'text' ? first.text : '', isError: message.isError === true };
}

describe('IP literals in every spelling', () => {
  it('refuses loopback, private, link-local, unspecified and mapped forms without connecting', async () => {
    const before = connections;
    const literals = [
      '127.0.0.1',
      '127.1',
      '2130706433',
      '0x7f000001',
      '0x7f.0.0.1',
      '0177.0.0.1',
      '017700000001',
      '127.000.000.001',
      '[::1]',
      '[0:0:0:0:0:0:0:1]',
      '[::ffff:127.0.0.1]',
      '[::ffff:7f00:1]',
      '[::127.0.0.1]',
      '[64:ff9b::127.0.0.1]',
      '0.0.0.0',
      '0',
      '[::]',
      '10.0.0.1',
      '167772161',
      '172.16.0.1',
      '192.168.0.1',
      '100.64.0.1',
      '169.254.169.254',
      '2852039166',
      '0xa9.0xfe.0xa9.0xfe',
      '[fe80::1]',
      '[fd00:ec2::254]',
      '[::ffff:169.254.169.254]',
      '224.0.0.1',
      '255.255.255.255',
    ];
    for (const host of literals) {
      const message = await executeTool(createWebFetchTool(), {
        url: `http://${host}:${port}/`,
      });
      expect(message.isError, host).toBe(true);
      const text = message.content[0]?.type === 'text' ? message.content[0].text : '';
      expect(text, host).toMatch(/Refusing to fetch/);
      expect(text, host).not.toContain('secret');
    }
    expect(connections).toBe(before);
  });
});

describe('names that resolve to private addresses', () => {
  it('refuses when any address of the answer is private, whichever comes first', async () => {
    const before = connections;
    const answers = [
      [{ address: '127.0.0.1', family: 4 }],
      [
        { address: '93.184.216.34', family: 4 },
        { address: '127.0.0.1', family: 4 },
      ],
      [
        { address: '2606:4700::1', family: 6 },
        { address: '::1', family: 6 },
      ],
      [{ address: '::ffff:127.0.0.1', family: 6 }],
      [{ address: '169.254.169.254', family: 4 }],
    ];
    for (const answer of answers) {
      const lookup: WebFetchToolOptions['lookup'] = (_host, _options, callback) =>
        callback(null, answer);
      const result = await outcome(`http://site.test:${port}/`, { lookup });
      expect(result.isError, JSON.stringify(answer)).toBe(true);
      expect(result.text).toMatch(/Refusing to fetch .*site\.test resolves to/);
    }
    expect(connections).toBe(before);
  });

  it('asks the resolver again at every connection: a rebinding answer is caught on the next hop', async () => {
    let calls = 0;
    // The first answer passes (loopback let through for this host); the second names the
    // metadata address, as a rebinding DNS server would between two connections.
    const lookup: WebFetchToolOptions['lookup'] = (_host, _options, callback) => {
      calls++;
      callback(null, [{ address: calls === 1 ? '127.0.0.1' : '169.254.169.254', family: 4 }]);
    };
    const result = await outcome(`http://site.test:${port}/to-loopback-name`, {
      lookup,
      allowPrivateAddress: (host, address) => host === 'site.test' && address === '127.0.0.1',
    });
    // www.site.test is the same site, so the redirect is followed — and refused at its lookup.
    expect(calls).toBe(2);
    expect(result.isError).toBe(true);
    expect(result.text).toContain('www.site.test resolves to 169.254.169.254');
  });
});

describe('redirects', () => {
  const allowLocal: WebFetchToolOptions = { allowPrivateNetwork: true };

  it('to file:, gopher: or a private address on another host are never followed', async () => {
    const file = await outcome(`http://127.0.0.1:${port}/to-file`, allowLocal);
    expect(file.isError).toBe(true);
    expect(file.text).toMatch(/redirected to a file URL, which is not fetched/);
    const gopher = await outcome(`http://127.0.0.1:${port}/to-gopher`, allowLocal);
    expect(gopher.text).toMatch(/redirected to a gopher URL/);
    const before = connections;
    const metadata = await outcome(`http://127.0.0.1:${port}/to-metadata`, allowLocal);
    // Another host: reported for the model to fetch in a new call (which the guard then checks).
    expect(metadata.isError).toBe(false);
    expect(metadata.text).toContain(
      'to a different host: http://169.254.169.254/latest/meta-data/',
    );
    expect(connections).toBe(before + 1); // the redirecting request itself, nothing more
    const again = await outcome('http://169.254.169.254/latest/meta-data/');
    expect(again.isError).toBe(true);
    expect(again.text).toMatch(/link-local/);
  });
});
