#!/usr/bin/env node
// A language server that floods the client with published diagnostics (JSON-RPC over stdio, no
// library): after `initialized` it publishes for FLOOD_FILES distinct files, then FLOOD_ROUNDS
// publications of FLOOD_PER_ROUND diagnostics each for one file, then an empty publication for
// file:///flood/done.hx (the sign that it has finished). A document opened later gets
// FLOOD_OPEN_COUNT warnings and hints with one error last, for its version.
import { onMessages, send } from '../lsp-stdio.mjs';

const files = Number(process.env.FLOOD_FILES ?? 0);
const rounds = Number(process.env.FLOOD_ROUNDS ?? 0);
const perRound = Number(process.env.FLOOD_PER_ROUND ?? 0);
const openCount = Number(process.env.FLOOD_OPEN_COUNT ?? 0);


const diagnostic = (line, severity, message) => ({
  range: { start: { line, character: 0 }, end: { line, character: 1 } },
  severity,
  source: 'flood',
  message,
});

function publish(uri, diagnostics, version) {
  return send({
    method: 'textDocument/publishDiagnostics',
    params: version === undefined ? { uri, diagnostics } : { uri, version, diagnostics },
  });
}

async function flood() {
  for (let index = 0; index < files; index++)
    await publish(`file:///flood/file-${index}.hx`, [diagnostic(0, 2, `warning in file ${index}`)]);
  for (let round = 0; round < rounds; round++) {
    const many = Array.from({ length: perRound }, (_, index) =>
      diagnostic(index, 1 + (index % 4), `round ${round} number ${index} ${'x'.repeat(20)}`),
    );
    await publish('file:///flood/big.hx', many);
  }
  await publish('file:///flood/done.hx', []);
}

async function handle(message) {
  if (message.method === 'initialized') return void flood();
  if (message.method === 'textDocument/didOpen' || message.method === 'textDocument/didChange') {
    const { uri, version } = message.params.textDocument;
    const many = [];
    for (let index = 0; index < openCount; index++)
      many.push(diagnostic(index, index % 2 === 0 ? 2 : 4, `noise ${index}`));
    // A malformed one, a huge message, and the one error, last of all.
    many.push({ severity: 1, message: 'no range' });
    many.push(diagnostic(1, 2, `long ${'y'.repeat(100_000)}`));
    many.push(diagnostic(7, 1, 'the real error'));
    return publish(uri, many, version);
  }
  if (message.id === undefined) return;
  if (message.method === 'initialize')
    return send({ id: message.id, result: { capabilities: { textDocumentSync: 1 } } });
  return send({ id: message.id, result: null });
}

onMessages((message) => void handle(message));
