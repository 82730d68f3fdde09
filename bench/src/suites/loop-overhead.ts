/**
 * Loop overhead per tool call and parallel tool latency: @agent/core against pi-agent-core and
 * the Vercel AI SDK, each in fresh child processes (see ../loop-overhead/worker.ts).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ImplementationId } from '../loop-overhead/implementation.js';
import { implementationIds } from '../loop-overhead/implementation.js';
import type { WorkerReport } from '../loop-overhead/worker.js';
import {
  callsPerTurn,
  chunkSize,
  meanArgumentChars,
  parallelCalls,
  parallelWaitMs,
  totalCalls,
  turns,
} from '../loop-overhead/workload.js';
import type { BenchSection } from '../types.js';

const benchDir = fileURLToPath(new URL('../../', import.meta.url));
const workerPath = fileURLToPath(new URL('../loop-overhead/worker.ts', import.meta.url));

const labels: Record<ImplementationId, { label: string; packageName: string }> = {
  ours: { label: '@agent/core (ours)', packageName: '@agent/core' },
  pi: { label: 'pi-agent-core', packageName: '@mariozechner/pi-agent-core' },
  'ai-stream': { label: 'AI SDK streamText', packageName: 'ai' },
  'ai-generate': { label: 'AI SDK generateText', packageName: 'ai' },
};

/** Child processes per implementation; their samples are pooled [3; env BENCH_ROUNDS]. */
const rounds = positive(process.env.BENCH_ROUNDS, 3);
/** A worker process gets this long [300 s]. */
const workerTimeoutMs = 300_000;

function positive(value: string | undefined, fallback: number): number {
  const parsed = Number(value);
  return Number.isInteger(parsed) && parsed > 0 ? parsed : fallback;
}

function packageVersion(name: string): string {
  try {
    const file = path.join(benchDir, 'node_modules', name, 'package.json');
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as { version?: unknown };
    return typeof parsed.version === 'string' ? parsed.version : '?';
  } catch {
    return 'not installed';
  }
}

function runWorker(id: ImplementationId): Promise<WorkerReport> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--expose-gc', '--import', import.meta.resolve('tsx'), workerPath, id],
      {
        cwd: benchDir,
        env: { ...process.env, BENCH_REPS: process.env.BENCH_REPS ?? '10' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), workerTimeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const last = stdout.trim().split('\n').at(-1) ?? '';
      if (code === 0 && last.startsWith('{')) {
        resolve(JSON.parse(last) as WorkerReport);
        return;
      }
      const reason =
        stderr
          .trim()
          .split('\n')
          .find((line) => line.trim() !== '') ?? '';
      reject(
        new Error(
          signal === 'SIGKILL'
            ? `worker timed out after ${workerTimeoutMs / 1000} s`
            : `worker exited with ${code ?? signal}: ${reason}`,
        ),
      );
    });
  });
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  if (sorted.length === 0) return Number.NaN;
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(1);

interface Outcome {
  id: ImplementationId;
  reports: WorkerReport[];
  error: string | undefined;
}

/** Runs the suite: every implementation `rounds` times, interleaved, one child process at a time. */
export async function run(): Promise<BenchSection[]> {
  const outcomes = new Map<ImplementationId, Outcome>(
    implementationIds.map((id) => [id, { id, reports: [], error: undefined }]),
  );
  for (let round = 0; round < rounds; round++) {
    for (const id of implementationIds) {
      const outcome = outcomes.get(id) as Outcome;
      if (outcome.error !== undefined) continue;
      try {
        outcome.reports.push(await runWorker(id));
      } catch (error) {
        outcome.error = error instanceof Error ? error.message : String(error);
      }
    }
  }

  const perCall = (outcome: Outcome) =>
    outcome.reports.flatMap((report) => report.overheadMs.map((ms) => (ms * 1000) / totalCalls));
  const ours = outcomes.get('ours') as Outcome;
  const oursMedian = ours.error === undefined ? median(perCall(ours)) : Number.NaN;

  const overheadRows: string[][] = [];
  const parallelRows: string[][] = [];
  for (const outcome of outcomes.values()) {
    const { label, packageName } = labels[outcome.id];
    const version = packageVersion(packageName);
    if (outcome.error !== undefined) {
      const text = `not available: ${outcome.error}`;
      overheadRows.push([label, version, text, '', '', '', '']);
      parallelRows.push([label, text, '', '']);
      continue;
    }
    const samples = perCall(outcome);
    const value = median(samples);
    overheadRows.push([
      label,
      version,
      value.toFixed(2),
      `${Math.min(...samples).toFixed(2)}–${Math.max(...samples).toFixed(2)}`,
      Number.isFinite(oursMedian) ? `${(value / oursMedian).toFixed(2)}×` : 'n/a',
      mb(median(outcome.reports.map((report) => report.peakHeapBytes - report.baselineHeapBytes))),
      mb(median(outcome.reports.map((report) => report.retainedHeapBytes))),
    ]);
    const wall = outcome.reports.flatMap((report) => report.parallelMs);
    parallelRows.push([
      label,
      median(wall).toFixed(1),
      `${(median(wall) / parallelWaitMs).toFixed(2)}×`,
      `${Math.min(...wall).toFixed(1)}–${Math.max(...wall).toFixed(1)}`,
    ]);
  }

  const reps = positive(process.env.BENCH_REPS, 10);
  return [
    {
      title: `Loop overhead per tool call (${turns} turns × ${callsPerTurn} no-op calls + a final answer)`,
      columns: [
        'Implementation',
        'Version',
        'µs / tool call (median)',
        'min–max',
        '× ours',
        'Peak heap above baseline (MB)',
        'Retained after run (MB)',
      ],
      rows: overheadRows,
      notes: [
        `Wall time of a whole run divided by its ${totalCalls} tool calls, so per-turn costs (201 model calls, stream events, history) are included. Median over ${rounds} fresh child processes × ${reps} timed runs each, after 15 warm-up runs per process (BENCH_WARMUP; with 3, the JIT was still optimising the first timed runs of some frameworks). No forced GC between timed runs (steady state): forcing a full GC before each run made every framework 1.5–2× slower here, an artefact of the forced GC (BENCH_GC_BETWEEN=1 shows it).`,
        `Same script everywhere: each call's argument JSON (${meanArgumentChars} characters on average, distinct per call) is streamed in ${chunkSize}-character deltas, then parsed, validated against {path: string, line: integer, flag: boolean}, executed (a no-op that checks it got typed arguments and counts itself; every run is checked to execute all ${totalCalls} calls and end with the final text), and turned into a tool-result message the next request carries.`,
        "Ours: `Agent` + `createScriptedProvider(…, { recordRequests: false })`, tools from `defineTool` (zod). pi: `Agent` with a scripted `streamFn` that emits pi's own event protocol; as pi's providers do, it parses the argument JSON in the stream (`parseStreamingJson`, once per call, not after every delta as pi's real providers do), and pi validates it with TypeBox (`validateToolArguments`). AI SDK: `MockLanguageModelV4` from `ai/test` (its per-call option recording emptied on each call), tools from `tool()` with the same zod schema, `stopWhen: isStepCount(201)`; the SDK parses and validates the raw JSON input. streamText gets the argument deltas; generateText gets whole responses, so it skips streaming.",
        "Heap: `process.memoryUsage().heapUsed` with `--expose-gc`, in one extra run per process: baseline after a forced GC; peak = highest value sampled at every tool call and at the end, minus the baseline (includes garbage not yet collected, so it depends on when V8 collects); retained = after the run and a forced GC, with the run's conversation object still referenced, minus the baseline. Median over the processes.",
        "AI SDK streamText: a CPU profile shows most of its time in Node's WHATWG stream machinery (TransformStream/ReadableStream pull and backpressure steps per stream part), not in the harness.",
        'Wall times on a shared machine are noisy; compare the median column and treat differences under ~10% as noise.',
      ],
    },
    {
      title: `Parallel tool latency (${parallelCalls} calls of a ${parallelWaitMs} ms tool in one turn)`,
      columns: [
        'Implementation',
        'Wall time (median ms)',
        `Wall / ${parallelWaitMs} ms`,
        'min–max (ms)',
      ],
      rows: parallelRows,
      notes: [
        `One turn with ${parallelCalls} calls of a tool that waits ${parallelWaitMs} ms (setTimeout), then a final answer; wall time of the whole run. 1.00× means every call ran concurrently and the loop added nothing; ${parallelCalls}× would be fully sequential. Each framework's default (parallel) execution mode.`,
      ],
    },
  ];
}
