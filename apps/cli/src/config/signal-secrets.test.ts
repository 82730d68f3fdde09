// What a signal from any process of the user (an unsandboxed MCP server, hook or command) made
// the CLI hand out. Here an unsandboxed command stands in for it: it walks up its ancestors to
// the CLI, signals it, and waits (bounded) for what the signal would start.
// - SIGUSR1 started Node's inspector on 127.0.0.1, without authentication: any user of the
//   machine could then connect and evaluate `process.env.OPENAI_API_KEY` in the CLI — or any
//   code, as the CLI's user. Yama's ptrace_scope 1 keeps a child from reading its parent's
//   memory; the inspector went around it.
// - SIGUSR2 with NODE_OPTIONS' --report-on-signal wrote a diagnostic report that lists the
//   environment: the heap's, where the CLI keeps its keys after the credential handover.
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  assertBuilt,
  type CliRun,
  cleanEnv,
  runCli,
  tempDir,
  writeScript,
} from '../testing/test-support.js';

beforeAll(assertBuilt);
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const providerKey = `sk-ant-api03-${'Rt6_'.repeat(20)}`;
const serviceToken = 'reportletters';

/** Runs the CLI with a command that sends `signal` to it, then runs `waitFor` (a bounded wait). */
async function signalTheCli(options: {
  signal: 'USR1' | 'USR2';
  waitFor: string;
  nodeOptions: string;
}): Promise<{ run: CliRun; dir: string }> {
  const dir = await tempDir('agent-cli-signal-secrets-');
  cleanups.push(dir.dispose);
  const workspace = join(dir.path, 'ws');
  await mkdir(workspace);
  const command = [
    'p=$$',
    'while [ "$p" -gt 1 ]; do',
    `  if tr '\\0' '\\n' < /proc/$p/cmdline | sed -n 2p | grep -q 'dist/main.js$'; then kill -${options.signal} $p; break; fi`,
    "  p=$(awk '{print $4}' /proc/$p/stat)",
    'done',
    options.waitFor,
  ].join('\n');
  const script = await writeScript(dir.path, [
    { toolCalls: [{ name: 'bash', arguments: { command } }] },
    { text: 'done' },
  ]);
  const run = await runCli(
    ['-p', 'go', '--scripted', script, '--allow', 'bash', '--sandbox', 'off'],
    {
      cwd: workspace,
      env: cleanEnv({
        AGENT_HOME: join(dir.path, 'home'),
        ANTHROPIC_API_KEY: providerKey,
        REPORT_SERVICE_TOKEN: serviceToken,
        NODE_OPTIONS: options.nodeOptions,
      }),
    },
  );
  return { run, dir: dir.path };
}

describe.runIf(process.platform === 'linux')('a signal from a process of the user', () => {
  it('SIGUSR1 starts no inspector in the CLI', async () => {
    // Port 0: a free port, so that no other Node's 9229 is in the way; Node says which on stderr.
    const { run } = await signalTheCli({
      signal: 'USR1',
      nodeOptions: '--inspect-port=0',
      waitFor:
        'for i in $(seq 20); do ss -ltnp 2>/dev/null | grep -q "pid=$p," && break; sleep 0.05; done',
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('done');
    expect(run.stderr).not.toContain('Debugger listening');
  });

  it('SIGUSR2 with --report-on-signal writes a report without the credentials', async () => {
    const dir = await tempDir('agent-cli-reports-');
    cleanups.push(dir.dispose);
    const reports = dir.path;
    const { run } = await signalTheCli({
      signal: 'USR2',
      nodeOptions: `--report-on-signal --report-directory=${reports}`,
      waitFor: `for i in $(seq 200); do ls '${reports}' | grep -q json && break; sleep 0.05; done`,
    });
    expect(run.code, run.stderr).toBe(0);
    const written = (await readdir(reports)).filter((name) => name.endsWith('.json'));
    expect(written).toHaveLength(1);
    const report = await readFile(join(reports, written[0] ?? ''), 'utf8');
    // A real report of the CLI, without the keys.
    expect(report).toContain('dist/main.js');
    expect(report).not.toContain(providerKey);
    expect(report).not.toContain(serviceToken);
  });
});
