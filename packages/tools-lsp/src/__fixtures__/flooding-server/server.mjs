#!/usr/bin/env node
// A language server that answers `initialize` and then floods: FLOOD_MODE=length announces a
// response of FLOOD_BYTES bytes and sends it (valid JSON, padded with spaces); FLOOD_MODE=headers
// sends FLOOD_BYTES of header text before the blank line; FLOOD_MODE=allocate fills FLOOD_BYTES
// of its own memory first (a server the sandbox's memory limit kills). Any other mode answers
// normally.
import { onMessages, send, write } from '../lsp-stdio.mjs';

const mode = process.env.FLOOD_MODE ?? 'none';
const size = Number(process.env.FLOOD_BYTES ?? 100 * 1024 * 1024);


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
    if (mode === 'allocate') {
      const filled = Buffer.alloc(size, 1);
      return send({ id: message.id, result: [], filled: filled.length });
    }
    return void flood(message.id).catch(() => process.exit(0));
  }
  if (message.method === 'shutdown') return send({ id: message.id, result: null });
  send({ id: message.id, result: null });
}

onMessages(handle);
