// `--input-format stream-json`: user messages as JSON lines on stdin, each one run of the same
// session; the built CLI as a child process, fed line by line.
import { spawn } from 'node:child_process';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  assertBuilt,
  cleanEnv,
  cliPath,
  runCli,
  tempDir,
  writeScript,
} from '../testing/test-support.js';
import { type StreamJsonEvent, streamJsonEventSchema } from './stream-json.js';

const cleanups: (() => Promise<void>)[] = [];
beforeAll(() => assertBuilt());
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function scratch() {
  const dir = await tempDir('agent-cli-input-');
  cleanups.push(dir.dispose);
  const workspace = join(dir.path, 'ws');
  await mkdir(workspace);
  return { dir: dir.path, workspace };
}

const user = (content: unknown) =>
  `${JSON.stringify({ type: 'user', message: { role: 'user', content } })}\n`;

describe('--input-format stream-json', () => {
  it('each stdin line is a run of one session; the next is written after the first run ends', async () => {
    const { dir, workspace } = await scratch();
    const script = await writeScript(dir, [
      { text: 'Noted: the code word is heron.' },
      { text: 'The code word is heron.' },
    ]);
    const saved = join(dir, 'session.json');
    const child = spawn(
      process.execPath,
      [
        cliPath,
        '--input-format',
        'stream-json',
        '--output-format',
        'stream-json',
        '--scripted',
        script,
        '--cwd',
        workspace,
        '--save',
        saved,
      ],
      { env: cleanEnv(), stdio: ['pipe', 'pipe', 'pipe'] },
    );
    const events: StreamJsonEvent[] = [];
    let buffered = '';
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    // Every stdout line parses and validates; the second message goes in when the first run ends.
    const firstRunEnded = new Promise<void>((resolve) => {
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        buffered += chunk;
        const lines = buffered.split('\n');
        buffered = lines.pop() ?? '';
        for (const line of lines) {
          const event = streamJsonEventSchema.parse(JSON.parse(line));
          events.push(event);
          if (event.type === 'run-end') resolve();
        }
      });
    });
    child.stdin.write(user('remember the code word heron'));
    await firstRunEnded;
    expect(events.filter((event) => event.type === 'run-end')).toHaveLength(1);
    child.stdin.end(user([{ type: 'text', text: 'what is the code word?' }]));
    expect(await exited).toBe(0);
    expect(stderr).toBe('');
    expect(buffered).toBe('');
    expect(events.filter((event) => event.type === 'run-start')).toHaveLength(1);
    const ends = events.filter((event) => event.type === 'run-end');
    expect(ends.map((event) => event.finalText)).toEqual([
      'Noted: the code word is heron.',
      'The code word is heron.',
    ]);
    // One conversation: the second run continued the first.
    const conversation = JSON.parse(await readFile(saved, 'utf8')) as {
      messages: { role: string; content: unknown }[];
    };
    expect(conversation.messages.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
    ]);
    expect(JSON.stringify(conversation.messages[2]?.content)).toContain('what is the code word?');
  });

  it('a signal between runs ends the session (exit 130) while stdin is still open', async () => {
    const { dir, workspace } = await scratch();
    const script = await writeScript(dir, [{ text: 'First.' }, { text: 'Never.' }]);
    const child = spawn(
      process.execPath,
      [
        cliPath,
        '--input-format',
        'stream-json',
        '--output-format',
        'json',
        '--scripted',
        script,
        '--cwd',
        workspace,
      ],
      { env: cleanEnv(), stdio: ['pipe', 'pipe', 'pipe'] },
    );
    let stdout = '';
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    const answered = new Promise<void>((resolve) => {
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        stdout += chunk;
        if (stdout.includes('\n')) resolve();
      });
    });
    child.stdin.write(user('first'));
    await answered;
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    const results = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { finalText: string });
    expect(results.map((result) => result.finalText)).toEqual(['First.']);
  });

  it('with text output each answer goes to stdout; a line that is not a user message stops with exit 1', async () => {
    const { dir, workspace } = await scratch();
    const script = await writeScript(dir, [{ text: 'One.' }, { text: 'Two.' }]);
    const args = ['--input-format', 'stream-json', '--scripted', script, '--cwd', workspace];
    const good = await runCli(args, { input: `${user('a')}\n${user('b')}`, env: cleanEnv() });
    expect(good.code).toBe(0);
    expect(good.stdout).toBe('One.\nTwo.\n');
    const bad = await runCli(args, {
      input: `${user('a')}{"type":"user","text":"b"}\n`,
      env: cleanEnv(),
    });
    expect(bad.code).toBe(1);
    expect(bad.stdout).toBe('One.\n');
    expect(bad.stderr).toContain('stdin line 2 is not a user message');
    // A -p prompt is the first message, before the lines of stdin.
    const withPrompt = await runCli([...args, '-p', 'a'], { input: user('b'), env: cleanEnv() });
    expect(withPrompt.code).toBe(0);
    expect(withPrompt.stdout).toBe('One.\nTwo.\n');
    const empty = await runCli(args, { input: '', env: cleanEnv() });
    expect(empty.code).toBe(1);
    expect(empty.stderr).toContain('No message on stdin');
  });

  it('a line that is not JSON: where and the form, without quoting the line (V8 quoted it)', async () => {
    const { dir, workspace } = await scratch();
    const script = await writeScript(dir, [{ text: 'One.' }]);
    const args = ['--input-format', 'stream-json', '--scripted', script, '--cwd', workspace];
    const secret = 'my plan, with the token tok-9f8e7d6c5b4a';
    const plain = await runCli(args, { input: `${user('a')}${secret}\n`, env: cleanEnv() });
    expect(plain.code).toBe(1);
    expect(plain.stdout).toBe('One.\n');
    expect(plain.stderr).toContain(
      'stdin line 2 is not JSON (column 1: a JSON file starts with { (or [), not with this): each line is one {"type":"user","message":{"role":"user","content":"…"}}',
    );
    expect(plain.stderr).not.toContain('tok-9f8e7d6c5b4a');
    const comment = await runCli(args, { input: '{"type":"user", // mine\n', env: cleanEnv() });
    expect(comment.stderr).toContain('stdin line 1 is not JSON (column 17: a comment');
  });
});
