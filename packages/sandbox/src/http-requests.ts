// The HTTP/1.x requests a client sends on one connection, told apart as they stream by (heads,
// then bodies framed by Content-Length or chunked encoding), so that each head can be checked —
// a later request of a keep-alive connection as much as the first.

/** One request's head. */
export interface RequestHead {
  method: string;
  target: string;
  version: 'HTTP/1.0' | 'HTTP/1.1';
  /** Name (as sent) and value of each header, in order. */
  headers: [string, string][];
}

/** What to do with a head: forward it (as given, or rewritten), or refuse the connection. */
export type HeadDecision = { type: 'forward'; head?: Buffer } | { type: 'refuse'; reason: string };

/** Bytes a request head may take. */
export const maxHeadBytes = 64 * 1024;

const token = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Parses a request head (without its final empty line), or says why it is not one. */
export function parseRequestHead(text: string): RequestHead | string {
  const [requestLine = '', ...lines] = text.split('\r\n');
  const parts = requestLine.split(' ');
  const [method = '', target = '', version = ''] = parts;
  if (parts.length !== 3 || !token.test(method) || target === '' || /[\0-\x20\x7f]/.test(target))
    return 'a malformed request line';
  if (version !== 'HTTP/1.1' && version !== 'HTTP/1.0') return `an unsupported version ${version}`;
  const headers: [string, string][] = [];
  for (const line of lines) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon);
    // A folded line (leading space) or a name with spaces is read differently by servers.
    if (colon <= 0 || !token.test(name)) return 'a malformed header line';
    const value = line.slice(colon + 1).trim();
    if (/[\0\r\n]/.test(value)) return 'a malformed header value';
    headers.push([name, value]);
  }
  return { method, target, version, headers };
}

/** The values of header `name` (any case). */
export function headerValues(head: RequestHead, name: string): string[] {
  const lower = name.toLowerCase();
  return head.headers.filter(([key]) => key.toLowerCase() === lower).map(([, value]) => value);
}

type BodyState =
  | { type: 'none' }
  | { type: 'length'; remaining: number }
  | { type: 'chunk-size'; line: string }
  | { type: 'chunk-data'; remaining: number }
  | { type: 'chunk-end'; seen: number }
  | { type: 'trailer'; line: string };

/** How the body of `head` is framed, or why it cannot be told (then the request is refused). */
function bodyOf(head: RequestHead): BodyState | string {
  const encodings = headerValues(head, 'transfer-encoding');
  const lengths = headerValues(head, 'content-length');
  // Both, or either twice, is how requests are smuggled past a checker: servers differ on it.
  if (encodings.length > 0) {
    if (lengths.length > 0) return 'both Transfer-Encoding and Content-Length';
    if (encodings.length > 1 || encodings[0]?.toLowerCase() !== 'chunked')
      return 'a Transfer-Encoding other than chunked';
    return { type: 'chunk-size', line: '' };
  }
  if (lengths.length > 1) return 'more than one Content-Length';
  const length = lengths[0];
  if (length === undefined) return { type: 'none' };
  if (!/^\d{1,15}$/.test(length)) return 'a malformed Content-Length';
  const remaining = Number(length);
  return remaining === 0 ? { type: 'none' } : { type: 'length', remaining };
}

/**
 * Follows one connection's requests: {@link push} each chunk the client sends and get back the
 * bytes to forward; each head goes through `decide` first. Once refused, nothing more passes.
 */
export class RequestStream {
  readonly #decide: (head: RequestHead, raw: Buffer) => HeadDecision;
  #head = Buffer.alloc(0);
  #body: BodyState = { type: 'none' };
  #refused: string | undefined;

  constructor(decide: (head: RequestHead, raw: Buffer) => HeadDecision) {
    this.#decide = decide;
  }

  /** Why the connection was refused, once it was. */
  get refused(): string | undefined {
    return this.#refused;
  }

  /**
   * The bytes of `chunk` to forward (heads possibly rewritten): once a head is refused, those of
   * the requests before it alone, then nothing.
   */
  push(chunk: Buffer): Buffer {
    if (this.#refused !== undefined) return Buffer.alloc(0);
    const output: Buffer[] = [];
    let data = chunk;
    while (data.length > 0 && this.#refused === undefined) {
      if (this.#body.type === 'none') data = this.#readHead(data, output);
      else data = this.#readBody(data, output);
    }
    return Buffer.concat(output);
  }

  #refuse(reason: string): Buffer {
    this.#refused = reason;
    return Buffer.alloc(0);
  }

  #readHead(data: Buffer, output: Buffer[]): Buffer {
    const searchFrom = Math.max(0, this.#head.length - 3);
    this.#head = Buffer.concat([this.#head, data]);
    const end = this.#head.indexOf('\r\n\r\n', searchFrom);
    if (end === -1) {
      if (this.#head.length > maxHeadBytes) return this.#refuse('a request head too large');
      return Buffer.alloc(0);
    }
    if (end + 4 > maxHeadBytes) return this.#refuse('a request head too large');
    const raw = this.#head.subarray(0, end + 4);
    const rest = this.#head.subarray(end + 4);
    this.#head = Buffer.alloc(0);
    const head = parseRequestHead(raw.subarray(0, end).toString('latin1'));
    if (typeof head === 'string') return this.#refuse(head);
    const body = bodyOf(head);
    if (typeof body === 'string') return this.#refuse(body);
    const decision = this.#decide(head, raw);
    if (decision.type === 'refuse') return this.#refuse(decision.reason);
    output.push(decision.head ?? raw);
    this.#body = body;
    return rest;
  }

  #readBody(data: Buffer, output: Buffer[]): Buffer {
    const body = this.#body;
    switch (body.type) {
      case 'none':
        return data;
      case 'length':
      case 'chunk-data': {
        const taken = Math.min(body.remaining, data.length);
        output.push(data.subarray(0, taken));
        const remaining = body.remaining - taken;
        if (remaining > 0) this.#body = { ...body, remaining };
        else
          this.#body = body.type === 'length' ? { type: 'none' } : { type: 'chunk-end', seen: 0 };
        return data.subarray(taken);
      }
      case 'chunk-end': {
        // The CRLF after a chunk's data.
        let seen = body.seen;
        let index = 0;
        while (index < data.length && seen < 2) {
          if (data[index] !== (seen === 0 ? 0x0d : 0x0a)) return this.#refuse('a malformed chunk');
          seen++;
          index++;
        }
        output.push(data.subarray(0, index));
        this.#body = seen === 2 ? { type: 'chunk-size', line: '' } : { type: 'chunk-end', seen };
        return data.subarray(index);
      }
      case 'chunk-size':
      case 'trailer': {
        const newline = data.indexOf(0x0a);
        const piece = data.subarray(0, newline === -1 ? data.length : newline + 1);
        output.push(piece);
        const line = body.line + piece.toString('latin1');
        if (line.length > 8192) return this.#refuse('a chunk line too long');
        if (newline === -1) {
          this.#body = { ...body, line };
          return Buffer.alloc(0);
        }
        if (!line.endsWith('\r\n')) return this.#refuse('a malformed chunk line');
        const content = line.slice(0, -2);
        if (body.type === 'trailer') {
          this.#body = content === '' ? { type: 'none' } : { type: 'trailer', line: '' };
          return data.subarray(newline + 1);
        }
        const size = /^([0-9A-Fa-f]{1,12})(;.*)?$/.exec(content)?.[1];
        if (size === undefined) return this.#refuse('a malformed chunk size');
        const remaining = Number.parseInt(size, 16);
        this.#body =
          remaining === 0 ? { type: 'trailer', line: '' } : { type: 'chunk-data', remaining };
        return data.subarray(newline + 1);
      }
      default: {
        const exhaustive: never = body;
        return exhaustive;
      }
    }
  }
}
