import * as net from 'node:net';
import * as tls from 'node:tls';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readClientHello } from './tls-client-hello.js';

// The server name the allow-list proxy ties to a CONNECT's host, read from the ClientHello: a real
// one (OpenSSL's, through node:tls), hand-built ones for what clients rarely send (a hello across
// records, ECH, two names), and fuzzed input — it never throws, never reads a name a truncation
// or a corruption made up.

/** An extension: type and data. */
type Extension = [number, Buffer];

const u16 = (value: number) => Buffer.from([value >> 8, value & 0xff]);
const u24 = (value: number) => Buffer.from([value >> 16, (value >> 8) & 0xff, value & 0xff]);

function serverNameExtension(...names: string[]): Extension {
  const list = Buffer.concat(
    names.map((name) => Buffer.concat([Buffer.from([0]), u16(name.length), Buffer.from(name)])),
  );
  return [0, Buffer.concat([u16(list.length), list])];
}

/** A ClientHello handshake message with `extensions` (none: no extensions block at all). */
function helloMessage(extensions: Extension[] | undefined): Buffer {
  const body = [
    Buffer.from([3, 3]),
    Buffer.alloc(32, 7),
    Buffer.from([32]),
    Buffer.alloc(32, 9),
    u16(4),
    Buffer.from([0x13, 0x01, 0x13, 0x02]),
    Buffer.from([1, 0]),
  ];
  if (extensions !== undefined) {
    const block = Buffer.concat(
      extensions.map(([type, data]) => Buffer.concat([u16(type), u16(data.length), data])),
    );
    body.push(u16(block.length), block);
  }
  const joined = Buffer.concat(body);
  return Buffer.concat([Buffer.from([1]), u24(joined.length), joined]);
}

/** `message` in handshake records, cut at `cuts` (offsets into the message). */
function records(message: Buffer, cuts: number[] = []): Buffer {
  const points = [
    0,
    ...cuts.filter((cut) => cut > 0 && cut < message.length).sort((a, b) => a - b),
    message.length,
  ];
  const parts: Buffer[] = [];
  for (let index = 0; index + 1 < points.length; index++) {
    const fragment = message.subarray(points[index], points[index + 1]);
    if (fragment.length === 0) continue;
    parts.push(Buffer.from([22, 3, 1]), u16(fragment.length), fragment);
  }
  return Buffer.concat(parts);
}

/** The first bytes node:tls (OpenSSL) sends with `servername`. */
async function realHello(servername: string): Promise<Buffer> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  const received = new Promise<Buffer>((resolve) => {
    server.once('connection', (socket) => {
      const chunks: Buffer[] = [];
      socket.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        const data = Buffer.concat(chunks);
        if (readClientHello(data).type !== 'incomplete') {
          resolve(data);
          socket.destroy();
        }
      });
    });
  });
  const client = tls.connect({ host: '127.0.0.1', port, servername, rejectUnauthorized: false });
  client.on('error', () => undefined);
  const data = await received;
  client.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return data;
}

describe('readClientHello', () => {
  it("reads OpenSSL's ClientHello (node:tls), and says incomplete for every prefix of it", async () => {
    const data = await realHello('Allowed.Example.com');
    expect(readClientHello(data)).toEqual({
      type: 'hello',
      serverName: 'allowed.example.com',
      encrypted: false,
    });
    for (let length = 0; length < data.length; length++)
      expect(readClientHello(data.subarray(0, length)).type).toBe('incomplete');
  });

  it.each([
    ['no extensions at all', records(helloMessage(undefined)), undefined],
    [
      'extensions without a name',
      records(helloMessage([[10, Buffer.from([0, 2, 0, 29])]])),
      undefined,
    ],
    [
      'a hello cut across three records',
      records(helloMessage([serverNameExtension('a.test')]), [3, 50]),
      'a.test',
    ],
  ])('%s', (_label, data, name) => {
    expect(readClientHello(data)).toEqual({ type: 'hello', serverName: name, encrypted: false });
  });

  it.each([
    ['two names', helloMessage([serverNameExtension('a.test', 'b.test')]), /two host names/],
    [
      'server_name twice',
      helloMessage([serverNameExtension('a.test'), serverNameExtension('b.test')]),
      /appears twice/,
    ],
    ['a name with a NUL', helloMessage([serverNameExtension('a.test\0.b.test')]), /not a DNS name/],
    ['an empty name', helloMessage([serverNameExtension('')]), /not a DNS name/],
  ])('refuses %s', (_label, message, reason) => {
    const read = readClientHello(records(message));
    expect(read.type).toBe('invalid');
    expect(read.type === 'invalid' && read.reason).toMatch(reason);
  });

  it('says an encrypted ClientHello (ECH) is one', () => {
    const data = records(
      helloMessage([serverNameExtension('public.test'), [0xfe0d, Buffer.alloc(40, 1)]]),
    );
    expect(readClientHello(data)).toEqual({
      type: 'hello',
      serverName: 'public.test',
      encrypted: true,
    });
  });

  it.each([
    ['an HTTP request', Buffer.from('GET / HTTP/1.1\r\nHost: a\r\n\r\n')],
    ['an alert record first', Buffer.from([21, 3, 1, 0, 2, 2, 112])],
    ['a ServerHello', records(Buffer.concat([Buffer.from([2]), u24(2), Buffer.from([3, 3])]))],
    ['an empty record', Buffer.from([22, 3, 1, 0, 0, 1])],
  ])('refuses %s', (_label, data) => {
    expect(readClientHello(data).type).toBe('invalid');
  });

  const label = fc.stringMatching(/^[a-z0-9][a-z0-9-]{0,20}$/);
  const hostName = fc
    .array(label, { minLength: 1, maxLength: 5 })
    .map((labels) => labels.join('.'));
  const otherExtension = fc
    .tuple(fc.integer({ min: 1, max: 0xfe00 }), fc.uint8Array({ maxLength: 300 }))
    .map(([type, data]): Extension => [type === 0xfe0d ? 1 : type, Buffer.from(data)]);

  it('fuzzed: any record split, any other extensions around the name — the name comes back', () => {
    fc.assert(
      fc.property(
        hostName,
        fc.uniqueArray(otherExtension, { selector: ([type]) => type, maxLength: 8 }),
        fc.nat({ max: 8 }),
        fc.array(fc.nat({ max: 3000 }), { maxLength: 6 }),
        (name, others, position, cuts) => {
          const extensions = [...others];
          extensions.splice(Math.min(position, others.length), 0, serverNameExtension(name));
          const data = records(helloMessage(extensions), cuts);
          expect(readClientHello(data)).toEqual({
            type: 'hello',
            serverName: name,
            encrypted: false,
          });
          // A prefix is incomplete, never a different answer.
          const prefix = data.subarray(0, Math.floor(data.length / 2));
          expect(readClientHello(prefix).type).toBe('incomplete');
        },
      ),
      { numRuns: 500 },
    );
  });

  it('fuzzed: random bytes and corrupted hellos never throw, and never yield another name', () => {
    const valid = records(helloMessage([serverNameExtension('allowed.test')]));
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 600 }),
        fc.array(fc.tuple(fc.nat({ max: valid.length - 1 }), fc.integer({ min: 0, max: 255 })), {
          minLength: 1,
          maxLength: 4,
        }),
        (random, flips) => {
          const randomRead = readClientHello(Buffer.from(random));
          expect(['incomplete', 'hello', 'invalid']).toContain(randomRead.type);
          const corrupted = Buffer.from(valid);
          for (const [offset, value] of flips) corrupted[offset] = value;
          const read = readClientHello(corrupted);
          if (read.type === 'hello' && read.serverName !== undefined)
            // A flipped byte inside the name itself is a name of its own: of the same length.
            expect(read.serverName.length).toBe('allowed.test'.length);
        },
      ),
      { numRuns: 2000 },
    );
  });
});
