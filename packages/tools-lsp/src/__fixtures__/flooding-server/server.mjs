#!/usr/bin/env node
// A language server that answers `initialize` and then floods: FLOOD_MODE=length announces a
// response of FLOOD_BYTES bytes and sends it (valid JSON, padded with spaces); FLOOD_MODE=headers
// sends FLOOD_BYTES of header text before the blank line. Any other mode answers normally.
let buffer = Buffer.alloc(0);
const mode = process.env.FLOOD_MODE ?? 'none';
const size = Number(process.env.FLOOD_BYTES ?? 100 * 1024 * 1024);

function send(message) {
  const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', ...message }));
  process.stdout.write(`Content-Length: ${body.length}\r\n\r\n`);
  process.stdout.write(body);
}

async function write(data) {
  if (!process.stdout.write(data)) await new Promise((resolve) => process.stdout.once('drain', resolve));
}

async function flood(id) {
  if (mode === 'headers') {
    await write('Content-Length: 2\r\nX-Padding: ');
    for (let sent = 0; sent < size; sent += 1024 * 1024) await write('a'.repeat(1024 * 1024));
    await write('\r\n\r\n{}');
    return;
  }
  const head = `{"jsonrpc":"2.0","id":${id},"result":[`;
  const tail = ']}';
  await write(`Content-Length: ${size}\r\n\r\n${head}`);
  let left = size - head.length - tail.length;
  while (left > 0) {
    const piece = Math.min(left, 1024 * 1024);
    await write(' '.repeat(piece));
    left -= piece;
  }
  await write(tail);
}

function handle(message) {
  if (message.id === undefined) return;
  if (message.method === 'initialize')
    return send({ id: message.id, result: { capabilities: { textDocumentSync: 1, definitionProvider: true } } });
  if (message.method === 'textDocument/definition') {
    if (mode === 'none') return send({ id: message.id, result: [] });
    return void flood(message.id).catch(() => process.exit(0));
  }
  if (message.method === 'shutdown') return send({ id: message.id, result: null });
  send({ id: message.id, result: null });
}

process.stdin.on('data', (chunk) => {
  buffer = Buffer.concat([buffer, chunk]);
  for (;;) {
    const end = buffer.indexOf('\r\n\r\n');
    if (end === -1) return;
    const length = Number(/Content-Length: (\d+)/i.exec(buffer.subarray(0, end).toString())?.[1]);
    if (buffer.length < end + 4 + length) return;
    const body = buffer.subarray(end + 4, end + 4 + length).toString();
    buffer = buffer.subarray(end + 4 + length);
    const message = JSON.parse(body);
    if (message.method === 'exit') process.exit(0);
    handle(message);
  }
});
