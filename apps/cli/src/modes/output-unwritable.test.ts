// An output the CLI cannot write: `agent -p … > answer.txt` on a full disk (the kernel's /dev/full
// says ENOSPC to every write, as a full file system does). Before, Node's 'error' event on stdout
// was rethrown: "agent: uncaught error: Error: ENOSPC…" and a stack, and `agent --help > file`
// said nothing and exited 0. Now: one line naming stdout, the reason and what to do, exit 1, the
// run stopped as for SIGTERM (the conversation kept, for --continue).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, openSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, cliPath, tempDir, writeScript } from '../testing/test-support.js';

const cleanups: (() => Promise<void>)[] = [];
beforeAll(() => assertBuilt());
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** Runs the built CLI with stdout on /dev/full; stderr is collected. */
async function runToFullDisk(
  args: readonly string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stderr: string }> {
  const full = openSync('/dev/full', 'w');
  try {
    const child = spawn(process.execPath, [cliPath, ...args], {
      env,
      stdio: ['ignore', full, 'pipe'],
    });
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const [code] = (await once(child, 'close')) as [number | null];
    return { code, stderr };
  } finally {
    closeSync(full);
  }
}

async function scratch(): Promise<{ dir: string; env: Record<string, string> }> {
  const dir = await tempDir('agent-output-unwritable-');
  cleanups.push(dir.dispose);
  return { dir: dir.path, env: cleanEnv({ AGENT_HOME: join(dir.path, 'home') }) };
}

function expectOneLine(stderr: string): void {
  expect(stderr).toContain(
    'agent: cannot write the output (stdout): no space left on the device (ENOSPC), so agent stopped. Free some space, or send the output elsewhere',
  );
  expect(stderr).not.toContain('uncaught error');
  expect(stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
}

/** The text of every session file kept under the home. */
async function keptSessions(env: Record<string, string>): Promise<string> {
  const root = join(env.AGENT_HOME ?? '', 'sessions');
  let text = '';
  for (const folder of await readdir(root))
    for (const file of await readdir(join(root, folder)))
      text += await readFile(join(root, folder, file), 'utf8');
  return text;
}

describe('stdout on a full disk', () => {
  it.each([['text'], ['json'], ['stream-json']])(
    '-p --output-format %s: one line, exit 1, the conversation kept',
    async (format) => {
      const { dir, env } = await scratch();
      const script = await writeScript(dir, [
        { toolCalls: [{ name: 'list_files', arguments: {} }] },
        { text: 'The answer.' },
      ]);
      const run = await runToFullDisk(
        [
          '--scripted',
          script,
          '--cwd',
          dir,
          '-p',
          'remember-this-prompt',
          '--output-format',
          format,
        ],
        env,
      );
      expectOneLine(run.stderr);
      expect(run.code).toBe(1);
      expect(await keptSessions(env)).toContain('remember-this-prompt');
    },
    60_000,
  );

  it('agent --version (answered before the rest loads): said, exit 1 (was Node’s stack)', async () => {
    const { env } = await scratch();
    const run = await runToFullDisk(['--version'], env);
    expectOneLine(run.stderr);
    expect(run.stderr).not.toContain('node:events');
    expect(run.code).toBe(1);
  }, 60_000);

  it('agent --help: said, exit 1 (was 0 with nothing written)', async () => {
    const { env } = await scratch();
    const run = await runToFullDisk(['--help'], env);
    expectOneLine(run.stderr);
    expect(run.code).toBe(1);
  }, 60_000);
});
