/**
 * Interop overhead (issue 29): a tool call through each framework adapter against the framework's
 * own native tool, inside the framework's own loop (AI SDK `generateText`, Agents SDK `run()`) or
 * its tool invocation (LangChain `invoke(toolCall)`); and our loop over an AI SDK model against our
 * native provider on the same local wire server (two workloads: tool-call heavy, and prose), with
 * the AI SDK's own `streamText` over the same model as a reference row. Goal for every ratio: ≤ 1.1×.
 */
import os from 'node:os';
import { aiSdkRun } from '../interop/ai-sdk-tools.js';
import { langChainRun } from '../interop/langchain-tools.js';
import {
  loopRun,
  proseTokens,
  proseTurns,
  providersAt,
  startChatServer,
  streamTextRun,
  type WorkloadName,
  wireModel,
  wireTurns,
} from '../interop/loop-over-ai-sdk.js';
import { openAIAgentsRun } from '../interop/openai-agents-tools.js';
import { interopCalls } from '../interop/workload.js';
import { type BenchSection, positiveInt } from '../types.js';

/** Timed runs per implementation [15; env BENCH_INTEROP_RUNS], after 5 warm-up runs each. */
const runs = positiveInt(process.env.BENCH_INTEROP_RUNS, 15);
const warmup = 5;

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? 0)
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

/** One timed run: wall time and this process's CPU time (user + system), in ms. */
interface Sample {
  wallMs: number;
  cpuMs: number;
}

/**
 * Runs the implementations interleaved (the order rotates each round, so none always runs on a
 * warmer process); returns each one's samples.
 */
async function interleaved(
  implementations: Record<string, () => Promise<void>>,
): Promise<Record<string, Sample[]>> {
  const names = Object.keys(implementations);
  const samples: Record<string, Sample[]> = Object.fromEntries(names.map((name) => [name, []]));
  for (let round = 0; round < warmup + runs; round++) {
    for (let offset = 0; offset < names.length; offset++) {
      const name = names[(round + offset) % names.length] as string;
      const cpu = process.cpuUsage();
      const started = performance.now();
      await implementations[name]?.();
      const wallMs = performance.now() - started;
      const used = process.cpuUsage(cpu);
      if (round >= warmup) samples[name]?.push({ wallMs, cpuMs: (used.user + used.system) / 1000 });
    }
  }
  return samples;
}

/** Median over rounds of this run's value ÷ the baseline's run of the same round. */
function pairedRatio(samples: readonly number[], baseline: readonly number[]): number {
  return median(samples.map((value, index) => value / (baseline[index] ?? value)));
}

/** One table row per implementation; `baselines` names each one's baseline (none: it is one). */
function rowsFor(
  framework: string,
  samples: Record<string, Sample[]>,
  rows: Record<string, { label: string; baseline?: string }>,
  perRun: number,
  unit: string,
): string[][] {
  const per = (value: number) => ((value / perRun) * 1000).toFixed(2);
  return Object.entries(rows).map(([name, { label, baseline }]) => {
    const own = samples[name] ?? [];
    const base = baseline === undefined ? undefined : (samples[baseline] ?? []);
    const cpu = own.map((sample) => sample.cpuMs);
    const wall = own.map((sample) => sample.wallMs);
    return [
      framework,
      label,
      per(median(cpu)),
      `${per(Math.min(...cpu))}–${per(Math.max(...cpu))}`,
      per(median(wall)),
      base === undefined
        ? '1.00× (baseline)'
        : `${pairedRatio(
            cpu,
            base.map((sample) => sample.cpuMs),
          ).toFixed(2)}× CPU, ${pairedRatio(
            wall,
            base.map((sample) => sample.wallMs),
          ).toFixed(2)}× wall`,
      unit,
    ];
  });
}

function describeWorkload(workload: WorkloadName): string {
  return workload === 'tool-calls'
    ? `tool-calls: ${wireTurns + 1} model calls, ${wireTurns * 8} tool calls`
    : `prose: ${proseTurns + 1} model calls, ${proseTurns * proseTokens.perTurn + proseTokens.answer} text tokens, ${proseTurns} tool calls`;
}

/** Runs the suite: adapter overhead per tool call, and our loop over an AI SDK model. */
export async function run(): Promise<BenchSection[]> {
  const load = os.loadavg()[0]?.toFixed(1) ?? '?';
  const aiSdk = await interleaved({
    native: () => aiSdkRun('native'),
    ours: () => aiSdkRun('ours'),
    'native-approval': () => aiSdkRun('native-approval'),
    'ours-gated': () => aiSdkRun('ours-gated'),
  });
  const agents = await interleaved({
    native: () => openAIAgentsRun('native'),
    ours: () => openAIAgentsRun('ours'),
    'native-approval': () => openAIAgentsRun('native-approval'),
    'ours-gated': () => openAIAgentsRun('ours-gated'),
  });
  const langChain = await interleaved({
    native: () => langChainRun('native'),
    ours: () => langChainRun('ours'),
  });
  const columns = [
    'Framework',
    'Tool',
    'CPU µs / call (median)',
    'CPU min–max',
    'wall µs / call',
    '× baseline (paired medians)',
    'Measured over',
  ];
  const tools: BenchSection = {
    title: 'Interop: a tool call through our adapters vs the framework’s native tool',
    columns,
    rows: [
      ...rowsFor(
        'AI SDK',
        aiSdk,
        {
          native: { label: '`tool()` + zod' },
          ours: { label: '`toAiSdkTools` (no policy)', baseline: 'native' },
          'native-approval': { label: '`tool()` + zod + `needsApproval`' },
          'ours-gated': {
            label: '`toAiSdkTools` + PermissionPolicy (asks via the AI SDK)',
            baseline: 'native-approval',
          },
        },
        interopCalls,
        '`generateText`, mock model',
      ),
      ...rowsFor(
        'OpenAI Agents',
        agents,
        {
          native: { label: '`tool()` + zod' },
          ours: { label: '`toOpenAIAgentsTools` (no policy)', baseline: 'native' },
          'native-approval': { label: '`tool()` + zod + `needsApproval`' },
          'ours-gated': {
            label: '`toOpenAIAgentsTools` + PermissionPolicy (asks via the SDK)',
            baseline: 'native-approval',
          },
        },
        interopCalls,
        '`run()`, scripted Model',
      ),
      ...rowsFor(
        'LangChain',
        langChain,
        {
          native: { label: '`tool()` + zod' },
          ours: { label: '`toLangChainTools`', baseline: 'native' },
        },
        interopCalls,
        '`tool.invoke(toolCall)`',
      ),
    ],
    notes: [
      `One run = ${interopCalls} calls of a no-op tool (the loop-overhead workload: 8 calls a turn, distinct ~58-character argument JSON, typed arguments checked), then the final answer; ${runs} runs per row after ${warmup} warm-ups, the rows of one framework interleaved in one process. Load average at the start: ${load} on ${os.cpus().length} CPUs.`,
      'Per call = run ÷ calls, so each framework’s own per-turn cost is in both rows. CPU = this process’s user + system time, the steadier figure on a shared machine; × baseline = median over rounds of our run ÷ the baseline’s run of the same round. Goal ≤ 1.1×.',
      'A row with a PermissionPolicy is compared with a native tool that has a `needsApproval` function: that is the framework’s own per-call approval check, which any tool that may ask pays. Ours also validates after `prepareArguments`, evaluates the rules, and runs hooks, locks, the timeout and the abort wiring.',
    ],
  };

  const loopRows: string[][] = [];
  for (const workload of ['tool-calls', 'prose'] as const) {
    const server = await startChatServer(workload);
    try {
      const { native, aiSdk: overAiSdk, aiSdkOpenAI: overOpenAI } = providersAt(server.url);
      const model = wireModel(server.url);
      const over = describeWorkload(workload);
      const paired = await interleaved({
        native: () => loopRun(native, '@agent/providers-openai', workload),
        'ai-sdk': () => loopRun(overAiSdk, 'fromAiSdkModel', workload),
      });
      loopRows.push(
        ...rowsFor(
          'our loop',
          paired,
          {
            native: { label: '`@agent/providers-openai` (Chat Completions)' },
            'ai-sdk': {
              label: '`fromAiSdkModel(@ai-sdk/openai-compatible)`',
              baseline: 'native',
            },
          },
          // Per 1,000th of a run in µs: ms per run.
          1000,
          over,
        ),
      );
      // The same server through `@ai-sdk/openai` (what a user of OpenAI itself picks), paired
      // with native runs of its own, as the reference row below (a third side in the same
      // rounds shifts a pair's figures).
      const openAIPair = await interleaved({
        native: () => loopRun(native, '@agent/providers-openai', workload),
        'ai-sdk-openai': () => loopRun(overOpenAI, 'fromAiSdkModel(@ai-sdk/openai)', workload),
      });
      loopRows.push(
        ...rowsFor(
          'our loop',
          openAIPair,
          {
            'ai-sdk-openai': {
              label: '`fromAiSdkModel(@ai-sdk/openai)` (its `.chat()` model)',
              baseline: 'native',
            },
          },
          1000,
          over,
        ),
      );
      // The reference row is paired with native runs of its own: run in the same rounds as the
      // pair above, the AI SDK loop's garbage shifted the pair's own figures.
      const reference = await interleaved({
        native: () => loopRun(native, '@agent/providers-openai', workload),
        'stream-text': () => streamTextRun(model, workload),
      });
      loopRows.push(
        ...rowsFor(
          'AI SDK (reference)',
          reference,
          {
            'stream-text': {
              label: '`streamText` + `tool()` over the same `@ai-sdk/openai-compatible` model',
              baseline: 'native',
            },
          },
          1000,
          over,
        ),
      );
    } finally {
      await server.close();
    }
  }
  const loop: BenchSection = {
    title: 'Interop: our loop over an AI SDK model vs over our native provider (same wire server)',
    columns: columns.map((column) => column.replace('µs / call', 'ms / run')),
    rows: loopRows,
    notes: [
      `Both sides get the same bytes in the same SSE chunks and send the same request bodies (checked: equal lengths per turn). tool-calls = ${wireTurns} turns of 8 streamed tool calls (arguments in 16-character deltas) and a one-chunk answer; prose = ${proseTurns} turns of ${proseTokens.perTurn} one-token text deltas and one call (arguments in 4-character deltas), then a ${proseTokens.answer}-token answer. The server is in this process (127.0.0.1): its CPU is in every row. ${runs} interleaved runs after ${warmup} warm-ups. Goal ≤ 1.1×.`,
      'CPU counts every thread of the process: V8 collects garbage and compiles on helper threads, and the AI SDK provider allocates more per chunk. The `@ai-sdk/openai` row (our loop over that package’s `.chat()` model: what a user of OpenAI itself picks) and the reference row (the AI SDK’s own loop over the same `@ai-sdk/openai-compatible` model, its native zod tool) are each paired with native runs of their own.',
    ],
  };
  return [tools, loop];
}
