// Piped input without end or bound: `agent -p "…" < /dev/zero`, `yes | agent -p`, a 20 MB log.
// Before, the CLI read it all into memory — /dev/zero until it died (std::bad_alloc under a
// memory limit, the OOM killer without one) — and sent what fit. Now past 16 MiB it stops
// reading, says what to send instead and exits 2, having sent nothing; a big log under the
// limit still goes whole. Bytes that are not UTF-8 (a Windows-1252 log) were turned into � without
// a word; now stderr says so, with the conversion.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, openSync } from 'node:fs';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, cliPath, tempDir, writeScript } from '../testing/test-support.js';
import { stdinLimitBytes } from './piped-stdin.js';

const cleanups: (() => Promise<void>)[] = [];
beforeAll(() => assertBuilt());
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** Runs the built CLI with stdin read from `path` (a file, or /dev/zero). */
async function runWithStdinFrom(
  path: string,
  args: readonly string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const input = openSync(path, 'r');
  try {
    const child = spawn(process.execPath, [cliPath, ...args], {
      env,
      stdio: [input, 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const [code] = (await once(child, 'close')) as [number | null];
    return { code, stdout, stderr };
  } finally {
    closeSync(input);
  }
}

async function scratch(): Promise<{ dir: string; env: Record<string, string> }> {
  const dir = await tempDir('agent-piped-stdin-');
  cleanups.push(dir.dispose);
  return { dir: dir.path, env: cleanEnv({ AGENT_HOME: join(dir.path, 'home') }) };
}

/** The session files kept under the home. */
async function sessionFiles(env: Record<string, string>): Promise<string[]> {
  const root = join(env.AGENT_HOME ?? '', 'sessions');
  const folders = await readdir(root).catch(() => []);
  const files: string[] = [];
  for (const folder of folders) files.push(...(await readdir(join(root, folder))));
  return files;
}

/** `agent -p why?` (a scripted model answering "answered") with `content` piped in from a file. */
async function pipeIn(content: string | Buffer, name = 'input.log') {
  const { dir, env } = await scratch();
  const script = await writeScript(dir, [{ text: 'answered' }]);
  const input = join(dir, name);
  await writeFile(input, content);
  return runWithStdinFrom(input, ['--scripted', script, '--cwd', dir, '-p', 'why?'], env);
}

const refusal = `agent: stdin holds more than 16 MiB, more than a model reads in one prompt (it was not sent)`;

describe('piped input past what a prompt takes', () => {
  it.each([
    ['-p', 'why?'],
    ['-p', '-'],
  ])(
    'stdin /dev/zero (agent %s %s): refused at 16 MiB, exit 2, nothing sent or kept',
    async (...args) => {
      const { dir, env } = await scratch();
      const script = await writeScript(dir, [{ text: 'answered' }]);
      const run = await runWithStdinFrom(
        '/dev/zero',
        ['--scripted', script, '--cwd', dir, ...args],
        env,
      );
      expect(run.stderr).toContain(refusal);
      expect(run.stderr).toContain('name the file in the prompt and let the agent read it');
      expect(run.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      // No session was kept for it.
      expect(await sessionFiles(env)).toEqual([]);
    },
    120_000,
  );

  it('a file one byte over is refused; one at the limit is the prompt', async () => {
    const refused = await pipeIn('x'.repeat(stdinLimitBytes + 1));
    expect(refused.stderr).toContain(refusal);
    expect(refused.code).toBe(2);
    const taken = await pipeIn('x'.repeat(stdinLimitBytes - 'why?\n\n'.length));
    expect(taken.stderr).not.toContain('stdin holds');
    expect(taken.code).toBe(0);
    expect(taken.stdout).toBe('answered\n');
  }, 120_000);
});

describe('--input-format stream-json lines past what a message takes', () => {
  // readline holds a line whole until its end: `cat /dev/zero | agent --input-format stream-json`
  // grew the CLI's memory until it died. Now the lines before the long one run, then exit 2.
  const streamArgs = (script: string, dir: string) => [
    '--scripted',
    script,
    '--cwd',
    dir,
    '-p',
    '--input-format',
    'stream-json',
  ];
  const message = (text: string) =>
    `${JSON.stringify({ type: 'user', message: { role: 'user', content: text } })}\n`;

  it('stdin /dev/zero: refused at 16 MiB with the line number, exit 2', async () => {
    const { dir, env } = await scratch();
    const script = await writeScript(dir, [{ text: 'answered' }]);
    const run = await runWithStdinFrom('/dev/zero', streamArgs(script, dir), env);
    expect(run.stderr).toContain('agent: stdin line 1 is longer than 16 MiB');
    expect(run.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
    expect(run.code).toBe(2);
  }, 120_000);

  it('the lines before a long one are answered; the long one is not sent', async () => {
    const { dir, env } = await scratch();
    const script = await writeScript(dir, [{ text: 'first answered' }, { text: 'second?' }]);
    const input = join(dir, 'lines.jsonl');
    await writeFile(
      input,
      `${message('one')}${'y'.repeat(stdinLimitBytes + 10)}\n${message('three')}`,
    );
    const run = await runWithStdinFrom(input, streamArgs(script, dir), env);
    expect(run.stdout).toContain('first answered');
    expect(run.stdout).not.toContain('second?');
    expect(run.stderr).toContain('agent: stdin line 2 is longer than 16 MiB');
    expect(run.code).toBe(2);
  }, 120_000);
});

describe('piped input that is not UTF-8', () => {
  it.each([
    [
      'Windows-1252 (café naïve)',
      Buffer.from('caf\xe9 na\xefve\n', 'latin1'),
      '2 character(s)',
      'iconv -f WINDOWS-1252 -t UTF-8',
    ],
    [
      'UTF-16 with its mark',
      Buffer.from('\ufeffhi', 'utf16le'),
      'it is UTF-16',
      'iconv -f UTF-16 -t UTF-8',
    ],
  ])(
    '%s: said on stderr, with the conversion; the run goes on',
    async (_name, bytes, count, convert) => {
      const run = await pipeIn(bytes);
      expect(run.stderr).toContain('agent: stdin is not UTF-8 text');
      expect(run.stderr).toContain(count);
      expect(run.stderr).toContain(convert);
      expect(run.code).toBe(0);
      expect(run.stdout).toBe('answered\n');
    },
    60_000,
  );

  it('UTF-8 (accents, emoji, a byte-order mark) gets no notice', async () => {
    const run = await pipeIn('\ufeffcafé ✓ 🎉\n');
    expect(run.stderr).not.toContain('not UTF-8');
    expect(run.code).toBe(0);
  }, 60_000);
});
