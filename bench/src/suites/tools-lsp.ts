/**
 * Code intelligence (`@agent/tools-lsp`) on a real project: this repo's `packages/core`
 * (TypeScript, typescript-language-server + the repo's TypeScript) and the package's small Python
 * fixture (pyright). Two figures per language, each against the same server driven raw (spawn,
 * `initialize`, `didOpen`, `textDocument/definition` over vscode-languageserver-protocol, no tool
 * layer):
 * - cold: a fresh workspace → the first `lsp_definition` answer (spawn, handshake, project load,
 *   the lookup, our formatting);
 * - warm: further `lsp_definition` calls on the same server (our per-call mtime checks of open
 *   documents, the locator, formatting with source lines) vs raw `textDocument/definition`.
 * Rounds alternate which implementation goes first so drift (page cache, CPU boost) is shared.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { AnyAgentTool, ToolContext } from '@agent/core';
import {
  createLspTools,
  type LanguageServerConfig,
  LspWorkspace,
  positionOf,
  pythonServer,
  typescriptNativeServer,
  typescriptServer,
} from '@agent/tools-lsp';
import {
  createProtocolConnection,
  StreamMessageReader,
  StreamMessageWriter,
} from 'vscode-languageserver-protocol/node';
import { type BenchSection, positiveInt } from '../types.js';

/** Cold starts per implementation and language [3; env BENCH_LSP_COLD]. */
const coldRounds = positiveInt(process.env.BENCH_LSP_COLD, 3);
/** Warm lookups timed per implementation and round [200; env BENCH_LSP_WARM]. */
const warmCalls = positiveInt(process.env.BENCH_LSP_WARM, 200);
/** Untimed warm lookups first (JIT, the server's caches). */
const warmupCalls = 20;

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const require = createRequire(import.meta.url);
const bin = path.join(repo, 'bench', 'node_modules', '.bin');
/** TypeScript 7 lives apart (tooling/typescript-native) so every package's own tsc stays 5. */
const nativeBin = path.join(repo, 'tooling', 'typescript-native', 'node_modules', '.bin');

interface Target {
  language: string;
  config: LanguageServerConfig;
  /** Where the server's executable is. */
  bin: string;
  root: string;
  /** Relative to root. */
  file: string;
  line: number;
  symbol: string;
  /** The definition must land in this file (checked once per implementation). */
  expected: string;
}

function lineOf(file: string, needle: string): number {
  const index = readFileSync(file, 'utf8')
    .split('\n')
    .findIndex((line) => line.includes(needle));
  if (index === -1) throw new Error(`"${needle}" not found in ${file}`);
  return index + 1;
}

function targets(): Target[] {
  const core = path.join(repo, 'packages', 'core');
  const fixtures = path.join(repo, 'packages', 'tools-lsp', 'src', '__fixtures__');
  return [
    {
      language: 'TypeScript: packages/core (typescript-language-server 6, TypeScript 5.9)',
      config: typescriptServer,
      bin,
      root: core,
      file: 'src/execute-tool.ts',
      line: lineOf(path.join(core, 'src/execute-tool.ts'), 'executeToolCalls('),
      symbol: 'executeToolCalls',
      expected: 'execute-tool-calls.ts',
    },
    {
      language: "TypeScript: packages/core (TypeScript 7's own server, tsc --lsp --stdio)",
      config: typescriptNativeServer,
      bin: nativeBin,
      root: core,
      file: 'src/execute-tool.ts',
      line: lineOf(path.join(core, 'src/execute-tool.ts'), 'executeToolCalls('),
      symbol: 'executeToolCalls',
      expected: 'execute-tool-calls.ts',
    },
    {
      language: 'Python: the tools-lsp fixture (pyright 1.1)',
      config: pythonServer,
      bin,
      root: path.join(fixtures, 'py-project'),
      file: 'app.py',
      line: 4,
      symbol: 'add',
      expected: 'geometry.py',
    },
  ];
}

interface Session {
  lookup: () => Promise<string>;
  close: () => Promise<void>;
}

interface Implementation {
  label: string;
  open: (target: Target) => Promise<Session>;
}

const context: ToolContext = {
  toolCallId: 'bench',
  toolName: 'lsp_definition',
  signal: new AbortController().signal,
  onUpdate: () => {},
  onProgress: () => {},
};

const ours: Implementation = {
  label: 'ours: `lsp_definition` tool (LspWorkspace)',
  open: async (target) => {
    const workspace = new LspWorkspace({
      cwd: target.root,
      binPaths: [target.bin],
      servers: [target.config],
    });
    const tool = createLspTools({ workspace }).find(
      (candidate) => candidate.name === 'lsp_definition',
    ) as AnyAgentTool;
    const args = { path: target.file, line: target.line, symbol: target.symbol };
    return {
      lookup: async () => {
        const result = await tool.execute(args, context);
        return result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
      },
      close: () => workspace.close(),
    };
  },
};

const raw: Implementation = {
  label: 'raw: the server over vscode-languageserver-protocol',
  open: async (target) => {
    const executable = path.join(target.bin, target.config.command);
    const child = spawn(executable, [...target.config.args], {
      cwd: target.root,
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    const connection = createProtocolConnection(
      new StreamMessageReader(child.stdout),
      new StreamMessageWriter(child.stdin),
    );
    connection.onRequest('workspace/configuration', (params: { items?: unknown[] }) =>
      (params.items ?? []).map(() => null),
    );
    connection.onRequest('client/registerCapability', () => null);
    connection.onRequest('window/workDoneProgress/create', () => null);
    connection.listen();
    const rootUri = pathToFileURL(target.root).href;
    await connection.sendRequest('initialize', {
      processId: process.pid,
      rootUri,
      workspaceFolders: [{ uri: rootUri, name: path.basename(target.root) }],
      capabilities: { textDocument: { definition: { linkSupport: true } } },
      initializationOptions: await target.config.initializationOptions?.({
        executable,
        root: target.root,
      }),
    });
    await connection.sendNotification('initialized', {});
    const file = path.join(target.root, target.file);
    const text = readFileSync(file, 'utf8');
    const uri = pathToFileURL(file).href;
    await connection.sendNotification('textDocument/didOpen', {
      textDocument: { uri, languageId: target.config.languageIdOf(file), version: 1, text },
    });
    const position = positionOf(text, { line: target.line, symbol: target.symbol });
    return {
      lookup: async () =>
        JSON.stringify(
          await connection.sendRequest('textDocument/definition', {
            textDocument: { uri },
            position,
          }),
        ),
      close: async () => {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        await connection.sendRequest('shutdown');
        await connection.sendNotification('exit');
        await exited;
        connection.dispose();
      },
    };
  },
};

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

function percentile(values: number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? Number.NaN;
}

const ms = (value: number) => (value >= 100 ? `${value.toFixed(0)} ms` : `${value.toFixed(2)} ms`);

async function measure(target: Target): Promise<string[][]> {
  const implementations = [ours, raw];
  const cold = new Map<Implementation, number[]>(
    implementations.map((implementation) => [implementation, []]),
  );
  const warm = new Map<Implementation, number[]>(
    implementations.map((implementation) => [implementation, []]),
  );
  for (let round = 0; round < coldRounds; round++) {
    const order = round % 2 === 0 ? implementations : [...implementations].reverse();
    for (const implementation of order) {
      const started = performance.now();
      const session = await implementation.open(target);
      try {
        const first = await session.lookup();
        cold.get(implementation)?.push(performance.now() - started);
        if (!first.includes(target.expected))
          throw new Error(
            `${implementation.label}: the definition is not in ${target.expected}: ${first.slice(0, 200)}`,
          );
        for (let call = 0; call < warmupCalls; call++) await session.lookup();
        for (let call = 0; call < Math.ceil(warmCalls / coldRounds); call++) {
          const callStarted = performance.now();
          await session.lookup();
          warm.get(implementation)?.push(performance.now() - callStarted);
        }
      } finally {
        await session.close();
      }
    }
  }
  const oursCold = median(cold.get(ours) ?? []);
  const rawCold = median(cold.get(raw) ?? []);
  const oursWarm = median(warm.get(ours) ?? []);
  const rawWarm = median(warm.get(raw) ?? []);
  return implementations.map((implementation) => {
    const coldMedian = median(cold.get(implementation) ?? []);
    const warmValues = warm.get(implementation) ?? [];
    const isOurs = implementation === ours;
    return [
      target.language,
      implementation.label,
      ms(coldMedian),
      isOurs ? `${(oursCold / rawCold).toFixed(2)}×` : '1.00×',
      `${ms(median(warmValues))} (p95 ${ms(percentile(warmValues, 0.95))})`,
      isOurs ? `${(oursWarm / rawWarm).toFixed(2)}×` : '1.00×',
    ];
  });
}

export async function run(): Promise<BenchSection> {
  // Resolvable here means installed as the bench's dev dependencies.
  require.resolve('typescript-language-server/package.json');
  require.resolve('pyright/package.json');
  const rows: string[][] = [];
  for (const target of targets()) rows.push(...(await measure(target)));
  return {
    title:
      'Code intelligence — first LSP answer (cold) and warm go-to-definition, ours vs the raw server',
    columns: [
      'Project',
      'Implementation',
      'Cold: spawn → first definition (median)',
      'Cold vs raw',
      'Warm definition (median)',
      'Warm vs raw',
    ],
    rows,
    notes: [
      `${coldRounds} cold starts per implementation and language (order alternating); ${Math.ceil(warmCalls / coldRounds) * coldRounds} warm lookups each after ${warmupCalls} untimed ones.`,
      "Both sides give typescript-language-server the same initialization options (the repo's tsserver.js, no syntax-only server), so the cold figure is mostly the server loading the project.",
      'Ours per warm call adds: a stat of every open document (to catch edits made on disk), reading the file to place the symbol, and reading the target file for the source line shown.',
    ],
  };
}
