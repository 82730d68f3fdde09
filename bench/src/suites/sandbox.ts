/**
 * Bench suite for `@agent/sandbox`: what the OS sandbox costs per bash call — `true`, `echo`,
 * 1 MB of output, and `git status` in this repository — sandboxed (bubblewrap) against
 * unsandboxed, in one run, with the bash tool doing both — a new sandbox per call, and the
 * session's long-lived one (the default). Target: ≤ +3 ms per call.
 */
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ToolContext } from '@agent/core';
import { bubblewrapProblem } from '@agent/sandbox';
import { BackgroundTasks, createBashTool } from '@agent/tools-builtin';
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
  const perCallSession = new BackgroundTasks();
  const longLivedSession = new BackgroundTasks();
  const plain = createBashTool({ cwd: repoRoot, sandbox: 'off' });
  const perCall = createBashTool({
    cwd: repoRoot,
    sandbox: { mode: 'required' },
    reuseSandbox: false,
    backgroundTasks: perCallSession,
  });
  const longLived = createBashTool({
    cwd: repoRoot,
    sandbox: { mode: 'required' },
    backgroundTasks: longLivedSession,
  });
  const rows: string[][] = [];
  try {
    // `echo` and 1 MB of output: what a command's Landlock domain (entered through perl between
    // fork and exec, see @agent/sandbox's README) costs on small and large output.
    for (const command of ['true', 'echo hi', 'yes | head -c 1048576', 'git status --short']) {
      // Interleaved so all three see the same machine load.
      const off = await timeCalls(plain, command);
      const each = await timeCalls(perCall, command);
      const reused = await timeCalls(longLived, command);
      rows.push([
        `bash: ${command}`,
        `${off.toFixed(1)} ms`,
        `${each.toFixed(1)} ms (+${(each - off).toFixed(1)})`,
        `${reused.toFixed(1)} ms (+${(reused - off).toFixed(1)})`,
        `${(reused / off).toFixed(2)}×`,
      ]);
    }
  } finally {
    await perCallSession.close();
    await longLivedSession.close();
  }
  return {
    title: 'OS sandbox (bubblewrap) — cost per bash call',
    columns: [
      'Task',
      'Unsandboxed (median)',
      'New sandbox per call',
      'Long-lived sandbox (default)',
      'Ratio (long-lived)',
    ],
    rows,
    notes: [
      `${calls} calls each after one warm-up, the same bash tool options but \`sandbox\` / \`reuseSandbox\`; target ≤ +3 ms per call (issue 32).`,
      'New sandbox per call: `reuseSandbox: false`, a bwrap per command. Long-lived: one sandbox per session, a helper inside it forks each command (output through FIFOs, requests over its stdin), each command entering a Landlock domain of its own through perl where the kernel scopes them (ABI ≥ 6).',
      'Sandboxed: read-only root and /proc/sys, the workspace bound writable, private /tmp and /dev/shm, secrets and .env files above the workspace hidden, no network, new pid/ipc/uts/user/cgroup namespaces, every capability dropped, nested user namespaces disabled, the seccomp filter (no Unix sockets) loaded through /bin/sh.',
    ],
  };
}
