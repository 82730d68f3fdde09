/**
 * Bench suite for durable runs (issue 28): what the run journal costs per tool call — none, in
 * memory, the embedded file journal (fsync'd JSON Lines, and without the sync), node:sqlite (the
 * measured alternative), and Restate (a real restate-server, one worker) — and how many prompts
 * one Restate server runs with 1, 2 and 4 worker processes behind a stream-balancing proxy.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, type AnyAgentTool, MemoryRunJournal, type RunJournal } from '@agent/core';
import { FileRunJournal } from '@agent/core/file-journal';
import { createScriptedProvider, type ScriptedStep } from '@agent/core/testing';
// Test support of @agent/restate (a real server on free ports, a balancer for its workers).
import { startH2Balancer } from '../../../packages/restate/src/test-support/h2-balancer.js';
import {
  startRestateServer,
  startWorker,
  type Worker,
} from '../../../packages/restate/src/test-support/restate-server.js';
import { SqliteRunJournal } from '../durable/sqlite-run-journal.js';
import { type BenchSection, positiveInt } from '../types.js';

const repetitions = positiveInt(process.env.BENCH_DURABLE_REPS, 3);
const workerScript = fileURLToPath(
  new URL('../fixtures/restate-bench-worker.mjs', import.meta.url),
);

const noop: AnyAgentTool = {
  name: 'work',
  description: 'does nothing',
  parameters: { type: 'object', properties: {} },
  execute: async () => ({ content: [{ type: 'text', text: 'ok' }] }),
};

function script(turns: number, calls: number): ScriptedStep[] {
  return [
    ...Array.from({ length: turns }, (_, turn) => ({
      toolCalls: Array.from({ length: calls }, (_, index) => ({
        id: `t${turn}c${index}`,
        name: 'work',
        arguments: {},
      })),
    })),
    { text: 'done' },
  ];
}

/** Wall time of one run of `turns` × `calls` no-op calls, in ms. */
async function timeRun(
  journal: RunJournal | undefined,
  turns: number,
  calls: number,
): Promise<number> {
  const agent = new Agent({
    provider: createScriptedProvider(script(turns, calls)),
    model: 'scripted',
    tools: [noop],
    loopDetection: false,
    maxTurns: turns + 2,
    ...(journal === undefined ? {} : { journal }),
  });
  const started = performance.now();
  const result = await agent.run('go').result;
  const elapsed = performance.now() - started;
  if (result.stopReason !== 'completed') throw new Error(`run ended ${result.stopReason}`);
  return elapsed;
}

/** `+0.240 ms` / `−0.065 ms` (a negative difference is noise on a loaded machine, shown as such). */
function signed(ms: number, digits: number): string {
  return `${ms < 0 ? '−' : '+'}${Math.abs(ms).toFixed(digits)} ms`;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

const shapes = [
  { label: '25 turns × 8 parallel calls', turns: 25, calls: 8 },
  { label: '50 turns × 1 call', turns: 50, calls: 1 },
] as const;

async function embedded(dir: string): Promise<BenchSection> {
  const journals: [
    string,
    () => RunJournal | undefined | Promise<RunJournal>,
    () => Promise<void>,
  ][] = [];
  let open: { close(): unknown } | undefined;
  const closeOpen = async () => {
    await open?.close();
    open = undefined;
  };
  let count = 0;
  const file = (sync: boolean) => async () => {
    const journal = await FileRunJournal.open(join(dir, `run-${count++}.jsonl`), { sync });
    open = journal;
    return journal;
  };
  journals.push(['none', () => undefined, async () => {}]);
  journals.push(['MemoryRunJournal', () => new MemoryRunJournal(), async () => {}]);
  journals.push(['FileRunJournal (fdatasync)', file(true), closeOpen]);
  journals.push(['FileRunJournal (sync: false)', file(false), closeOpen]);
  journals.push([
    'node:sqlite (WAL, synchronous=FULL)',
    () => {
      const journal = new SqliteRunJournal(join(dir, `run-${count++}.db`));
      open = journal;
      return journal;
    },
    closeOpen,
  ]);

  const rows: string[][] = [];
  const baseline = new Map<string, number>();
  for (const [name, make, close] of journals) {
    const row = [name];
    for (const shape of shapes) {
      // One warm-up run, then the median of the timed ones.
      const warm = await make();
      await timeRun(warm, 2, shape.calls);
      await close();
      const times: number[] = [];
      for (let index = 0; index < repetitions; index++) {
        const journal = await make();
        times.push(await timeRun(journal, shape.turns, shape.calls));
        await close();
      }
      const perCall = median(times) / (shape.turns * shape.calls);
      if (name === 'none') baseline.set(shape.label, perCall);
      const extra = perCall - (baseline.get(shape.label) ?? perCall);
      row.push(`${perCall.toFixed(3)} ms`, name === 'none' ? '—' : signed(extra, 3));
    }
    rows.push(row);
  }
  return {
    title: 'Durable runs: journal cost per tool call (in process)',
    columns: ['journal', ...shapes.flatMap((shape) => [`${shape.label}: per call`, 'vs none'])],
    rows,
    notes: [
      `Median of ${repetitions} runs (BENCH_DURABLE_REPS) after a warm-up, no-op tool, scripted model; per call = run wall time / calls, so a turn's model-response step is shared by its calls.`,
      'Steps written per call: its start (before it runs) and its result; per turn: the model response. The file journal writes the records of one tick with one write and one fdatasync (a parallel batch starts with one sync); node:sqlite commits (and syncs) each statement on its own, blocking the event loop while it does.',
      `Journal files on ${tmpdir()} (the machine's disk; a tmpfs would make every sync free).`,
    ],
  };
}

async function withRestate<T>(
  env: Record<string, string>,
  workers: number,
  body: (call: (session: string) => Promise<void>) => Promise<T>,
): Promise<T> {
  const server = await startRestateServer();
  const balancer = await startH2Balancer();
  const started: Worker[] = [];
  try {
    for (let index = 0; index < workers; index++) {
      const worker = await startWorker(workerScript, env);
      started.push(worker);
      balancer.upstreams.push(worker.port);
    }
    await server.register(balancer.url);
    const call = async (session: string) => {
      const response = await fetch(`${server.ingressUrl}/agent/${session}/prompt`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ prompt: 'go' }),
      });
      const outcome = (await response.json()) as { stopReason?: string };
      if (!response.ok || outcome.stopReason !== 'completed')
        throw new Error(`prompt of ${session}: ${response.status} ${JSON.stringify(outcome)}`);
    };
    return await body(call);
  } finally {
    for (const worker of started) {
      worker.process.kill('SIGKILL');
      await worker.exited;
    }
    await balancer.close();
    await server.stop();
  }
}

async function restateOverhead(): Promise<string[][]> {
  const rows: string[][] = [];
  for (const shape of shapes) {
    const calls = shape.turns * shape.calls;
    const inProcess: number[] = [];
    for (let index = 0; index < repetitions; index++)
      inProcess.push(await timeRun(undefined, shape.turns, shape.calls));
    const times = await withRestate(
      { BENCH_TURNS: String(shape.turns), BENCH_CALLS: String(shape.calls), BENCH_BUSY_MS: '0' },
      1,
      async (call) => {
        await call(`warm-${shape.turns}`);
        const measured: number[] = [];
        for (let index = 0; index < repetitions; index++) {
          const started = performance.now();
          await call(`overhead-${shape.turns}-${index}`);
          measured.push(performance.now() - started);
        }
        return measured;
      },
    );
    const perCall = median(times) / calls;
    const base = median(inProcess) / calls;
    // Steps per prompt: run-input, a model response per turn and the answer, one marker per batch, one per call, run-end.
    const steps = 2 + (shape.turns + 1) + shape.turns + calls;
    rows.push([
      `Restate, ${shape.label}`,
      `${median(times).toFixed(0)} ms`,
      `${perCall.toFixed(2)} ms`,
      signed(perCall - base, 2),
      `${(median(times) / steps).toFixed(2)} ms`,
    ]);
  }
  return rows;
}

async function restateThroughput(): Promise<string[][]> {
  const sessions = positiveInt(process.env.BENCH_RESTATE_SESSIONS, 24);
  const rows: string[][] = [];
  for (const workers of [1, 2, 4]) {
    const elapsed = await withRestate(
      { BENCH_TURNS: '2', BENCH_CALLS: '4', BENCH_BUSY_MS: '5' },
      workers,
      async (call) => {
        await call('warm');
        const started = performance.now();
        await Promise.all(Array.from({ length: sessions }, (_, index) => call(`load-${index}`)));
        return performance.now() - started;
      },
    );
    rows.push([
      String(workers),
      String(sessions),
      `${(elapsed / 1000).toFixed(2)} s`,
      (sessions / (elapsed / 1000)).toFixed(1),
      ((sessions * 8) / (elapsed / 1000)).toFixed(0),
    ]);
  }
  return rows;
}

export async function run(): Promise<BenchSection[]> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-durable-'));
  try {
    const sections = [await embedded(dir)];
    sections.push({
      title: 'Durable runs: Restate (one restate-server, one worker process)',
      columns: [
        'prompt',
        'prompt wall time',
        'per call',
        'vs in process, no journal',
        'per journaled step',
      ],
      rows: await restateOverhead(),
      notes: [
        `Median of ${repetitions} prompts after a warm-up prompt, each a new session: ingress → restate-server → HTTP/2 balancer → worker, every step a ctx.run acknowledged by the server (its RocksDB and log on the machine's disk) before the loop moves on.`,
        'Steps per prompt: run-input, one model response per turn (and the answer), one marker per batch, one per call, run-end, plus the object state read and write.',
      ],
    });
    sections.push({
      title: 'Durable runs: one Restate server, 1 / 2 / 4 worker processes',
      columns: ['workers', 'sessions at once', 'wall time', 'prompts/s', 'tool calls/s'],
      rows: await restateThroughput(),
      notes: [
        'Each prompt: 2 turns × 4 parallel calls of a tool that keeps the CPU busy 5 ms, then the answer (4 model steps, 8 tool steps). All sessions started together; wall time until the last completes.',
        'On this 2-core machine the server, the balancer and the workers share the same two cores, so more workers cannot add CPU: the figures show what the journal round trips allow, not what more machines would.',
      ],
    });
    return sections;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
