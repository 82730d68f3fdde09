/**
 * Cold start of the `agent` CLI against pi's CLI (`@mariozechner/pi-coding-agent`): a fresh
 * process each time for `--version`, and for one non-interactive turn (`-p`) answered by the same
 * local OpenAI-compatible server (chat completions over SSE on 127.0.0.1), each CLI with an empty
 * home directory. Median wall time of the process, spawn to exit. Goal: ≤ 0.2× pi.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SSE_HEADERS, startWireServer } from '@agent/tooling-wire-server';
import { type BenchSection, positiveInt } from '../types.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const agentCli = path.join(repoRoot, 'apps/cli/dist/main.js');
const runs = positiveInt(process.env.BENCH_CLI_RUNS, 10);

function piCli(): string {
  // The package exports neither its main nor its package.json: its bin from bench's node_modules.
  const cli = path.join(repoRoot, 'bench/node_modules/@mariozechner/pi-coding-agent/dist/cli.js');
  if (!existsSync(cli)) throw new Error('@mariozechner/pi-coding-agent is not installed');
  return cli;
}

/** One chat-completions answer streamed as SSE: "ok", then the usage. */
function chatAnswer(): string[] {
  const chunk = (delta: Record<string, unknown>, finish: string | null) =>
    `data: ${JSON.stringify({
      id: 'c1',
      object: 'chat.completion.chunk',
      created: 0,
      model: 'bench-model',
      choices: [{ index: 0, delta, finish_reason: finish }],
    })}\n\n`;
  return [
    chunk({ role: 'assistant', content: 'ok' }, null),
    chunk({}, 'stop'),
    `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 0, model: 'bench-model', choices: [], usage: { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 } })}\n\n`,
    'data: [DONE]\n\n',
  ];
}

interface Timed {
  /** Wall time, spawn to exit. */
  ms: number;
  /** CPU time of the process (user + system, all its threads), from the shell's `times`. */
  cpuMs: number;
  code: number | null;
  output: string;
}

/** `1m2.345s` (POSIX `times`) in milliseconds. */
function clockMs(value: string): number {
  const match = /^(\d+)m([\d.]+)s$/.exec(value);
  return match === null ? Number.NaN : (Number(match[1]) * 60 + Number(match[2])) * 1000;
}

/**
 * One process, timed. It runs under `sh -c '"$@"; times'`: the shell's `times` prints the CPU
 * time of its finished children on its last line (the shell itself adds ~1 ms of wall time).
 */
function spawnTimed(args: string[], env: Record<string, string>, cwd: string): Promise<Timed> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(
      '/bin/sh',
      ['-c', '"$@"; status=$?; times >&2; exit $status', 'sh', process.execPath, ...args],
      { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    let errors = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      errors += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = performance.now() - started;
      const lines = errors.trimEnd().split('\n');
      const [user = '', system = ''] = (lines.pop() ?? '').trim().split(/\s+/);
      resolve({
        ms,
        cpuMs: clockMs(user) + clockMs(system),
        code,
        output: output + lines.join('\n'),
      });
    });
  });
}

const medianOf = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

interface Contender {
  args: string[];
  env: Record<string, string>;
  expect: string;
}

/**
 * Medians of wall and CPU time for each contender, their runs interleaved (A B A B …) so a load
 * change on the shared machine hits both alike. One warm-up round first (page cache, compile
 * caches), not counted.
 */
async function interleaved(
  contenders: Contender[],
  cwd: string,
): Promise<{ ms: number; cpuMs: number }[]> {
  const times = contenders.map(() => ({ ms: [] as number[], cpuMs: [] as number[] }));
  for (let round = 0; round <= runs; round++) {
    for (const [index, contender] of contenders.entries()) {
      const result = await spawnTimed(contender.args, contender.env, cwd);
      if (result.code !== 0 || !result.output.includes(contender.expect))
        throw new Error(
          `${contender.args.join(' ')} failed (${result.code}): ${result.output.slice(0, 300)}`,
        );
      if (round === 0) continue;
      times[index]?.ms.push(result.ms);
      times[index]?.cpuMs.push(result.cpuMs);
    }
  }
  return times.map((entry) => ({ ms: medianOf(entry.ms), cpuMs: medianOf(entry.cpuMs) }));
}

export async function run(): Promise<BenchSection> {
  if (!existsSync(agentCli)) throw new Error('apps/cli is not built (pnpm build)');
  const pi = piCli();
  const dir = await mkdtemp(path.join(tmpdir(), 'bench-cli-'));
  const server = await startWireServer(() => ({ headers: SSE_HEADERS, body: chatAnswer() }));
  try {
    const home = path.join(dir, 'home');
    const workspace = path.join(dir, 'ws');
    await mkdir(path.join(home, '.pi', 'agent'), { recursive: true });
    await mkdir(workspace, { recursive: true });
    await writeFile(
      path.join(home, '.pi', 'agent', 'models.json'),
      JSON.stringify({
        providers: {
          bench: {
            baseUrl: `${server.url}/v1`,
            api: 'openai-completions',
            apiKey: 'bench',
            models: [{ id: 'bench-model' }],
          },
        },
      }),
    );
    const base: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      HOME: home,
      AGENT_HOME: path.join(home, '.agent'),
      NO_COLOR: '1',
      PI_OFFLINE: '1',
    };
    const rows: string[][] = [];
    const row = (name: string, [ours, theirs]: { ms: number; cpuMs: number }[] = []): string[] => {
      if (ours === undefined || theirs === undefined) throw new Error('missing measurement');
      return [
        name,
        `${ours.ms.toFixed(0)} ms (CPU ${ours.cpuMs.toFixed(0)} ms)`,
        `${theirs.ms.toFixed(0)} ms (CPU ${theirs.cpuMs.toFixed(0)} ms)`,
        `${(ours.ms / theirs.ms).toFixed(2)}× (CPU ${(ours.cpuMs / theirs.cpuMs).toFixed(2)}×)`,
      ];
    };
    rows.push(
      row(
        '--version',
        await interleaved(
          [
            { args: [agentCli, '--version'], env: base, expect: 'agent' },
            { args: [pi, '--version'], env: base, expect: '.' },
          ],
          workspace,
        ),
      ),
    );
    rows.push(
      row(
        'one-turn -p (local OpenAI-compatible server)',
        await interleaved(
          [
            {
              args: [
                agentCli,
                '-p',
                'say ok',
                '--base-url',
                `${server.url}/v1`,
                '--model',
                'bench-model',
                '--cwd',
                workspace,
                '--sandbox',
                'off',
              ],
              env: { ...base, OPENAI_API_KEY: 'bench' },
              expect: 'ok',
            },
            {
              args: [
                pi,
                '-p',
                'say ok',
                '--provider',
                'bench',
                '--model',
                'bench-model',
                '--no-session',
              ],
              env: base,
              expect: 'ok',
            },
          ],
          workspace,
        ),
      ),
    );
    return {
      title: 'CLI cold start: agent vs pi (pi-coding-agent)',
      columns: ['Process', 'agent', 'pi', 'agent / pi'],
      rows,
      notes: [
        `Median of ${runs} fresh processes per CLI (BENCH_CLI_RUNS), the two CLIs' runs interleaved, after one warm-up round; spawn to exit (wall) and the process's CPU time (user + system); empty home directories at the start (the agent CLI keeps its compile cache in its home, as it would for a user); goal ≤ 0.2× pi.`,
      ],
    };
  } finally {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  }
}
