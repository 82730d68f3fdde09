/**
 * Child-process entry of the loop-overhead suite: runs ONE implementation in a fresh V8 (so JIT
 * state and heap of one framework never affect another) and prints a JSON {@link WorkerReport}
 * as its last stdout line. Needs `--expose-gc`.
 *
 * Usage: node --expose-gc --import tsx src/loop-overhead/worker.ts <ours|pi|ai-stream|ai-generate>
 */
import type { Implementation, ImplementationId } from './implementation.js';
import { implementationIds } from './implementation.js';
import { probe, totalCalls } from './workload.js';

/** What the worker prints (one JSON line). */
export interface WorkerReport {
  id: ImplementationId;
  /** Wall time of each timed overhead run, in ms. */
  overheadMs: number[];
  /** heapUsed after a forced GC, before the memory run, in bytes. */
  baselineHeapBytes: number;
  /** Highest heapUsed seen during the memory run (sampled at every tool call and at the end), in bytes. */
  peakHeapBytes: number;
  /** heapUsed after the memory run and a forced GC, conversation still referenced, minus baseline. */
  retainedHeapBytes: number;
  /** Wall time of each timed parallel run, in ms. */
  parallelMs: number[];
}

const gc = (globalThis as { gc?: () => void }).gc;

function count(name: string, fallback: number): number {
  const value = Number(process.env[name]);
  return Number.isInteger(value) && value > 0 ? value : fallback;
}

async function load(id: ImplementationId): Promise<Implementation> {
  switch (id) {
    case 'ours':
      return (await import('./ours.js')).ours;
    case 'pi':
      return (await import('./pi.js')).pi;
    case 'ai-stream':
      return (await import('./ai-sdk.js')).aiStream;
    case 'ai-generate':
      return (await import('./ai-sdk.js')).aiGenerate;
    default: {
      const unknown: never = id;
      return unknown;
    }
  }
}

function collect(): void {
  // Two passes: the first may only queue finalizers / weak-ref clearing.
  gc?.();
  gc?.();
}

/** Kept objects live here until measured, so V8 cannot collect them early. */
const keep: unknown[] = [];

// Each phase runs in its own async function and returns plain numbers: a suspended async
// frame keeps its registers alive, so a result awaited in main() could stay reachable and skew
// the heap baseline.
async function warmUp(implementation: Implementation, runs: number): Promise<void> {
  for (let index = 0; index < runs; index++) {
    probe.reset();
    await implementation.runOverhead();
  }
}

async function timeRuns(run: () => Promise<unknown>, runs: number): Promise<number[]> {
  const times: number[] = [];
  for (let index = 0; index < runs; index++) {
    probe.reset();
    if (process.env.BENCH_GC_BETWEEN === '1') collect();
    const started = performance.now();
    await run();
    times.push(performance.now() - started);
  }
  return times;
}

async function measureHeap(
  implementation: Implementation,
): Promise<Pick<WorkerReport, 'baselineHeapBytes' | 'peakHeapBytes' | 'retainedHeapBytes'>> {
  // Let streams and timers of earlier runs settle so nothing of theirs is still reachable.
  await new Promise((resolve) => setTimeout(resolve, 10));
  collect();
  const baselineHeapBytes = process.memoryUsage().heapUsed;
  probe.reset(true);
  keep.push(await implementation.runOverhead());
  probe.sample();
  const peakHeapBytes = probe.peakHeapUsed;
  if (probe.calls !== totalCalls) throw new Error('memory run executed the wrong number of calls');
  collect();
  const retainedHeapBytes = process.memoryUsage().heapUsed - baselineHeapBytes;
  keep.length = 0;
  return { baselineHeapBytes, peakHeapBytes, retainedHeapBytes };
}

async function main(): Promise<void> {
  const id = process.argv[2];
  if (!implementationIds.includes(id as ImplementationId))
    throw new Error(`usage: worker.ts <${implementationIds.join('|')}>, got ${String(id)}`);
  if (gc === undefined) throw new Error('run the worker with --expose-gc');
  const implementation = await load(id as ImplementationId);
  const reps = count('BENCH_REPS', 10);

  // Enough warm-up runs for every framework's code to reach its optimised tier (our loop kept
  // getting faster until ~10 runs; pi's after ~3): the table compares steady states.
  await warmUp(implementation, count('BENCH_WARMUP', 15));
  const overheadMs = await timeRuns(() => implementation.runOverhead(), reps);
  const heap = await measureHeap(implementation);
  await timeRuns(() => implementation.runParallel(), 1);
  const parallelMs = await timeRuns(
    () => implementation.runParallel(),
    count('BENCH_PARALLEL_REPS', 3),
  );

  const report: WorkerReport = { id: id as ImplementationId, overheadMs, ...heap, parallelMs };
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(
      `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  },
);
