// `Content-Encoding: deflate` means the zlib format (RFC 9110 §8.4.1.2: RFC 1950 around RFC
// 1951), but servers have long sent bare RFC 1951 data under that name (old IIS, some proxies and
// embedded servers), and browsers decode both. zlib's own inflater refuses the bare form
// ("incorrect header check"), so the first two bytes decide which inflater undoes the body.
import { Duplex, Readable } from 'node:stream';
import * as zlib from 'node:zlib';

/**
 * Whether `head` starts a zlib stream: compression method 8 (deflate) with a window of at most
 * 32 KiB, and the header check (CMF·256 + FLG a multiple of 31). Bare deflate data could pass
 * only as a non-final stored block with a set padding bit and a second byte that happens to fit;
 * it is then read as zlib and fails with an error rather than decoding wrong (zlib checks its
 * trailer).
 */
export function startsZlibStream(head: Uint8Array): boolean {
  const [cmf, flg] = head;
  if (cmf === undefined || flg === undefined) return false;
  return (cmf & 0x0f) === 8 && cmf >> 4 <= 7 && (cmf * 256 + flg) % 31 === 0;
}

/** A decoder for `deflate` that takes either the zlib format or bare deflate data. */
export function deflateDecoder(): Duplex {
  return Duplex.from(async function* (source: AsyncIterable<Buffer>) {
    const iterator = source[Symbol.asyncIterator]();
    let head = Buffer.alloc(0);
    let ended = false;
    while (head.length < 2) {
      const next = await iterator.next();
      if (next.done === true) {
        ended = true;
        break;
      }
      head = Buffer.concat([head, next.value]);
    }
    if (head.length === 0) return;
    const inflater = startsZlibStream(head) ? zlib.createInflate() : zlib.createInflateRaw();
    const input = Readable.from(
      (async function* () {
        yield head;
        if (ended) return;
        for (let next = await iterator.next(); next.done !== true; next = await iterator.next())
          yield next.value;
      })(),
    );
    // A failure upstream (the connection, an outer decoder) fails the inflater, and so this.
    input.on('error', (error) => inflater.destroy(error));
    try {
      for await (const chunk of input.pipe(inflater)) yield chunk as Buffer;
    } finally {
      input.destroy();
      inflater.destroy();
    }
  });
}
