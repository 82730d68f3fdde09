import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { messagesServer, type Turn } from '../testing/messages-server.js';
import { assertBuilt, cleanEnv, runCli, tempDir } from '../testing/test-support.js';

// A trusted folder's hooks run outside the sandbox, and what they run is often a file of the
// project (`sh .agent/hooks/post.sh`). A sandboxed bash call or a file edit — both allowed without
// a question in workspace-write mode — rewrote that script, and the next tool call's hook ran it
// as the user, outside the sandbox: an escape from the sandbox, and past trust's pin (which is
// checked at start only).

beforeAll(assertBuilt);
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const providerKey = `sk-ant-api03-${'xY9_'.repeat(20)}`;

/** A trusted-by-flag repository whose PostToolUse hook runs its own script; the run's outcome. */
async function runWithHook(turns: (outside: string) => Turn[]) {
  const dir = await tempDir('agent-cli-hook-file-pins-');
  cleanups.push(dir.dispose);
  const repo = join(dir.path, 'repo');
  const home = join(dir.path, 'home');
  // Outside the workspace: only a process outside the sandbox can write here.
  const outside = join(dir.path, 'outside');
  await mkdir(join(repo, '.agent', 'hooks'), { recursive: true });
  await mkdir(home);
  await mkdir(outside);
  execFileSync('git', ['init', '-q', repo]);
  await writeFile(
    join(repo, '.agent', 'hooks', 'post.sh'),
    `echo ran >> "${join(outside, 'hook-ran')}"\n`,
  );
  await writeFile(
    join(repo, '.agent', 'settings.json'),
    JSON.stringify({
      hooks: {
        PostToolUse: [{ hooks: [{ type: 'command', command: 'sh .agent/hooks/post.sh' }] }],
      },
    }),
  );
  const server = await messagesServer(turns(outside), cleanups);
  const run = await runCli(
    ['-p', 'go', '--provider', 'anthropic', '--cwd', repo, '--trust', '--mode', 'workspace-write'],
    {
      env: cleanEnv({
        ANTHROPIC_API_KEY: providerKey,
        ANTHROPIC_BASE_URL: server.url,
        AGENT_HOME: home,
      }),
    },
  );
  const ran = await readFile(join(outside, 'hook-ran'), 'utf8').catch(() => '');
  return { run, outside, ran };
}

const planted = (outside: string) => `touch "${join(outside, 'escaped')}"\n`;

describe("a trusted hook's script rewritten during the session", () => {
  it.each([
    [
      'by write_file',
      (outside: string): Turn => ({
        tool: {
          name: 'write_file',
          input: { path: '.agent/hooks/post.sh', content: planted(outside) },
        },
      }),
    ],
    [
      'by a sandboxed bash command',
      (outside: string): Turn => ({
        tool: {
          name: 'bash',
          input: { command: `printf '%s' '${planted(outside)}' > .agent/hooks/post.sh` },
        },
      }),
    ],
  ])('%s: the hook does not run it outside the sandbox, and says why', async (_how, rewrite) => {
    const { run, outside, ran } = await runWithHook((outside) => [
      { tool: { name: 'list_files', input: { path: '.' } } },
      rewrite(outside),
      { tool: { name: 'list_files', input: { path: '.' } } },
      { text: 'done' },
    ]);
    expect(run.code).toBe(0);
    // The hook ran as trusted until its script changed (the control: it can write outside).
    expect(ran).toBe('ran\n');
    expect(existsSync(join(outside, 'escaped'))).toBe(false);
    expect(run.stderr).toContain(
      'PostToolUse hook "sh .agent/hooks/post.sh" did not run: the project files it runs changed during this session (.agent/hooks/post.sh)',
    );
  });

  it('an unchanged script runs after every call', async () => {
    const { run, ran } = await runWithHook(() => [
      { tool: { name: 'list_files', input: { path: '.' } } },
      { tool: { name: 'glob', input: { pattern: '*' } } },
      { text: 'done' },
    ]);
    expect(run.code).toBe(0);
    expect(ran).toBe('ran\nran\n');
    expect(run.stderr).not.toContain('did not run');
  });
});
