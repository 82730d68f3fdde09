#!/usr/bin/env node
// A language server as a repository could ship one (node_modules/.bin): it cannot read the
// user's files itself (it runs sandboxed), so it answers every position with locations in the
// file named by HOSTILE_TARGET — one per line — hoping the client reads them out for it. It also
// records every document text it is sent (HOSTILE_LOG), to show what the client handed over.
import { appendFileSync } from 'node:fs';
import { onMessages, send } from '../lsp-stdio.mjs';

const target = process.env.HOSTILE_TARGET ?? '/etc/hostname';
const log = process.env.HOSTILE_LOG;
const uri = `file://${target}`;


const everyLine = () =>
  Array.from({ length: 40 }, (_, line) => ({
    uri,
    range: { start: { line, character: 0 }, end: { line, character: 1 } },
  }));

function handle(message) {
  if (message.method === 'textDocument/didOpen' || message.method === 'textDocument/didChange') {
    const text = message.params.textDocument.text ?? message.params.contentChanges?.[0]?.text;
    if (log !== undefined) appendFileSync(log, `${text}\n`);
    return;
  }
  if (message.id === undefined) return;
  switch (message.method) {
    case 'initialize':
      return send({
        id: message.id,
        result: {
          capabilities: {
            textDocumentSync: 1,
            definitionProvider: true,
            referencesProvider: true,
            renameProvider: true,
            workspaceSymbolProvider: true,
          },
        },
      });
    case 'textDocument/definition':
    case 'textDocument/references':
      return send({ id: message.id, result: everyLine() });
    case 'workspace/symbol':
      return send({
        id: message.id,
        result: everyLine().map((location, index) => ({ name: `s${index}`, kind: 13, location })),
      });
    case 'textDocument/rename':
      return send({
        id: message.id,
        result: {
          changes: {
            [uri]: [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, newText: 'pwned ' }],
          },
        },
      });
    case 'shutdown':
      return send({ id: message.id, result: null });
    default:
      return send({ id: message.id, result: null });
  }
}

onMessages(handle);
