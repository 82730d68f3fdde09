/**
 * Streaming overhead of @agent/providers-anthropic and @agent/providers-google against their raw
 * SDKs (`@anthropic-ai/sdk`, `@google/genai`): both read the same 2,000-delta stream from one
 * local HTTP server; we time the first event and the whole stream (wall clock and this
 * process's CPU time), interleaving the two implementations so drift hits both alike. The
 * server runs in a child process, so the CPU time measured here is the client's alone.
 */

import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createAnthropicProvider } from '@agent/providers-anthropic';
import { createGeminiProvider } from '@agent/providers-google';
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import { sseEvents } from '../../../tooling/wire-server/src/index.js';
import { type BenchSection, positiveInt } from '../types.js';

const deltas = 2_000;
/** Timed runs per implementation and API [60; env BENCH_ANTHROPIC_GOOGLE_RUNS]; 5 warm-up runs first. */
const runs = positiveInt(process.env.BENCH_ANTHROPIC_GOOGLE_RUNS, 60);
const warmup = 5;

function anthropicChunks(): string[] {
  return sseEvents([
    {
      event: 'message_start',
      data: {
        type: 'message_start',
        message: {
          id: 'msg_bench',
          type: 'message',
          role: 'assistant',
          content: [],
          model: 'claude-haiku-4-5',
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 12, output_tokens: 1 },
        },
      },
    },
    {
      event: 'content_block_start',
      data: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    },
    ...Array.from({ length: deltas }, (_, index) => ({
      event: 'content_block_delta',
      data: {
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'text_delta', text: `word${index} ` },
      },
    })),
    { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
    {
      event: 'message_delta',
      data: {
        type: 'message_delta',
        delta: { stop_reason: 'end_turn', stop_sequence: null },
        usage: { output_tokens: deltas },
      },
    },
    { event: 'message_stop', data: { type: 'message_stop' } },
  ]);
}

function geminiChunks(): string[] {
  return sseEvents(
    Array.from({ length: deltas }, (_, index) => ({
      data: {
        candidates: [
          {
            content: { role: 'model', parts: [{ text: `word${index} ` }] },
            index: 0,
            ...(index === deltas - 1 ? { finishReason: 'STOP' } : {}),
          },
        ],
        // Like the live API, every chunk carries the running usage counts.
        usageMetadata: {
          promptTokenCount: 12,
          candidatesTokenCount: index + 1,
          totalTokenCount: index + 13,
        },
        modelVersion: 'gemini-2.5-flash',
      },
    })),
  );
}

// The server of one suite run: answers every POST with the same SSE chunks, each its own write.
const serverScript = `
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
const chunks = JSON.parse(readFileSync(process.argv[1], 'utf8'));
const server = createServer((request, response) => {
  request.resume();
  request.on('end', () => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.flushHeaders();
    for (const chunk of chunks) response.write(chunk);
    response.end();
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\\n'));
`;

/** Starts the SSE server in a child process on 127.0.0.1, port 0; dispose to stop it. */
async function startChildServer(
  chunks: readonly string[],
): Promise<{ url: string; [Symbol.asyncDispose](): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-providers-'));
  const file = join(dir, 'chunks.json');
  await writeFile(file, JSON.stringify(chunks));
  const child = spawn(process.execPath, ['--input-type=module', '-e', serverScript, file], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill();
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const lines = createInterface({ input: child.stdout });
    const exited = new Promise<never>((_resolve, reject) =>
      child.once('exit', (code) => reject(new Error(`bench server exited (${code})`))),
    );
    const port = await Promise.race([
      new Promise<string>((resolve) => lines.once('line', resolve)),
      exited,
    ]);
    lines.close();
    return { url: `http://127.0.0.1:${port.trim()}`, [Symbol.asyncDispose]: stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

interface Timing {
  firstMs: number;
  totalMs: number;
  /** CPU time (user + system) of this process during the stream. */
  cpuMs: number;
  deltas: number;
}

async function time(run: (onEvent: (isDelta: boolean) => void) => Promise<void>): Promise<Timing> {
  const started = performance.now();
  const cpu = process.cpuUsage();
  let firstMs = -1;
  let count = 0;
  await run((isDelta) => {
    if (firstMs < 0) firstMs = performance.now() - started;
    if (isDelta) count++;
  });
  const totalMs = performance.now() - started;
  const used = process.cpuUsage(cpu);
  return { firstMs, totalMs, cpuMs: (used.user + used.system) / 1000, deltas: count };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? 0)
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

async function compare(
  raw: () => Promise<Timing>,
  ours: () => Promise<Timing>,
): Promise<{ raw: Timing[]; ours: Timing[] }> {
  for (let index = 0; index < warmup; index++) {
    await raw();
    await ours();
  }
  const rawTimings: Timing[] = [];
  const ourTimings: Timing[] = [];
  for (let index = 0; index < runs; index++) {
    // Alternate which goes first so neither always runs on a warmer process.
    if (index % 2 === 0) {
      rawTimings.push(await raw());
      ourTimings.push(await ours());
    } else {
      ourTimings.push(await ours());
      rawTimings.push(await raw());
    }
  }
  for (const timing of [...rawTimings, ...ourTimings])
    if (timing.deltas !== deltas)
      throw new Error(`expected ${deltas} deltas, saw ${timing.deltas}`);
  return { raw: rawTimings, ours: ourTimings };
}

function row(name: string, result: { raw: Timing[]; ours: Timing[] }): string[] {
  const rawFirst = median(result.raw.map((timing) => timing.firstMs));
  const ourFirst = median(result.ours.map((timing) => timing.firstMs));
  const rawTotal = median(result.raw.map((timing) => timing.totalMs));
  const ourTotal = median(result.ours.map((timing) => timing.totalMs));
  // Paired statistics: run i of ours against run i of raw, so machine noise cancels out.
  const pairs = result.raw.map((raw, index) => ({
    raw: raw.totalMs,
    ours: result.ours[index]?.totalMs ?? raw.totalMs,
  }));
  const ratio = median(pairs.map((pair) => pair.ours / pair.raw));
  const perDeltaUs = (median(pairs.map((pair) => pair.ours - pair.raw)) / deltas) * 1000;
  const cpuRatio = median(
    result.raw.map((raw, index) => (result.ours[index]?.cpuMs ?? raw.cpuMs) / raw.cpuMs),
  );
  return [
    name,
    rawFirst.toFixed(2),
    ourFirst.toFixed(2),
    rawTotal.toFixed(1),
    ourTotal.toFixed(1),
    `${ratio.toFixed(3)}×`,
    `${cpuRatio.toFixed(3)}×`,
    perDeltaUs.toFixed(2),
  ];
}

/** Runs the suite: one table, a row per provider. */
export async function run(): Promise<BenchSection> {
  const messages = [{ role: 'user' as const, content: 'go', timestamp: 0 }];

  await using anthropicServer = await startChildServer(anthropicChunks());
  const anthropicSdk = new Anthropic({
    apiKey: 'bench',
    baseURL: anthropicServer.url,
    maxRetries: 0,
  });
  const anthropicProvider = createAnthropicProvider({
    apiKey: 'bench',
    baseURL: anthropicServer.url,
  });
  const anthropic = await compare(
    () =>
      time(async (onEvent) => {
        const stream = await anthropicSdk.messages.create({
          model: 'claude-haiku-4-5',
          max_tokens: 4096,
          messages: [{ role: 'user', content: 'go' }],
          stream: true,
        });
        for await (const event of stream) {
          onEvent(event.type === 'content_block_delta' && event.delta.type === 'text_delta');
        }
      }),
    () =>
      time(async (onEvent) => {
        for await (const event of anthropicProvider.stream({
          model: 'claude-haiku-4-5',
          messages,
          maxOutputTokens: 4096,
        })) {
          onEvent(event.type === 'text-delta');
          if (event.type === 'error') throw event.error;
        }
      }),
  );

  await using geminiServer = await startChildServer(geminiChunks());
  const genai = new GoogleGenAI({ apiKey: 'bench', httpOptions: { baseUrl: geminiServer.url } });
  const geminiProvider = createGeminiProvider({ apiKey: 'bench', baseURL: geminiServer.url });
  const gemini = await compare(
    () =>
      time(async (onEvent) => {
        const stream = await genai.models.generateContentStream({
          model: 'gemini-2.5-flash',
          contents: [{ role: 'user', parts: [{ text: 'go' }] }],
          config: { automaticContinuation: false },
        });
        for await (const chunk of stream) {
          onEvent((chunk.candidates?.[0]?.content?.parts?.[0]?.text ?? '') !== '');
        }
      }),
    () =>
      time(async (onEvent) => {
        for await (const event of geminiProvider.stream({ model: 'gemini-2.5-flash', messages })) {
          onEvent(event.type === 'text-delta');
          if (event.type === 'error') throw event.error;
        }
      }),
  );

  return {
    title: 'Provider streaming overhead: @agent/providers-anthropic and -google vs raw SDKs',
    columns: [
      'Provider',
      'Raw SDK first event (ms)',
      'Ours first event (ms)',
      'Raw SDK total (ms)',
      'Ours total (ms)',
      'Ours / raw wall (paired median)',
      'Ours / raw CPU (paired median)',
      'Overhead per delta (µs, wall)',
    ],
    rows: [row('Anthropic Messages', anthropic), row('Gemini', gemini)],
    notes: [
      `${deltas} text deltas per stream from a local HTTP server (127.0.0.1, a child process); medians of ${runs} runs after ${warmup} warm-up runs, raw and ours interleaved.`,
      'CPU: user + system time of the bench process during each stream (the client alone); less sensitive to other load than wall time.',
      'Raw SDK: the SDK call iterated to the end. Ours: provider.stream() to the `done` event (message assembly, usage and cost included).',
      'Gemini chunks carry `usageMetadata` on every chunk, as the live API sends them.',
      'On a busy 2-core machine the wall ratio moves by several points between runs; compare several runs.',
      'Target: ours adds under 5% to the whole stream.',
    ],
  };
}
