/**
 * Per-call overhead of `@agent/tools-mcp`'s `McpToolAdapter` against the raw
 * `@modelcontextprotocol/sdk` `Client.callTool` and the Vercel AI SDK's MCP client (`@ai-sdk/mcp`),
 * all talking to the same stdio server (`@modelcontextprotocol/server-everything`, its `echo`
 * tool), one fresh server process per implementation and round. Rounds rotate the order of the
 * implementations so drift (CPU boost, GC, page cache) is spread over all of them.
 */
import { createRequire } from 'node:module';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { ToolContext, ToolResult } from '@agent/core';
import { McpToolAdapter } from '@agent/tools-mcp';
import { createMCPClient } from '@ai-sdk/mcp';
import { StdioMCPTransport } from '@ai-sdk/mcp/mcp-stdio';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { type BenchSection, positiveInt } from '../types.js';

/** Sequential calls timed per implementation and round [2,000; env BENCH_MCP_CALLS]. */
const calls = positiveInt(process.env.BENCH_MCP_CALLS, 2_000);
/** Rounds: each implementation connects to a fresh server once per round [3; env BENCH_MCP_ROUNDS]. */
const rounds = positiveInt(process.env.BENCH_MCP_ROUNDS, 3);
/** Untimed calls before the timed ones (JIT, socket buffers). */
const warmupCalls = 200;
/** Calls kept in flight at once in the concurrent phase. */
const concurrency = 16;

const require = createRequire(import.meta.url);
const serverEntry = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
const serverCommand = process.execPath;
const serverArgs = [serverEntry, 'stdio'];

// A forced GC makes the heap figures "retained", not "whenever V8 last collected".
setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;

/** One connected client: `call` sends one `echo` and returns the text it got back. */
interface Connection {
  call: (message: string) => Promise<string>;
  close: () => Promise<void>;
}

interface Implementation {
  label: string;
  connect: () => Promise<Connection>;
}

function textOf(content: unknown): string {
  if (!Array.isArray(content)) return '';
  return content
    .map((part: unknown) =>
      typeof part === 'object' && part !== null && 'text' in part && typeof part.text === 'string'
        ? part.text
        : '',
    )
    .join('');
}

const rawSdk: Implementation = {
  label: '@modelcontextprotocol/sdk Client.callTool (raw)',
  connect: async () => {
    const client = new Client({ name: 'bench', version: '0.0.0' });
    await client.connect(
      new StdioClientTransport({ command: serverCommand, args: serverArgs, stderr: 'ignore' }),
    );
    const { tools } = await client.listTools();
    if (!tools.some((tool) => tool.name === 'echo')) throw new Error('raw SDK: no echo tool');
    return {
      call: async (message) =>
        textOf((await client.callTool({ name: 'echo', arguments: { message } })).content),
      close: () => client.close(),
    };
  },
};

function toolContext(): ToolContext {
  return {
    toolCallId: 'bench',
    toolName: 'everything__echo',
    signal: new AbortController().signal,
    onUpdate: () => {},
    onProgress: () => {},
  };
}

const resultText = (result: ToolResult) =>
  result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');

function adapterImplementation(label: string, processGroup: boolean): Implementation {
  return {
    label,
    connect: async () => {
      const adapter = await McpToolAdapter.connect({
        name: 'everything',
        transport: { type: 'stdio', command: serverCommand, args: serverArgs, processGroup },
      });
      const echo = adapter.tools().find((tool) => tool.name === 'everything__echo');
      if (echo === undefined) throw new Error('McpToolAdapter: no everything__echo tool');
      const context = toolContext();
      return {
        call: async (message) => resultText(await echo.execute({ message }, context)),
        close: () => adapter.close(),
      };
    },
  };
}

const ours = adapterImplementation('@agent/tools-mcp McpToolAdapter tool.execute (ours)', true);
/** The same with the server as a plain child, as the SDK's transport starts it. */
const oursPlainChild = adapterImplementation(
  '@agent/tools-mcp, `processGroup: false` (ours)',
  false,
);

const aiSdk: Implementation = {
  label: '@ai-sdk/mcp createMCPClient tools().echo.execute',
  connect: async () => {
    const client = await createMCPClient({
      transport: new StdioMCPTransport({
        command: serverCommand,
        args: serverArgs,
        stderr: 'ignore',
      }),
    });
    const tools = await client.tools();
    const echo = tools.echo;
    if (echo?.execute === undefined) throw new Error('@ai-sdk/mcp: no echo tool');
    const execute = echo.execute;
    return {
      call: async (message) => {
        const result: unknown = await execute(
          { message },
          { toolCallId: 'bench', messages: [], context: {} },
        );
        const content =
          typeof result === 'object' && result !== null && 'content' in result
            ? result.content
            : undefined;
        return textOf(content);
      },
      close: () => client.close(),
    };
  },
};

interface RoundResult {
  connectMs: number;
  sequentialUs: number;
  cpuUs: number;
  concurrentPerSecond: number;
  heapGrowth: number;
  rssGrowth: number;
}

async function checkedCall(connection: Connection, index: number): Promise<void> {
  const message = `m${index}`;
  const text = await connection.call(message);
  // Every implementation must really get the echo back, so none can skip the work.
  if (!text.includes(message)) throw new Error(`echo answered "${text}" to "${message}"`);
}

async function measureRound(implementation: Implementation): Promise<RoundResult> {
  const started = performance.now();
  const connection = await implementation.connect();
  const connectMs = performance.now() - started;
  try {
    for (let index = 0; index < warmupCalls; index++) await checkedCall(connection, index);
    collect();
    const heapBefore = process.memoryUsage().heapUsed;
    const rssBefore = process.memoryUsage.rss();
    const cpuBefore = process.cpuUsage();
    const sequentialStarted = performance.now();
    for (let index = 0; index < calls; index++) await checkedCall(connection, index);
    const sequentialUs = ((performance.now() - sequentialStarted) * 1000) / calls;
    const cpu = process.cpuUsage(cpuBefore);
    const cpuUs = (cpu.user + cpu.system) / calls;
    const rssGrowth = process.memoryUsage.rss() - rssBefore;
    collect();
    const heapGrowth = process.memoryUsage().heapUsed - heapBefore;

    let next = 0;
    const worker = async () => {
      while (next < calls) await checkedCall(connection, next++);
    };
    const concurrentStarted = performance.now();
    await Promise.all(Array.from({ length: concurrency }, worker));
    const concurrentPerSecond = calls / ((performance.now() - concurrentStarted) / 1000);
    return { connectMs, sequentialUs, cpuUs, concurrentPerSecond, heapGrowth, rssGrowth };
  } finally {
    await connection.close();
  }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  if (sorted.length === 0) return Number.NaN;
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? Number.NaN)
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

const kb = (bytes: number) => `${(bytes / 1024).toFixed(0)} KB`;

/** Runs the suite: one row per MCP client. */
export async function run(): Promise<BenchSection> {
  const implementations = [rawSdk, ours, oursPlainChild, aiSdk];
  const results = new Map<Implementation, RoundResult[]>(
    implementations.map((implementation) => [implementation, []]),
  );
  const failures = new Map<Implementation, string>();
  for (let round = 0; round < rounds; round++) {
    // Rotate the order each round: no implementation always goes first (or last).
    const order = implementations.map(
      (_, index) => implementations[(index + round) % implementations.length],
    );
    for (const implementation of order) {
      if (implementation === undefined || failures.has(implementation)) continue;
      try {
        results.get(implementation)?.push(await measureRound(implementation));
      } catch (error) {
        failures.set(
          implementation,
          error instanceof Error ? (error.message.split('\n')[0] ?? error.name) : String(error),
        );
      }
    }
  }

  const rawUs = median((results.get(rawSdk) ?? []).map((result) => result.sequentialUs));
  const rawCpuUs = median((results.get(rawSdk) ?? []).map((result) => result.cpuUs));
  const rows = implementations.map((implementation) => {
    const failure = failures.get(implementation);
    if (failure !== undefined)
      return [implementation.label, `not available: ${failure}`, '', '', '', '', '', '', ''];
    const measured = results.get(implementation) ?? [];
    const sequentialUs = median(measured.map((result) => result.sequentialUs));
    const cpuUs = median(measured.map((result) => result.cpuUs));
    return [
      implementation.label,
      `${median(measured.map((result) => result.connectMs)).toFixed(0)} ms`,
      `${sequentialUs.toFixed(0)} µs`,
      `${(sequentialUs / rawUs).toFixed(2)}×`,
      `${cpuUs.toFixed(0)} µs`,
      `${(cpuUs / rawCpuUs).toFixed(2)}×`,
      `${median(measured.map((result) => result.concurrentPerSecond)).toFixed(0)}/s`,
      kb(median(measured.map((result) => result.heapGrowth))),
      kb(median(measured.map((result) => result.rssGrowth))),
    ];
  });

  return {
    title: 'tools-mcp: MCP client overhead per tool call (server-everything `echo`, stdio)',
    columns: [
      'Client',
      'Connect + list',
      `µs/call (${calls} sequential)`,
      'vs raw SDK',
      'Client CPU/call',
      'CPU vs raw',
      `Calls/s (${concurrency} concurrent)`,
      'Heap retained',
      'RSS growth',
    ],
    rows,
    notes: [
      `Medians over ${rounds} rounds; each round starts a fresh server (\`node server-everything/dist/index.js stdio\`) per client, in rotated order, and closes it afterwards.`,
      `Per round: connect (spawn + initialize + tools/list), ${warmupCalls} warm-up calls, ${calls} sequential \`echo\` calls (timed), then ${calls} calls with ${concurrency} in flight (timed). Each reply is checked to contain its message.`,
      'Ours goes through `AgentTool.execute` (result mapped to @agent content, abort signal wired); the AI SDK through its `tools()` `execute` (what `generateText` calls); the raw SDK returns the protocol result as is.',
      "Client CPU/call: this process's user+system CPU time (`process.cpuUsage`) over the sequential calls divided by the calls; the server runs in its own process, so this isolates the client's cost better than wall time.",
      'Most of a call is the server (a Node process parsing JSON and validating with zod) and the pipe round trip; the client-side difference is what the ratio shows.',
      "By default ours starts the server in a process group of its own (so `close()` stops grandchildren, and a Ctrl-C in the terminal does not reach the server); on Linux it stays in the host's session, hence its scheduling autogroup (started through `perl`, which sets the group and execs the server), as the raw SDK's and the AI SDK's plain children do. `processGroup: false` starts it as a plain child.",
      'Heap retained: `heapUsed` after a forced GC following the sequential calls, minus the value after a forced GC before them. RSS growth: over the sequential calls, whole process (noisy, includes allocator behaviour).',
    ],
  };
}
