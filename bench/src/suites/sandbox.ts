/**
 * Bench suite for `@agent/sandbox`: what the OS sandbox costs per bash call — `true`, and
 * `git status` in this repository — sandboxed (bubblewrap) against unsandboxed, in one run, with
 * the bash tool doing both. Target: ≤ +15 ms per call.
 */
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ToolContext } from '@agent/core';
import { bubblewrapProblem } from '@agent/sandbox';
import { createBashTool } from '@agent/tools-builtin';
import { type BenchSection, positiveInt } from '../types.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const calls = positiveInt(process.env.BENCH_SANDBOX_CALLS, 30);

function context(): ToolContext {
  return {
    toolCallId: 'bench',
    toolName: 'bench',
    signal: new AbortController().signal,
    onUpdate: () => {},
    onProgress: () => {},
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

async function timeCalls(
  tool: ReturnType<typeof createBashTool>,
  command: string,
): Promise<number> {
  const times: number[] = [];
  // One warm-up call (page cache, the probe), then the measured ones, one at a time.
  await tool.execute({ command }, context());
  for (let index = 0; index < calls; index++) {
    const started = performance.now();
    await tool.execute({ command }, context());
    times.push(performance.now() - started);
  }
  return median(times);
}

export async function run(): Promise<BenchSection> {
  const problem = bubblewrapProblem();
  if (problem !== undefined) throw new Error(problem);
  const plain = createBashTool({ cwd: repoRoot, sandbox: 'off' });
  const boxed = createBashTool({ cwd: repoRoot, sandbox: { mode: 'required' } });
  const rows: string[][] = [];
  for (const command of ['true', 'git status --short']) {
    // Interleaved so both see the same machine load.
    const off = await timeCalls(plain, command);
    const on = await timeCalls(boxed, command);
    rows.push([
      `bash: ${command}`,
      `${off.toFixed(1)} ms`,
      `${on.toFixed(1)} ms`,
      `+${(on - off).toFixed(1)} ms`,
      `${(on / off).toFixed(2)}×`,
    ]);
  }
  return {
    title: 'OS sandbox (bubblewrap) — cost per bash call',
    columns: ['Task', 'Unsandboxed (median)', 'Sandboxed (median)', 'Overhead', 'Ratio'],
    rows,
    notes: [
      `${calls} calls each after one warm-up, the same bash tool options but \`sandbox\`; target ≤ +15 ms per call.`,
      'Sandboxed: read-only root and /proc/sys, the workspace bound writable, private /tmp and /dev/shm, secrets and .env files above the workspace hidden, no network, new pid/ipc/uts/user/cgroup namespaces, every capability dropped, nested user namespaces disabled, the seccomp filter (no Unix sockets) loaded through /bin/sh.',
    ],
  };
}
