/**
 * Bench suite for the load issue: many calls at once in one process, real tools, the real loop.
 * For 1, 10, 100 and 500 concurrent calls (one agent per call, each a scripted turn with one
 * call): throughput, p50/p99 latency (tool-execution-start → -end), and how many results lost
 * their output — for a bash `echo` and for a no-op tool (the loop's cost alone).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Agent, type AnyAgentTool, defineTool } from '@agent/core';
import { createScriptedProvider } from '@agent/core/testing';
import { bubblewrapProblem } from '@agent/sandbox';
import { BackgroundTasks, createBashTool } from '@agent/tools-builtin';
import { z } from 'zod';
import type { BenchSection } from '../types.js';

const levels = (process.env.BENCH_LOAD_LEVELS ?? '1,10,100,500')
  .split(',')
  .map((value) => Number(value))
  .filter((value) => Number.isInteger(value) && value > 0);

function percentile(sorted: number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? Number.NaN;
}

async function level(
  tool: AnyAgentTool,
  concurrency: number,
  argumentsFor: (index: number) => Record<string, unknown>,
  expected: (index: number) => string,
): Promise<string[]> {
  const latencies: number[] = [];
  let lost = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, index) => {
      let began = 0;
      const agent = new Agent({
        provider: createScriptedProvider([
          { toolCalls: [{ name: tool.name, arguments: argumentsFor(index) }] },
          { text: 'done' },
        ]),
        model: 'scripted',
        tools: [tool],
        onEvent: (event) => {
          if (event.type === 'tool-execution-start') began = performance.now();
          if (event.type === 'tool-execution-end') latencies.push(performance.now() - began);
        },
      });
      const result = await agent.run('go').result;
      const message = result.messages.find((entry) => entry.role === 'toolResult');
      const text =
        message?.role === 'toolResult'
          ? message.content.map((part) => (part.type === 'text' ? part.text : '')).join('')
          : '';
      if (!text.includes(expected(index))) lost += 1;
    }),
  );
  const wall = performance.now() - started;
  latencies.sort((a, b) => a - b);
  return [
    String(concurrency),
    `${((concurrency / wall) * 1000).toFixed(0)}/s`,
    `${percentile(latencies, 0.5).toFixed(1)} ms`,
    `${percentile(latencies, 0.99).toFixed(1)} ms`,
    `${lost} of ${concurrency}`,
  ];
}

export async function run(): Promise<BenchSection[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-load-'));
  const background = new BackgroundTasks();
  try {
    // Unsandboxed: this measures the output path and the loop; the sandbox suite has its cost.
    const bash = createBashTool({
      cwd: dir,
      spillDir: path.join(dir, 'spill'),
      sandbox: 'off',
      backgroundTasks: background,
    });
    const noop = defineTool({
      name: 'noop',
      description: 'returns its id',
      input: z.object({ id: z.number() }),
      execute: async ({ id }) => `ok-${id}`,
    });
    // The same calls in the session's long-lived sandbox (the default where bubblewrap works).
    const sandboxProblem = bubblewrapProblem();
    const boxed =
      sandboxProblem === undefined
        ? createBashTool({
            cwd: dir,
            spillDir: path.join(dir, 'spill'),
            sandbox: { mode: 'required' },
            backgroundTasks: background,
          })
        : undefined;
    const bashRows: string[][] = [];
    const boxedRows: string[][] = [];
    const noopRows: string[][] = [];
    for (const concurrency of levels) {
      bashRows.push(
        await level(
          bash as AnyAgentTool,
          concurrency,
          (index) => ({ command: `echo out-${index}` }),
          (index) => `out-${index}\n`,
        ),
      );
      if (boxed !== undefined) {
        boxedRows.push(
          await level(
            boxed as AnyAgentTool,
            concurrency,
            (index) => ({ command: `echo out-${index}` }),
            (index) => `out-${index}\n`,
          ),
        );
      }
      noopRows.push(
        await level(
          noop,
          concurrency,
          (index) => ({ id: index }),
          (index) => `ok-${index}`,
        ),
      );
    }
    const columns = ['Concurrent calls', 'Throughput', 'p50 latency', 'p99 latency', 'Lost output'];
    return [
      {
        title: 'Load — bash `echo` calls at once (real tool, real loop, one agent per call)',
        columns,
        rows: bashRows,
        notes: ['Every result must carry its own output: "Lost output" counts those that do not.'],
      },
      {
        title:
          'Load — sandboxed bash `echo` calls at once (the session’s long-lived bubblewrap sandbox)',
        columns,
        rows:
          boxed === undefined ? [['not available', sandboxProblem ?? '', '', '', '']] : boxedRows,
        notes: [
          'One sandbox for the session; a helper inside it forks each command (issue 32). Target at 100: ≥ 200 calls/s, p50 ≤ 500 ms.',
        ],
      },
      {
        title: 'Load — a no-op tool at once (the loop alone)',
        columns,
        rows: noopRows,
      },
    ];
  } finally {
    await background.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
