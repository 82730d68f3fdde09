// A language server is someone else's program, and what it publishes the client keeps until the
// next publication for that file. A hostile (or runaway) one publishing a million diagnostics, or
// diagnostics for a hundred thousand files, must not grow the client's memory without end. The
// server here is a real process speaking JSON-RPC over stdio (`__fixtures__/diagnostics-flood-server`).
import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { type AnyAgentTool, executeTool } from '@agent/core';
import { afterEach, describe, expect, it } from 'vitest';
import { createLspTools } from './lsp-tools.js';
import { LspWorkspace } from './lsp-workspace.js';
import {
  boundedDiagnostics,
  defaultPublishedDiagnosticsLimits,
  PublishedDiagnosticsStore,
} from './published-diagnostics.js';
import { ServerProcess } from './server-process.js';
import { floodServerConfig } from './test-helpers.js';

const config = floodServerConfig;
const limits = defaultPublishedDiagnosticsLimits;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempDir(): Promise<string> {
  const dir = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'agent-lsp-flood-')));
  cleanups.push(() => fs.rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Starts the flooding server and resolves once it has published everything. */
async function flooded(env: Record<string, string>) {
  const root = await tempDir();
  const server = await ServerProcess.start({
    config,
    executable: process.execPath,
    roots: [root],
    env: { ...process.env, ...env },
  });
  cleanups.push(() => server.stop(1_000));
  await new Promise<void>((resolve) => {
    const stop = server.onDiagnostics((uri) => {
      if (uri !== 'file:///flood/done.hx') return;
      stop();
      resolve();
    });
  });
  return server;
}

describe('a server that floods published diagnostics', () => {
  it('100,000 files: the files kept stay bounded, the newest are kept', async () => {
    const server = await flooded({ FLOOD_FILES: '100000' });
    expect(server.diagnosticsKept.files).toBe(limits.files);
    expect(server.diagnosticsKept.diagnostics).toBeLessThanOrEqual(limits.total);
    // The newest publications are kept, the first ones dropped.
    expect(server.publishedDiagnostics('file:///flood/file-99999.hx')?.diagnostics).toHaveLength(1);
    expect(server.publishedDiagnostics('file:///flood/file-0.hx')).toBeUndefined();
    expect(server.publishedDiagnostics('file:///flood/done.hx')?.diagnostics).toEqual([]);
  }, 120_000);

  it('1,000,000 diagnostics for one file: the most severe 1,000 are kept, the rest counted', async () => {
    const server = await flooded({ FLOOD_ROUNDS: '5', FLOOD_PER_ROUND: '200000' });
    const big = server.publishedDiagnostics('file:///flood/big.hx');
    expect(big?.diagnostics).toHaveLength(limits.perFile);
    expect(big?.omitted).toBe(200_000 - limits.perFile);
    // Errors first: the file has 50,000 of them in the last round.
    expect(big?.diagnostics.every((diagnostic) => diagnostic.severity === 1)).toBe(true);
    expect(big?.diagnostics[0]?.message).toMatch(/^round 4 number 0 /);
    expect(server.diagnosticsKept.diagnostics).toBeLessThanOrEqual(limits.total);
  }, 120_000);
});

describe('lsp_diagnostics on a flooded file', () => {
  it('still finds the one error published last, clips long messages and says what was left out', async () => {
    const workspace = await tempDir();
    await fs.writeFile(path.join(workspace, 'main.hx'), 'let value = 1;\n');
    const lsp = new LspWorkspace({
      cwd: workspace,
      servers: [config],
      env: { ...process.env, FLOOD_OPEN_COUNT: '300000' },
      diagnosticsSettleMs: 50,
    });
    cleanups.push(() => lsp.close());
    const tools = createLspTools({ workspace: lsp });
    const tool = tools.find((candidate) => candidate.name === 'lsp_diagnostics') as AnyAgentTool;
    const result = await executeTool(tool, { path: 'main.hx' });
    const text = result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
    expect(result.isError, text).not.toBe(true);
    const lines = text.split('\n');
    // The error comes first though the server sent it after 300,001 others.
    expect(lines[0]).toMatch(/^main\.hx:8:1 error: the real error$/);
    expect(text).toContain(`than are kept (the most severe ${limits.perFile} per file)`);
    for (const line of lines) expect(line.length).toBeLessThan(limits.textChars + 200);
    expect(text).not.toContain('no range');
  }, 120_000);
});

describe('PublishedDiagnosticsStore', () => {
  const diagnostic = (severity: 1 | 2 | 3 | 4, message = 'm') => ({
    range: { start: { line: 0, character: 0 }, end: { line: 0, character: 1 } },
    severity,
    message,
  });

  it('keeps the total bound by dropping the files published longest ago, never the newest', () => {
    const store = new PublishedDiagnosticsStore({ perFile: 10, files: 100, total: 25 });
    for (let index = 0; index < 5; index++)
      store.publish({ uri: `file:///${index}`, diagnostics: Array(10).fill(diagnostic(2)) });
    expect(store.size).toEqual({ files: 2, diagnostics: 20 });
    expect(store.get('file:///4')?.diagnostics).toHaveLength(10);
    expect(store.get('file:///2')).toBeUndefined();
    // Republishing a file replaces its count, and moves it to the newest.
    store.publish({ uri: 'file:///3', diagnostics: [diagnostic(1)] });
    expect(store.size).toEqual({ files: 2, diagnostics: 11 });
    store.publish({ uri: 'file:///5', diagnostics: Array(10).fill(diagnostic(2)) });
    expect(store.get('file:///3')).toBeDefined();
    expect(store.get('file:///4')).toBeDefined();
    expect(store.size).toEqual({ files: 3, diagnostics: 21 });
  });

  it.each([
    ['not an array', { uri: 'file:///a', diagnostics: 'many' }],
    ['items without a range', { uri: 'file:///a', diagnostics: [{ message: 'x' }, null, 3] }],
    [
      'negative lines',
      {
        uri: 'file:///a',
        diagnostics: [
          {
            ...diagnostic(1),
            range: { start: { line: -1, character: 0 }, end: { line: 0, character: 0 } },
          },
        ],
      },
    ],
    ['no message', { uri: 'file:///a', diagnostics: [{ range: diagnostic(1).range }] }],
  ])('malformed diagnostics (%s) are not kept, and counted', (_name, params) => {
    const store = new PublishedDiagnosticsStore();
    store.publish(params as never);
    expect(store.get('file:///a')?.diagnostics).toEqual([]);
  });

  it('a publication without a uri is ignored', () => {
    const store = new PublishedDiagnosticsStore();
    expect(store.publish({ diagnostics: [] } as never)).toBeUndefined();
    expect(store.sequence).toBe(0);
  });

  it('pulled answers get the same bound: errors first, text clipped, extra fields dropped', () => {
    const items = [
      ...Array.from({ length: 5_000 }, () => ({ ...diagnostic(4), data: 'x'.repeat(1_000) })),
      diagnostic(1, 'e'.repeat(50_000)),
    ];
    const { diagnostics, omitted } = boundedDiagnostics(items);
    expect(diagnostics).toHaveLength(limits.perFile);
    expect(omitted).toBe(5_001 - limits.perFile);
    expect(diagnostics[0]?.severity).toBe(1);
    expect(diagnostics[0]?.message).toHaveLength(limits.textChars);
    expect(diagnostics[1]).not.toHaveProperty('data');
  });
});
