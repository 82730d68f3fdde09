/**
 * Streaming overhead of @agent/providers-openai against the raw `openai` SDK: both read the
 * same 2,000-delta stream from one local wire server (Chat Completions, then the Responses API);
 * we time the first event and the whole stream, interleaving the two so drift hits both alike.
 */
import { createOpenAIProvider } from '@agent/providers-openai';
import OpenAI from 'openai';
import { sseEvents, startWireServer } from '../../../tooling/wire-server/src/index.js';
import { type BenchSection, positiveInt } from '../types.js';

const deltas = 2_000;
/** Timed runs per implementation and API [60; env BENCH_OPENAI_RUNS]; 5 warm-up runs first. */
const runs = positiveInt(process.env.BENCH_OPENAI_RUNS, 60);
const warmup = 5;

function chatChunks(): string[] {
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
    data: {
      id: 'chatcmpl-bench',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'gpt-4o-mini',
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      usage: null,
    },
  });
  return sseEvents([
    chunk({ role: 'assistant', content: '' }),
    ...Array.from({ length: deltas }, (_, index) => chunk({ content: `word${index} ` })),
    chunk({}, 'stop'),
    {
      data: {
        id: 'chatcmpl-bench',
        object: 'chat.completion.chunk',
        created: 1,
        model: 'gpt-4o-mini',
        choices: [],
        usage: { prompt_tokens: 12, completion_tokens: deltas, total_tokens: deltas + 12 },
      },
    },
    { data: '[DONE]' },
  ]);
}

function responsesChunks(): string[] {
  let sequence = 0;
  const event = (type: string, data: Record<string, unknown>) => ({
    event: type,
    data: { type, ...data, sequence_number: sequence++ },
  });
  const response = (status: string, usage: unknown) => ({
    id: 'resp_bench',
    object: 'response',
    created_at: 1,
    status,
    model: 'gpt-4o-mini',
    output: [],
    usage,
  });
  const item = {
    id: 'msg_bench',
    type: 'message',
    role: 'assistant',
    status: 'in_progress',
    content: [],
  };
  return sseEvents([
    event('response.created', { response: response('in_progress', null) }),
    event('response.output_item.added', { output_index: 0, item }),
    ...Array.from({ length: deltas }, (_, index) =>
      event('response.output_text.delta', {
        item_id: 'msg_bench',
        output_index: 0,
        content_index: 0,
        delta: `word${index} `,
        logprobs: [],
      }),
    ),
    event('response.output_item.done', {
      output_index: 0,
      item: {
        ...item,
        status: 'completed',
        content: [{ type: 'output_text', text: 'omitted', annotations: [] }],
      },
    }),
    event('response.completed', {
      response: response('completed', {
        input_tokens: 12,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: deltas,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: deltas + 12,
      }),
    }),
  ]);
}

interface Sample {
  firstMs: number;
  totalMs: number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? 0)
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

async function measureApi(api: 'chat' | 'responses'): Promise<{ ours: Sample[]; raw: Sample[] }> {
  const body = api === 'chat' ? chatChunks() : responsesChunks();
  const server = await startWireServer([
    { status: 200, headers: { 'content-type': 'text/event-stream' }, body },
  ]);
  try {
    const baseURL = `${server.url}/v1`;
    const client = new OpenAI({ apiKey: 'sk-bench', baseURL, maxRetries: 0, logLevel: 'off' });
    const provider = createOpenAIProvider({
      api,
      apiKey: 'sk-bench',
      baseURL,
      compat: { streamUsage: true },
      clientOptions: { logLevel: 'off' },
      env: {},
    });
    const messages = [{ role: 'user' as const, content: 'Write 2,000 words.' }];

    const raw = async (): Promise<Sample> => {
      const started = performance.now();
      let first = 0;
      let text = '';
      if (api === 'chat') {
        const stream = await client.chat.completions.create({
          model: 'gpt-4o-mini',
          messages,
          stream: true,
          stream_options: { include_usage: true },
        });
        for await (const chunk of stream) {
          const delta = chunk.choices[0]?.delta?.content;
          if (typeof delta === 'string' && delta !== '') {
            if (first === 0) first = performance.now();
            text += delta;
          }
        }
      } else {
        const stream = await client.responses.create({
          model: 'gpt-4o-mini',
          input: 'Write 2,000 words.',
          stream: true,
        });
        for await (const event of stream) {
          if (event.type === 'response.output_text.delta') {
            if (first === 0) first = performance.now();
            text += event.delta;
          }
        }
      }
      if (text.length === 0) throw new Error('raw SDK read no text');
      return { firstMs: first - started, totalMs: performance.now() - started };
    };

    const ours = async (): Promise<Sample> => {
      const started = performance.now();
      let first = 0;
      let done = false;
      for await (const event of provider.stream({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: messages[0]?.content ?? '', timestamp: 0 }],
      })) {
        if (event.type === 'text-delta' && first === 0) first = performance.now();
        if (event.type === 'done') done = true;
        if (event.type === 'error') throw event.error;
      }
      if (!done) throw new Error('provider ended without done');
      return { firstMs: first - started, totalMs: performance.now() - started };
    };

    for (let index = 0; index < warmup; index++) {
      await raw();
      await ours();
    }
    const samples = { ours: [] as Sample[], raw: [] as Sample[] };
    for (let index = 0; index < runs; index++) {
      // Alternate which goes first so neither always runs on a warmer process.
      if (index % 2 === 0) {
        samples.raw.push(await raw());
        samples.ours.push(await ours());
      } else {
        samples.ours.push(await ours());
        samples.raw.push(await raw());
      }
    }
    return samples;
  } finally {
    await server.close();
  }
}

/** Runs the suite: time to first event and per-delta overhead, ours against the raw SDK. */
export async function run(): Promise<BenchSection> {
  const rows: string[][] = [];
  const notes: string[] = [];
  for (const api of ['chat', 'responses'] as const) {
    const { ours, raw } = await measureApi(api);
    const oursFirst = median(ours.map((sample) => sample.firstMs));
    const rawFirst = median(raw.map((sample) => sample.firstMs));
    const oursTotal = median(ours.map((sample) => sample.totalMs));
    const rawTotal = median(raw.map((sample) => sample.totalMs));
    const perDeltaUs = ((oursTotal - rawTotal) / deltas) * 1000;
    // Each run of ours sits next to one raw run: the median of those paired ratios shrugs off
    // drift (other processes on the machine) that a ratio of two medians picks up.
    const ratio = median(ours.map((sample, index) => sample.totalMs / (raw[index]?.totalMs ?? 1)));
    const label = api === 'chat' ? 'Chat Completions' : 'Responses API';
    rows.push([
      label,
      'raw openai SDK',
      rawFirst.toFixed(2),
      rawTotal.toFixed(1),
      `${((rawTotal / deltas) * 1000).toFixed(1)}`,
      '—',
      '1.000',
    ]);
    rows.push([
      label,
      '@agent/providers-openai',
      oursFirst.toFixed(2),
      oursTotal.toFixed(1),
      `${((oursTotal / deltas) * 1000).toFixed(1)}`,
      perDeltaUs.toFixed(2),
      ratio.toFixed(3),
    ]);
  }
  notes.push(
    `${deltas.toLocaleString('en-US')} text deltas per stream from a local wire server (127.0.0.1); medians of ${runs} interleaved runs after ${warmup} warm-ups each.`,
    'Ratio = median over runs of our full-stream time / the adjacent raw SDK run on the same stream; per-delta overhead = (median ours − median raw) / deltas. Target: ratio < 1.05.',
    'The raw SDK loop only concatenates text; ours also builds the assistant message, emits typed events, usage and cost.',
  );
  return {
    title: 'OpenAI provider streaming overhead (vs raw openai SDK)',
    columns: [
      'API',
      'Implementation',
      'First text event (ms)',
      'Full stream (ms)',
      'Per delta (µs)',
      'Added per delta (µs)',
      'Ratio vs raw',
    ],
    rows,
    notes,
  };
}
