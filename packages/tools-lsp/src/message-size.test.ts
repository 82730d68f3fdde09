// A language server (possibly the repository's own) that answers with a message of hundreds of
// megabytes, or with headers that never end: it is stopped at the limit, the call says why, and
// the agent never holds the message. The server is a real process speaking LSP over stdio.
import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { executeTool } from '@agent/core';
import { afterEach, describe, expect, it } from 'vitest';
import { createLspTools } from './lsp-tools.js';
import { LspWorkspace } from './lsp-workspace.js';
import { createMessageSizeGuard, maxServerMessageBytes } from './message-size-guard.js';

const server = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  '__fixtures__',
  'flooding-server',
  'server.mjs',
);

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function definition(mode: string, bytes: number) {
  const workspace = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'agent-lsp-flood-')));
  cleanups.push(() => fs.rm(workspace, { recursive: true, force: true }));
  await fs.writeFile(path.join(workspace, 'main.fl'), 'let value = 1;\n');
  const lsp = new LspWorkspace({
    cwd: workspace,
    servers: [
      {
        language: 'flood',
        command: process.execPath,
        args: [server],
        extensions: ['.fl'],
        languageIdOf: () => 'flood',
        installHint: 'the test fixture',
      },
    ],
    env: { ...process.env, FLOOD_MODE: mode, FLOOD_BYTES: String(bytes) },
  });
  cleanups.push(() => lsp.close());
  const tool = createLspTools({ workspace: lsp }).find((t) => t.name === 'lsp_definition');
  if (tool === undefined) throw new Error('no lsp_definition');
  const result = await executeTool(tool, { path: 'main.fl', line: 1, column: 5 });
  const text = result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
  return { text, isError: result.isError === true };
}

describe('a language server that floods the client', () => {
  it('a response announced over the limit stops the server, and the call says why', async () => {
    const result = await definition('length', 100 * 1024 * 1024);
    expect(result.isError).toBe(true);
    expect(result.text).toContain(
      `the server was stopped: it announced a message of ${100 * 1024 * 1024} bytes (the limit is ${maxServerMessageBytes})`,
    );
  });

  it('headers that run on stop it too', async () => {
    const result = await definition('headers', 20 * 1024 * 1024);
    expect(result.isError).toBe(true);
    expect(result.text).toContain(
      'the server was stopped: its message headers ran past 8192 bytes',
    );
  });

  it('a server within the limits answers as before', async () => {
    const result = await definition('none', 0);
    expect(result.isError).toBe(false);
  });
});

describe('createMessageSizeGuard', () => {
  async function through(chunks: Buffer[], maxBytes: number) {
    const reasons: string[] = [];
    const guard = createMessageSizeGuard((why) => reasons.push(why), maxBytes);
    const source = new PassThrough();
    const out: Buffer[] = [];
    guard.on('data', (chunk: Buffer) => out.push(chunk));
    source.pipe(guard);
    for (const chunk of chunks) source.write(chunk);
    source.end();
    await new Promise((resolve) => guard.on('end', resolve));
    return { out: Buffer.concat(out).toString('latin1'), reasons };
  }
  const message = (body: string) => `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

  it('passes messages through byte for byte, however they are split', async () => {
    const text = message('{"a":1}') + message('{"b":"ümlaut"}') + message('{}');
    const bytes = Buffer.from(text);
    for (const size of [1, 2, 3, 7, 16, bytes.length]) {
      const chunks: Buffer[] = [];
      for (let start = 0; start < bytes.length; start += size)
        chunks.push(bytes.subarray(start, start + size));
      const { out, reasons } = await through(chunks, 100);
      expect(out, `chunks of ${size}`).toBe(bytes.toString('latin1'));
      expect(reasons).toEqual([]);
    }
  });

  it('stops at the first message over the limit, whichever chunk its header ends in', async () => {
    for (const size of [1, 5, 64]) {
      const bytes = Buffer.from(message('{"ok":true}') + message('x'.repeat(200)));
      const chunks: Buffer[] = [];
      for (let start = 0; start < bytes.length; start += size)
        chunks.push(bytes.subarray(start, start + size));
      const { out, reasons } = await through(chunks, 100);
      expect(reasons, `chunks of ${size}`).toEqual([
        'it announced a message of 200 bytes (the limit is 100)',
      ]);
      expect(out.length).toBeLessThan(bytes.length - 100);
    }
  });
});
