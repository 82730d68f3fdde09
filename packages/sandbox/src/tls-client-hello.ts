// The server name a TLS client asks for, read from its first bytes (the ClientHello, RFC 8446
// §4.1.2 and RFC 6066 §3) without terminating TLS: the allow-list proxy ties it to the host a
// CONNECT named. Strict: anything it cannot read is refused by the caller, never let through.

/** What the first bytes of a TLS connection say. */
export type ClientHelloRead =
  | { type: 'incomplete' }
  | {
      type: 'hello';
      /** The host_name of server_name, lower-cased; undefined when the client sent none. */
      serverName: string | undefined;
      /** Whether it carries encrypted_client_hello: the name it is really for is hidden. */
      encrypted: boolean;
    }
  | { type: 'invalid'; reason: string };

/** Bytes a ClientHello may take, records included (browsers' post-quantum ones are ~2 KB). */
export const maxClientHelloBytes = 64 * 1024;

const handshakeRecord = 22;
const clientHelloType = 1;
const serverNameExtension = 0;
const encryptedClientHelloExtension = 0xfe0d;

/**
 * Reads the ClientHello at the start of `data`, reassembled from as many handshake records as it
 * spans: `incomplete` while more bytes are needed, `invalid` for anything but a well-formed one.
 */
export function readClientHello(data: Buffer): ClientHelloRead {
  const fragments: Buffer[] = [];
  let handshakeBytes = 0;
  let offset = 0;
  for (;;) {
    if (handshakeBytes >= 4) {
      const fragment = Buffer.concat(fragments);
      if (fragment[0] !== clientHelloType)
        return invalid('the first handshake message is not a ClientHello');
      const length = fragment.readUIntBE(1, 3);
      if (length + 4 > maxClientHelloBytes) return invalid('the ClientHello is too large');
      if (handshakeBytes >= length + 4) return parseBody(fragment.subarray(4, 4 + length));
    }
    if (data.length < offset + 5) return incompleteUnlessTooLong(data);
    const type = data[offset];
    const major = data[offset + 1];
    const recordLength = data.readUInt16BE(offset + 3);
    if (type !== handshakeRecord) return invalid('not a TLS handshake record');
    if (major !== 3) return invalid('not a TLS record version');
    if (recordLength === 0 || recordLength > 16_384) return invalid('a TLS record of a bad length');
    if (data.length < offset + 5 + recordLength) return incompleteUnlessTooLong(data);
    fragments.push(data.subarray(offset + 5, offset + 5 + recordLength));
    handshakeBytes += recordLength;
    offset += 5 + recordLength;
  }
}

function incompleteUnlessTooLong(data: Buffer): ClientHelloRead {
  return data.length > maxClientHelloBytes + 1024
    ? invalid('the ClientHello is too large')
    : { type: 'incomplete' };
}

function invalid(reason: string): ClientHelloRead {
  return { type: 'invalid', reason };
}

/** The ClientHello's body: version, random, session id, ciphers, compression, extensions. */
function parseBody(body: Buffer): ClientHelloRead {
  const reader = new Reader(body);
  reader.skip(2 + 32);
  reader.skip(reader.uint(1, 'session id length', 32));
  const ciphers = reader.uint(2, 'cipher suites length');
  if (ciphers === 0 || ciphers % 2 !== 0) return invalid('bad cipher suites');
  reader.skip(ciphers);
  const compression = reader.uint(1, 'compression methods length');
  if (compression === 0) return invalid('no compression method');
  reader.skip(compression);
  if (reader.failed !== undefined) return invalid(reader.failed);
  if (reader.remaining === 0) return { type: 'hello', serverName: undefined, encrypted: false };
  const extensionsLength = reader.uint(2, 'extensions length');
  if (reader.failed !== undefined || extensionsLength !== reader.remaining)
    return invalid('the extensions do not fill the ClientHello');
  const seen = new Set<number>();
  let serverName: string | undefined;
  let encrypted = false;
  while (reader.remaining > 0) {
    const type = reader.uint(2, 'extension type');
    const length = reader.uint(2, 'extension length');
    const extension = reader.take(length);
    if (reader.failed !== undefined || extension === undefined)
      return invalid(reader.failed ?? 'a cut extension');
    // A second one of a type is refused by TLS itself (RFC 8446 §4.2): a server and this
    // reader could take different ones.
    if (seen.has(type)) return invalid(`extension ${type} appears twice`);
    seen.add(type);
    if (type === encryptedClientHelloExtension) encrypted = true;
    if (type === serverNameExtension) {
      const name = parseServerName(extension);
      if (typeof name !== 'string') return name;
      serverName = name;
    }
  }
  return { type: 'hello', serverName, encrypted };
}

/** The one host_name of a server_name extension (RFC 6066 §3), lower-cased. */
function parseServerName(extension: Buffer): string | ClientHelloRead {
  const reader = new Reader(extension);
  const listLength = reader.uint(2, 'server name list length');
  if (reader.failed !== undefined || listLength !== reader.remaining || listLength === 0)
    return invalid('a malformed server_name');
  let name: string | undefined;
  while (reader.remaining > 0) {
    const nameType = reader.uint(1, 'server name type');
    const length = reader.uint(2, 'server name length');
    const bytes = reader.take(length);
    if (reader.failed !== undefined || bytes === undefined)
      return invalid('a malformed server_name');
    if (nameType !== 0) return invalid('a server name that is not a host name');
    if (name !== undefined) return invalid('two host names in server_name');
    const text = bytes.toString('latin1');
    if (!/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/.test(text) || text.length > 253)
      return invalid('a server name that is not a DNS name');
    name = text.toLowerCase();
  }
  return name ?? invalid('a malformed server_name');
}

/** Big-endian reads that record the first overrun instead of throwing. */
class Reader {
  #offset = 0;
  failed: string | undefined;
  readonly #data: Buffer;

  constructor(data: Buffer) {
    this.#data = data;
  }

  get remaining(): number {
    return this.failed === undefined ? this.#data.length - this.#offset : 0;
  }

  uint(bytes: 1 | 2, what: string, max = Number.MAX_SAFE_INTEGER): number {
    if (this.failed !== undefined) return 0;
    if (this.#offset + bytes > this.#data.length) {
      this.failed = `the ClientHello ends inside its ${what}`;
      return 0;
    }
    const value = this.#data.readUIntBE(this.#offset, bytes);
    this.#offset += bytes;
    if (value > max) this.failed = `a ${what} of ${value}`;
    return value;
  }

  skip(bytes: number): void {
    this.take(bytes);
  }

  take(bytes: number): Buffer | undefined {
    if (this.failed !== undefined) return undefined;
    if (this.#offset + bytes > this.#data.length) {
      this.failed = 'the ClientHello ends early';
      return undefined;
    }
    const taken = this.#data.subarray(this.#offset, this.#offset + bytes);
    this.#offset += bytes;
    return taken;
  }
}
