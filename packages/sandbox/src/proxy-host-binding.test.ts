import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import * as net from 'node:net';
import * as tls from 'node:tls';
import { skipWithout } from '@agent/tooling-system-tools';
import fc from 'fast-check';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type AllowListProxy, startAllowListProxy } from './allow-list-proxy.js';
import { type RequestHead, RequestStream } from './http-requests.js';
import { createSandbox } from './sandbox.js';

// Domain fronting through the allow-list proxy: behind one CDN address the edge serves the site a
// connection names in its TLS server name (SNI) or its HTTP Host header, not the name the client
// gave the proxy. A command allowed `allowed.test` reached `other.test` on the same edge. Here the
// edge is a real TLS server and a real HTTP server on 127.0.0.1 that record the names they were
// asked for; both names resolve to them (a stand-in resolver: a CDN's DNS cannot run here).

const fixtures = new URL('./__fixtures__/', import.meta.url);
const seenNames: string[] = [];
const seenHosts: string[] = [];
let tlsEdge: https.Server;
let httpEdge: http.Server;
let tlsPort = 0;
let httpPort = 0;
let proxy: AllowListProxy;

beforeAll(async () => {
  const answer = (request: http.IncomingMessage, response: http.ServerResponse) => {
    seenHosts.push(String(request.headers.host));
    response.end(`EDGE host=${request.headers.host}\n`);
  };
  tlsEdge = https.createServer(
    {
      key: fs.readFileSync(new URL('proxy-edge-key.pem', fixtures)),
      cert: fs.readFileSync(new URL('proxy-edge-cert.pem', fixtures)),
      // Like a CDN edge: any name, whatever the certificate says.
      SNICallback: (name, done) => {
        seenNames.push(name);
        done(null);
      },
    },
    answer,
  );
  httpEdge = http.createServer(answer);
  for (const server of [tlsEdge, httpEdge])
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  tlsPort = (tlsEdge.address() as net.AddressInfo).port;
  httpPort = (httpEdge.address() as net.AddressInfo).port;
  proxy = await startAllowListProxy(['allowed.test', '127.0.0.1'], {
    lookup: async (host) => {
      if (host === 'allowed.test' || host === 'other.test') return ['127.0.0.1'];
      throw new Error(`ENOTFOUND ${host}`);
    },
  });
});
afterAll(async () => {
  await proxy.close();
  for (const server of [tlsEdge, httpEdge]) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

/** A tunnel through the proxy to `target`, once established (the proxy's 200 read). */
function connectThrough(target: string): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(proxy.socketPath);
    socket.once('error', reject);
    socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`);
    let head = '';
    const onData = (chunk: Buffer) => {
      head += chunk.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      socket.off('data', onData);
      if (/^HTTP\/1\.1 200/.test(head)) resolve(socket);
      else reject(new Error(head));
    };
    socket.on('data', onData);
  });
}

/** An HTTPS GET through a tunnel to `target` with TLS server name `servername` ('' sends none). */
async function httpsThrough(target: string, servername: string): Promise<string> {
  const tunnel = await connectThrough(target);
  return new Promise((resolve) => {
    const secure = tls.connect({ socket: tunnel, servername, rejectUnauthorized: false });
    let answer = '';
    secure.on('secureConnect', () =>
      secure.write(`GET / HTTP/1.1\r\nHost: ${servername || 'x'}\r\nConnection: close\r\n\r\n`),
    );
    secure.on('data', (chunk: Buffer) => {
      answer += chunk.toString('latin1');
    });
    secure.on('error', (error) => resolve(`ERROR ${error.message}`));
    secure.on('close', () => resolve(answer));
  });
}

/** What the proxy (and what lies behind it) answers to `request`, until the connection closes. */
function ask(request: string | Buffer, prefix = ''): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(proxy.socketPath);
    let answer = '';
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString('latin1');
    });
    socket.on('close', () => resolve(answer));
    socket.on('error', () => resolve(answer));
    // Every case ends with the connection: a refusal closes it, and so does each edge's answer.
    socket.write(prefix);
    socket.write(request);
  });
}

describe('TLS through CONNECT: the server name must be the host the tunnel was allowed to', () => {
  it('the allowed name (any case) goes through', async () => {
    expect(await httpsThrough(`allowed.test:${tlsPort}`, 'allowed.test')).toContain(
      'EDGE host=allowed.test',
    );
    expect(await httpsThrough(`allowed.test:${tlsPort}`, 'Allowed.TEST')).toContain('EDGE');
  });

  it.each([
    ['another site of the same edge', `allowed.test:${0}`, 'other.test'],
    ['no server name, to a name', `allowed.test:${0}`, ''],
    ['a name not allowed, to an allowed address', `127.0.0.1:${0}`, 'other.test'],
  ])('refused: %s', async (_label, target, servername) => {
    const before = seenNames.length;
    const answer = await httpsThrough(target.replace(':0', `:${tlsPort}`), servername);
    expect(answer).toMatch(/^ERROR .*(unrecognized name|socket disconnected|ECONNRESET)/i);
    expect(answer).not.toContain('EDGE');
    expect(seenNames.slice(before)).toEqual([]);
  });

  it('an address the user allowed, with no name or an allowed one, goes through', async () => {
    expect(await httpsThrough(`127.0.0.1:${tlsPort}`, '')).toContain('EDGE');
    expect(await httpsThrough(`127.0.0.1:${tlsPort}`, 'allowed.test')).toContain('EDGE');
  });
});

describe('plain HTTP: the URL and the Host header must name the allowed host, on every request', () => {
  const request = (url: string, host: string, extra = '') =>
    `GET ${url} HTTP/1.1\r\nHost: ${host}\r\n${extra}\r\n`;

  it('a request for the allowed host goes through, as one request per connection', async () => {
    const answer = await ask(
      request(`http://allowed.test:${httpPort}/`, `allowed.test:${httpPort}`),
    );
    expect(answer).toContain(`EDGE host=allowed.test:${httpPort}`);
    expect(answer).toMatch(/Connection: close/i);
  });

  it.each([
    ['a Host header for another site', request(`http://allowed.test:${0}/`, 'other.test')],
    [
      'two Host headers',
      request(`http://allowed.test:${0}/`, 'allowed.test', 'Host: other.test\r\n'),
    ],
    [
      'a folded Host header',
      request(`http://allowed.test:${0}/`, 'allowed.test', ' other.test\r\n'),
    ],
  ])('refused with a 403: %s', async (_label, text) => {
    const before = seenHosts.length;
    const answer = await ask(text.replace(':0/', `:${httpPort}/`));
    expect(answer).toMatch(/^HTTP\/1\.1 403 .*Blocked by the sandbox proxy/s);
    expect(seenHosts.slice(before)).toEqual([]);
  });

  it.each([
    [
      'a second request for another site',
      (url: string) => request(url.replace('allowed', 'other'), 'other.test'),
    ],
    ['a second request with another Host', (url: string) => request(url, 'other.test')],
  ])('keep-alive: %s never reaches the edge', async (_label, second) => {
    const url = `http://allowed.test:${httpPort}/`;
    const before = seenHosts.length;
    // The first with a body that looks like a request: it is the body, not a request.
    const body = request('http://other.test/', 'other.test');
    const answer = await ask(
      `POST ${url} HTTP/1.1\r\nHost: allowed.test:${httpPort}\r\nContent-Length: ${body.length}\r\n\r\n${body}${second(url)}`,
    );
    expect(answer).toContain('EDGE host=allowed.test');
    expect(seenHosts.slice(before)).toEqual([`allowed.test:${httpPort}`]);
  });
});

describe('HTTP inside a CONNECT tunnel', () => {
  const connect = () => `CONNECT allowed.test:${httpPort} HTTP/1.1\r\nHost: allowed.test\r\n\r\n`;

  it('each request of a keep-alive connection is checked: the allowed ones go through, another Host ends it', async () => {
    const before = seenHosts.length;
    const answer = await ask(
      `GET / HTTP/1.1\r\nHost: allowed.test\r\n\r\nGET / HTTP/1.1\r\nHost: other.test\r\n\r\n`,
      connect(),
    );
    expect(answer).toContain('EDGE host=allowed.test');
    expect(seenHosts.slice(before)).toEqual(['allowed.test']);
  });

  it.each([
    ['another Host first', 'GET / HTTP/1.1\r\nHost: other.test\r\n\r\n'],
    ['leading empty lines, which servers skip', '\r\nGET / HTTP/1.1\r\nHost: other.test\r\n\r\n'],
    [
      'an absolute URL for another site',
      'GET http://other.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n',
    ],
    ['no Host at all', 'GET / HTTP/1.1\r\n\r\n'],
    [
      'both Transfer-Encoding and Content-Length (how requests are smuggled)',
      'POST / HTTP/1.1\r\nHost: allowed.test\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n',
    ],
  ])('refused: %s', async (_label, text) => {
    const before = seenHosts.length;
    const answer = await ask(text, connect());
    expect(answer).toMatch(/403 Forbidden[\s\S]*Blocked by the sandbox proxy/);
    expect(seenHosts.slice(before)).toEqual([]);
  });

  it('a protocol that is neither TLS nor HTTP goes through as it is', async () => {
    const answer = await ask('SSH-2.0-OpenSSH_9.6\r\n', connect());
    expect(answer).toMatch(/HTTP\/1\.1 400 Bad Request/);
  });
});

describe('a sandboxed curl, through the real sandbox and its proxy (allowHosts: localhost)', () => {
  beforeEach(skipWithout('bwrap', 'curl'));

  /** curl's output (and exit) for `args`, run sandboxed: asynchronously, the proxy lives here. */
  async function sandboxedCurl(args: string[]): Promise<string> {
    const ws = fs.mkdtempSync('/var/tmp/proxy-fronting-');
    const sandbox = createSandbox({
      mode: 'required',
      writableRoots: [ws],
      network: { allowHosts: ['localhost'] },
      onWarning: () => undefined,
    });
    try {
      const wrapped = await sandbox.wrap({ file: 'curl', args, cwd: ws, env: process.env });
      return await new Promise((resolve) => {
        execFile(
          wrapped.file,
          [...wrapped.args],
          { env: wrapped.env, encoding: 'utf8' },
          (error, stdout, stderr) => resolve(`${stdout}${stderr} exit=${error?.code ?? 0}`),
        );
      });
    } finally {
      await sandbox.close();
      fs.rmSync(ws, { recursive: true, force: true });
    }
  }

  it('HTTPS to the allowed name works; the same tunnel with another server name does not', async () => {
    expect(await sandboxedCurl(['-sSk', `https://localhost:${tlsPort}/`])).toContain(
      'EDGE host=localhost',
    );
    const before = seenNames.length;
    const fronted = await sandboxedCurl([
      '-sSk',
      '--connect-to',
      `other.test:${tlsPort}:localhost:${tlsPort}`,
      `https://other.test:${tlsPort}/`,
    ]);
    expect(fronted).not.toContain('EDGE');
    expect(fronted).toMatch(/unrecognized name|alert/i);
    expect(seenNames.slice(before)).toEqual([]);
  });

  it('plain HTTP with another Host header is refused', async () => {
    const before = seenHosts.length;
    const answer = await sandboxedCurl([
      '-sS',
      '-H',
      'Host: other.test',
      `http://localhost:${httpPort}/`,
    ]);
    expect(answer).toContain(
      'Blocked by the sandbox proxy: Host: other.test on a connection to localhost',
    );
    expect(seenHosts.slice(before)).toEqual([]);
  });
});

describe('RequestStream', () => {
  const requests = [
    'GET /a HTTP/1.1\r\nHost: h\r\n\r\n',
    'POST /b HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\nGET / HTTP/',
    'POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5;x=1\r\nGET /\r\n0\r\nTrailer: t\r\n\r\n',
    'GET /d HTTP/1.0\r\n\r\n',
  ];
  const whole = Buffer.from(requests.join(''));

  it('fuzzed: however the bytes are cut, the same heads are seen and every byte is forwarded', () => {
    fc.assert(
      fc.property(fc.array(fc.nat({ max: whole.length }), { maxLength: 12 }), (cuts) => {
        const targets: string[] = [];
        const stream = new RequestStream((head: RequestHead) => {
          targets.push(head.target);
          return { type: 'forward' };
        });
        const points = [0, ...cuts.sort((a, b) => a - b), whole.length];
        const forwarded = points
          .slice(1)
          .map((end, index) => stream.push(whole.subarray(points[index], end)));
        expect(Buffer.concat(forwarded).equals(whole)).toBe(true);
        expect(targets).toEqual(['/a', '/b', '/c', '/d']);
      }),
      { numRuns: 500 },
    );
  });
});
