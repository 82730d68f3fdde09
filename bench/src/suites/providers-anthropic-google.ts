/**
 * Streaming overhead of @agent/providers-anthropic and @agent/providers-google against their raw
 * SDKs (`@anthropic-ai/sdk`, `@google/genai`): both read the same 2,000-delta stream from one
 * local wire server; we time the first event and the whole stream, interleaving the two
 * implementations so drift hits both alike.
 */

import { createAnthropicProvider } from '@agent/providers-anthropic';
import { createGeminiProvider } from '@agent/providers-google';
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import { sseEvents, startWireServer } from '../../../tooling/wire-server/src/index.js';

/** One markdown table of the bench output (mirrors ../types.ts). */
interface BenchSection {
  title: string;
  columns: string[];
  rows: string[][];
  notes?: string[];
}

const deltas = 2_000;
/** Timed runs per implementation and API [60; env BENCH_ANTHROPIC_GOOGLE_RUNS]; 5 warm-up runs first. */
const runs = positiveInt(process.env.BENCH_ANTHROPIC_GOOGLE_RUNS, 60);
const warmup = 5;

function positiveInt(value: string | undefined, fallback: number): number {
  const parsed = Number(value);
  return Number.isInteger(parsed) && parsed > 0 ? parsed : fallback;
}

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
        ...(index === deltas - 1
          ? {
              usageMetadata: {
                promptTokenCount: 12,
                candidatesTokenCount: deltas,
                totalTokenCount: deltas + 12,
              },
            }
          : {}),
        modelVersion: 'gemini-2.5-flash',
      },
    })),
  );
}

interface Timing {
  firstMs: number;
  totalMs: number;
  deltas: number;
}

async function time(run: (onEvent: (isDelta: boolean) => void) => Promise<void>): Promise<Timing> {
  const started = performance.now();
  let firstMs = -1;
  let count = 0;
  await run((isDelta) => {
    if (firstMs < 0) firstMs = performance.now() - started;
    if (isDelta) count++;
  });
  return { firstMs, totalMs: performance.now() - started, deltas: count };
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
  return [
    name,
    rawFirst.toFixed(2),
    ourFirst.toFixed(2),
    rawTotal.toFixed(1),
    ourTotal.toFixed(1),
    `${ratio.toFixed(3)}×`,
    perDeltaUs.toFixed(2),
  ];
}

/** Runs the suite: one table, a row per provider. */
export async function run(): Promise<BenchSection> {
  const sse = { 'content-type': 'text/event-stream' };
  const messages = [{ role: 'user' as const, content: 'go', timestamp: 0 }];

  await using anthropicServer = await startWireServer([{ headers: sse, body: anthropicChunks() }]);
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

  await using geminiServer = await startWireServer([{ headers: sse, body: geminiChunks() }]);
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
      'Ours / raw (paired median)',
      'Overhead per delta (µs)',
    ],
    rows: [row('Anthropic Messages', anthropic), row('Gemini', gemini)],
    notes: [
      `${deltas} text deltas per stream from a local wire server (127.0.0.1); medians of ${runs} runs after ${warmup} warm-up runs, raw and ours interleaved.`,
      'Raw SDK: the SDK call iterated to the end. Ours: provider.stream() to the `done` event (message assembly, usage and cost included).',
      'Target: ours adds under 5% to the whole stream.',
    ],
  };
}
