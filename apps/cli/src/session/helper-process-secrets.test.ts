// The CLI keeps its keys out of its own environ block (credential-handover.ts): any process of the
// same user reads `/proc/<pid>/environ`, an unsandboxed MCP or language server polling /proc
// among them. The programs it runs for itself — ripgrep for the search tool, git, bubblewrap's
// probes, mkfifo — are such processes too, and were started with the whole `process.env`: the
// key was in their environ for as long as they ran (a search of a large tree: seconds).
// Each program here is a stand-in found first on PATH that copies its own environ block and runs
// the real one.
import { execFileSync } from 'node:child_process';
import { chmod, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, runCli, tempDir, writeScript } from '../testing/test-support.js';

beforeAll(assertBuilt);
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const providerKey = `sk-ant-api03-${'Qw7_'.repeat(20)}`;
// Short and letters only: withheld for its name alone.
const serviceToken = 'hunterhunter';
const watched = ['rg', 'git', 'bwrap', 'mkfifo'];

function realProgram(name: string): string | undefined {
  try {
    return execFileSync('/bin/sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim();
  } catch {
    return undefined;
  }
}

describe.runIf(process.platform === 'linux')('programs the CLI runs for itself', () => {
  it('get no credential of its environment in their environ (search, a sandboxed bash call)', async () => {
    const dir = await tempDir('agent-cli-helper-secrets-');
    cleanups.push(dir.dispose);
    const workspace = join(dir.path, 'ws');
    const bin = join(dir.path, 'bin');
    const seen = join(dir.path, 'seen');
    await mkdir(workspace);
    await mkdir(bin);
    await mkdir(seen);
    execFileSync('git', ['init', '-q', workspace]);
    await writeFile(join(workspace, 'notes.txt'), 'needle\n');
    const found: string[] = [];
    for (const name of watched) {
      const real = realProgram(name);
      if (real === undefined) continue;
      found.push(name);
      await writeFile(
        join(bin, name),
        `#!/bin/sh\ncat /proc/$$/environ > '${seen}/${name}.'$$\nexec '${real}' "$@"\n`,
      );
      await chmod(join(bin, name), 0o755);
    }
    expect(found).toContain('rg');
    const script = await writeScript(dir.path, [
      { toolCalls: [{ name: 'search', arguments: { pattern: 'needle' } }] },
      { toolCalls: [{ name: 'bash', arguments: { command: 'echo ran' } }] },
      { text: 'done' },
    ]);
    const env = cleanEnv({
      AGENT_HOME: join(dir.path, 'home'),
      ANTHROPIC_API_KEY: providerKey,
      BILLING_SERVICE_TOKEN: serviceToken,
    });
    env.PATH = [bin, env.PATH ?? '/usr/bin:/bin'].join(delimiter);
    const run = await runCli(['-p', 'go', '--scripted', script, '--allow', 'bash'], {
      cwd: workspace,
      env,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('done');
    const copies = await readdir(seen);
    // The stand-ins ran: ripgrep for the search, git for the hooks folder.
    expect(copies.some((name) => name.startsWith('rg.'))).toBe(true);
    expect(copies.some((name) => name.startsWith('git.'))).toBe(true);
    const holding: string[] = [];
    for (const copy of copies) {
      const environ = await readFile(join(seen, copy), 'utf8');
      if (environ.includes(providerKey) || environ.includes(serviceToken)) holding.push(copy);
    }
    expect(holding.map((copy) => copy.split('.')[0])).toEqual([]);
  });
});
