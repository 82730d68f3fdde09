// Node writes a diagnostic report (a JSON file, in the working directory unless
// --report-directory says otherwise) on a signal, a fatal error or an uncaught exception when
// NODE_OPTIONS asks (--report-on-signal, --report-on-fatalerror, --report-uncaught-exception).
// The report lists the process's environment — the heap's, where the CLI keeps its keys after the
// credential handover — so the user's API keys landed in that file; with --report-on-signal any
// process of the user could have one written (SIGUSR2). Here an unsandboxed command sends the signal.
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, runCli, tempDir, writeScript } from '../testing/test-support.js';

beforeAll(assertBuilt);
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const providerKey = `sk-ant-api03-${'Rt6_'.repeat(20)}`;
const serviceToken = 'reportletters';

describe.runIf(process.platform === 'linux')('a Node diagnostic report of the CLI', () => {
  it('holds none of its credentials', async () => {
    const dir = await tempDir('agent-cli-report-secrets-');
    cleanups.push(dir.dispose);
    const workspace = join(dir.path, 'ws');
    const reports = join(dir.path, 'reports');
    await mkdir(workspace);
    await mkdir(reports);
    // Up the ancestors to the CLI, signal it, and wait (bounded) for its report to be written.
    const command = [
      'p=$$',
      'while [ "$p" -gt 1 ]; do',
      "  if tr '\\0' '\\n' < /proc/$p/cmdline | sed -n 2p | grep -q 'dist/main.js$'; then kill -USR2 $p; break; fi",
      "  p=$(awk '{print $4}' /proc/$p/stat)",
      'done',
      `for i in $(seq 200); do ls '${reports}' | grep -q json && break; sleep 0.05; done`,
      `ls '${reports}'`,
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
          NODE_OPTIONS: `--report-on-signal --report-directory=${reports}`,
        }),
      },
    );
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
