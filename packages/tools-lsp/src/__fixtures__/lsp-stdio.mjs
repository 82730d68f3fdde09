// The stdio side of the test language servers here: LSP base-protocol framing
// (`Content-Length` headers) read from stdin and written to stdout, no library, so each server
// file holds only how it answers. `exit` ends the process.

/** Calls `handle(message)` for every message the client sends. */
export function onMessages(handle) {
  let buffer = Buffer.alloc(0);
  process.stdin.on('data', (chunk) => {
    buffer = Buffer.concat([buffer, chunk]);
    for (;;) {
      const headerEnd = buffer.indexOf('\r\n\r\n');
      if (headerEnd === -1) return;
      const header = buffer.subarray(0, headerEnd).toString();
      const length = Number(/Content-Length: (\d+)/i.exec(header)?.[1]);
      if (buffer.length < headerEnd + 4 + length) return;
      const body = buffer.subarray(headerEnd + 4, headerEnd + 4 + length).toString();
      buffer = buffer.subarray(headerEnd + 4 + length);
      const message = JSON.parse(body);
      if (message.method === 'exit') process.exit(0);
      handle(message);
    }
  });
}

/** Writes `data` to stdout, waiting while the pipe is full (a flood must not buffer it all). */
export async function write(data) {
  if (!process.stdout.write(data)) await new Promise((resolve) => process.stdout.once('drain', resolve));
}

/**
 * Sends one JSON-RPC message; resolves once stdout has taken it. Header and body go in one write:
 * two sends in flight must not interleave their parts.
 */
export function send(message) {
  const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', ...message }));
  return write(Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`), body]));
}
