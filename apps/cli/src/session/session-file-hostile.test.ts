// Session files a crash, a full disk or another program left behind, resumed by the real CLI:
// each gets an error naming the file and the cause, and the file is left exactly as it was.
import { execFileSync } from 'node:child_process';
import { chmod, mkdir, readdir, readFile, stat, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, runCli, tempDir, writeScript } from '../testing/test-support.js';

const cleanups: (() => Promise<void>)[] = [];
beforeAll(() => assertBuilt());
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup() {
  const dir = await tempDir('agent-cli-hostile-file-');
  cleanups.push(dir.dispose);
  const home = join(dir.path, 'home');
  const workspace = join(dir.path, 'ws');
  await mkdir(workspace, { recursive: true });
  await mkdir(home);
  const script = await writeScript(dir.path, [{ text: 'answered' }]);
  return { dir: dir.path, home, workspace, script, env: cleanEnv({ AGENT_HOME: home }) };
}

const user = (content: string) => JSON.stringify({ role: 'user', content, timestamp: 1 });
const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

describe('--resume of a hostile session file', () => {
  it.each([
    [
      'a tool result nested 100,000 deep',
      `{"messages":[${user('hi')},{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"read_file","arguments":"{}"}],"stopReason":"toolUse","timestamp":2},{"role":"toolResult","toolCallId":"c","toolName":"read_file","content":[{"type":"json","value":${nested(100_000)}}],"isError":false,"timestamp":3}]}`,
      /nests deeper than 1000 levels \(at messages\.2\.content\.0\.value\.0…\)/,
    ],
    [
      'an unknown field nested 100,000 deep',
      `{"messages":[{"role":"user","content":"hi","timestamp":1,"extra":${nested(100_000)}}]}`,
      /nests deeper than 1000 levels \(at messages\.0\.extra\.0\.0\.0…\)/,
    ],
    [
      'grants nested 5,000 deep',
      `{"messages":[${user('hi')}],"grants":${nested(5000)}}`,
      /nests deeper than 1000 levels \(at grants\.0\.0\.0\.0\.0…\)/,
    ],
    [
      'a file cut off mid-line (a crash while another program wrote it)',
      `{"messages":[${user('hi')},${user('there')}]}`.slice(0, 50),
      /it is not valid JSON \(line 1, column \d+: it ends before the object does/,
    ],
    ['an empty file', '', /: it is empty\n/],
    [
      'a tool result whose call is not before it (every provider refuses it)',
      `{"messages":[${user('hi')},{"role":"toolResult","toolCallId":"c9","toolName":"read_file","content":[{"type":"text","text":"x"}],"isError":false,"timestamp":2}]}`,
      /message 2: a tool result for the call "c9", which the assistant message before it did not make/,
    ],
    [
      'valid JSON of the wrong shape',
      `{"messages":[${user('hi')},{"role":"toolResult","content":"x"}]}`,
      /message 2: toolCallId is missing/,
    ],
  ])('%s: a clear error, the file untouched', async (_name, text, problem) => {
    const { workspace, script, env, dir } = await setup();
    const path = join(dir, 'session.json');
    await writeFile(path, text);
    const run = await runCli(
      ['-p', 'go on', '--resume', path, '--save', path, '--scripted', script, '--cwd', workspace],
      { env },
    );
    expect(run.code).not.toBe(0);
    // Named: the file, and what is wrong with it.
    expect(run.stderr).toMatch(
      new RegExp(`(Cannot read the conversation|The conversation) ${path}`),
    );
    expect(run.stderr).toMatch(problem);
    expect(run.stderr).not.toContain('Maximum call stack');
    expect(await readFile(path, 'utf8')).toBe(text);
  });

  it('a session file made read-only: the run is said not saved, and the file is kept as it was', async () => {
    const { workspace, script, env, dir } = await setup();
    const path = join(dir, 'session.json');
    const text = `{"messages":[${user('hi')}]}`;
    await writeFile(path, text);
    await chmod(path, 0o444);
    const run = await runCli(
      ['-p', 'go on', '--resume', path, '--save', path, '--scripted', script, '--cwd', workspace],
      { env },
    );
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain(
      `Cannot save the conversation to ${path}: the file is read-only (mode 444)`,
    );
    expect(await readFile(path, 'utf8')).toBe(text);
    expect((await stat(path)).mode & 0o777).toBe(0o444);
  });

  it('a file past the size a session may have (256 MiB): refused before it is read', async () => {
    const { workspace, script, env, dir } = await setup();
    const path = join(dir, 'session.json');
    await writeFile(path, '');
    await truncate(path, 300 * 1024 * 1024);
    const run = await runCli(
      ['-p', 'go on', '--resume', path, '--scripted', script, '--cwd', workspace],
      {
        env,
      },
    );
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('is 314572800 bytes: a session file holds at most 268435456');
  });
});

const isRoot = process.getuid?.() === 0;

describe('a full disk under $AGENT_HOME', () => {
  // Mounting a small tmpfs needs root; CI runs as root.
  it.skipIf(!isRoot && process.env.CI !== 'true')(
    'the run fails naming the disk, and the session saved before it is left whole',
    async () => {
      const { workspace, script, env, dir } = await setup();
      const disk = join(dir, 'disk');
      await mkdir(disk);
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', disk]);
      cleanups.push(async () => {
        execFileSync('umount', [disk]);
      });
      const home = join(disk, 'home');
      const fullEnv = { ...env, AGENT_HOME: home };
      const first = await runCli(['-p', 'start', '--scripted', script, '--cwd', workspace], {
        env: fullEnv,
      });
      expect(first.code, first.stderr).toBe(0);
      const folder = join(home, 'sessions', (await readdir(join(home, 'sessions')))[0] ?? '');
      const [name] = await readdir(folder);
      const saved = await readFile(join(folder, name ?? ''), 'utf8');
      // What is left of the disk, filled.
      await writeFile(join(disk, 'filler'), Buffer.alloc(1024 * 1024)).catch(() => undefined);
      const long = await writeScript(dir, [{ text: 'y'.repeat(200_000) }], 'long.json');
      const run = await runCli(
        ['-p', 'more', '--continue', '--scripted', long, '--cwd', workspace],
        {
          env: fullEnv,
        },
      );
      expect(run.code).not.toBe(0);
      expect(run.stderr).toMatch(/ENOSPC|no space left/i);
      expect(await readdir(folder)).toEqual([name]);
      expect(await readFile(join(folder, name ?? ''), 'utf8')).toBe(saved);
    },
  );
});
