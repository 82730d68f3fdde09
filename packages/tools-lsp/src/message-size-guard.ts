// A language server may be the repository's own (node_modules/.bin). vscode-jsonrpc's reader
// buffers a message until its Content-Length has arrived, whatever that length says, so a server
// announcing gigabytes and streaming them would fill the agent's memory. This stream sits in
// front of the reader, passes every byte through unchanged, and stops at the first message whose
// headers are too long or whose declared length is over the limit.
import { Transform, type TransformCallback } from 'node:stream';

/** Largest message body accepted from a server (64 MiB: far above any real response). */
export const maxServerMessageBytes = 64 * 1024 * 1024;
/** Largest header block of one message (real ones are one or two short lines). */
const maxHeaderBytes = 8 * 1024;
const headerEnd = Buffer.from('\r\n\r\n');

/**
 * A pass-through stream of the server's stdout that calls `onTooLarge(why)` once and ends the
 * data at the first message over `maxBytes` (or with headers over 8 KiB).
 */
export function createMessageSizeGuard(
  onTooLarge: (why: string) => void,
  maxBytes: number = maxServerMessageBytes,
): Transform {
  let header = Buffer.alloc(0);
  let bodyLeft = 0;
  let stopped = false;
  const stop = (why: string, callback: TransformCallback) => {
    stopped = true;
    onTooLarge(why);
    callback();
  };
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      if (stopped) return callback();
      let offset = 0;
      while (offset < chunk.length) {
        if (bodyLeft > 0) {
          const take = Math.min(bodyLeft, chunk.length - offset);
          bodyLeft -= take;
          offset += take;
          continue;
        }
        // In the headers: look for their end in what is buffered plus this chunk's rest.
        const rest = chunk.subarray(offset);
        const joined = header.length === 0 ? rest : Buffer.concat([header, rest]);
        const end = joined.indexOf(headerEnd);
        if (end === -1) {
          if (joined.length > maxHeaderBytes)
            return stop(`its message headers ran past ${maxHeaderBytes} bytes`, callback);
          header = Buffer.from(joined);
          offset = chunk.length;
          break;
        }
        if (end > maxHeaderBytes)
          return stop(`its message headers ran past ${maxHeaderBytes} bytes`, callback);
        const declared = /(?:^|\r\n)content-length:\s*(\d+)/i.exec(
          joined.subarray(0, end).toString('latin1'),
        )?.[1];
        const length = declared === undefined ? 0 : Number(declared);
        if (length > maxBytes)
          return stop(
            `it announced a message of ${declared} bytes (the limit is ${maxBytes})`,
            callback,
          );
        // What followed the headers in this chunk starts the body.
        const consumed = end + headerEnd.length - header.length;
        header = Buffer.alloc(0);
        offset += consumed;
        bodyLeft = length;
      }
      this.push(chunk);
      callback();
    },
  });
}
