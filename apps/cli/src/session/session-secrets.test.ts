// A credential of the CLI's environment that reaches a session — pasted in the prompt, in a file a
// tool read, in the model's answer — is never written down in clear: not in the run's journal
// while the run goes on (a crash leaves it on disk), not in the session file after.
import { spawn } from 'node:child_process';
import { existsSync, watch } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, cliPath, tempDir, writeScript } from '../testing/test-support.js';

const cleanups: (() => Promise<void>)[] = [];
beforeAll(() => assertBuilt());
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const secret = 'sk-proj-Zq8x7W6v5U4t3S2r1Q0pOnMlKjIh';

/** Resolves once `path` exists (woken by its folder's events). */
function untilExists(path: string): Promise<void> {
  return new Promise((resolve) => {
    const check = () => {
      if (!existsSync(path)) return;
      watcher.close();
      resolve();
    };
    const watcher = watch(join(path, '..'), check);
    check();
  });
}

async function filesUnder(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true }))
    if (entry.isFile()) found.push(join(entry.parentPath, entry.name));
  return found;
}

describe('a credential of the environment in a session', () => {
  it('is redacted in the journal mid-run and in the session file, wherever it came from', async () => {
    const dir = await tempDir('agent-cli-secrets-');
    cleanups.push(dir.dispose);
    const home = join(dir.path, 'home');
    const workspace = join(dir.path, 'ws');
    await mkdir(workspace, { recursive: true });
    await writeFile(join(workspace, 'creds.txt'), `token=${secret}\n`);
    const script = await writeScript(dir.path, [
      {
        toolCalls: [
          { id: 'r', name: 'read_file', arguments: { path: 'creds.txt' } },
          {
            id: 'w',
            name: 'bash',
            arguments: { command: 'touch started; while [ ! -e go ]; do sleep 0.05; done' },
          },
        ],
      },
      { text: `the token is ${secret}` },
    ]);
    const child = spawn(
      process.execPath,
      [
        cliPath,
        '-p',
        `my key is ${secret}, use it`,
        '--scripted',
        script,
        '--cwd',
        workspace,
        '--mode',
        'full-access',
      ],
      {
        env: cleanEnv({ AGENT_HOME: home, MY_SERVICE_API_KEY: secret }),
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    cleanups.push(async () => {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    });

    // Mid-run: the prompt and the file's text are journaled, redacted.
    await untilExists(join(workspace, 'started'));
    const [journal] = await readdir(join(home, 'journals'));
    const midRun = await readFile(join(home, 'journals', journal ?? ''), 'utf8');
    expect(midRun).not.toContain(secret);
    expect(midRun.match(/\[redacted:MY_SERVICE_API_KEY\]/g)?.length).toBe(2);

    await writeFile(join(workspace, 'go'), '');
    expect(await exited).toBe(0);
    expect(output).not.toContain(secret);
    // Nothing the CLI keeps holds it: session file, journal, checkpoints.
    for (const file of await filesUnder(home))
      expect(await readFile(file, 'utf8'), file).not.toContain(secret);
    const sessions = (await filesUnder(join(home, 'sessions'))).filter((file) =>
      file.endsWith('.json'),
    );
    expect(sessions).toHaveLength(1);
    const saved = await readFile(sessions[0] ?? '', 'utf8');
    // The prompt, the file read and the answer.
    expect(saved.match(/\[redacted:MY_SERVICE_API_KEY\]/g)?.length).toBe(3);
  });
});
