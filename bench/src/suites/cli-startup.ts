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

function spawnTimed(
  args: string[],
  env: Record<string, string>,
  cwd: string,
): Promise<{ ms: number; code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, args, {
      cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ ms: performance.now() - started, code, output }));
  });
}

async function median(
  args: string[],
  env: Record<string, string>,
  cwd: string,
  expect: string,
): Promise<number> {
  const times: number[] = [];
  // One warm-up (page cache), then the measured runs.
  for (let index = 0; index <= runs; index++) {
    const result = await spawnTimed(args, env, cwd);
    if (result.code !== 0 || !result.output.includes(expect))
      throw new Error(`${args.join(' ')} failed (${result.code}): ${result.output.slice(0, 300)}`);
    if (index > 0) times.push(result.ms);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)] ?? Number.NaN;
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
    const row = (name: string, ours: number, theirs: number) => [
      name,
      `${ours.toFixed(0)} ms`,
      `${theirs.toFixed(0)} ms`,
      `${(ours / theirs).toFixed(2)}×`,
    ];
    const oursVersion = await median([agentCli, '--version'], base, workspace, 'agent');
    const piVersion = await median([pi, '--version'], base, workspace, '.');
    rows.push(row('--version', oursVersion, piVersion));
    const oursTurn = await median(
      [
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
      { ...base, OPENAI_API_KEY: 'bench' },
      workspace,
      'ok',
    );
    const piTurn = await median(
      [pi, '-p', 'say ok', '--provider', 'bench', '--model', 'bench-model', '--no-session'],
      base,
      workspace,
      'ok',
    );
    rows.push(row('one-turn -p (local OpenAI-compatible server)', oursTurn, piTurn));
    return {
      title: 'CLI cold start: agent vs pi (pi-coding-agent)',
      columns: ['Process', 'agent', 'pi', 'agent / pi'],
      rows,
      notes: [
        `Median of ${runs} fresh processes after one warm-up (BENCH_CLI_RUNS), spawn to exit, empty home directories; goal ≤ 0.2× pi.`,
      ],
    };
  } finally {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  }
}
