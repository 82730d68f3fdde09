import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { skipWithout, systemToolProblem } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  appDir,
  assertBuilt,
  cleanEnv,
  runCli,
  tempDir,
  writeScript,
} from '../testing/test-support.js';
import {
  jsonResultSchema,
  outputJsonSchema,
  type StreamJsonEvent,
  streamJsonEventSchema,
} from './stream-json.js';

const cleanups: (() => Promise<void>)[] = [];
async function scratch(): Promise<string> {
  const dir = await tempDir('agent-cli-output-');
  cleanups.push(dir.dispose);
  return dir.path;
}

beforeAll(() => assertBuilt());
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const schemaPath = join(appDir, 'stream-json.schema.json');

/** A script that writes a file (allowed by the rule the test passes) and then removes it (never allowed). */
async function writeThenRemove(dir: string): Promise<string> {
  return writeScript(dir, [
    {
      text: 'Writing, then tidying up.',
      toolCalls: [
        { name: 'write_file', arguments: { path: 'a.txt', content: 'one\n  two  spaced\n' } },
        { name: 'bash', arguments: { command: 'rm -f a.txt' } },
      ],
    },
    { text: 'Done.' },
  ]);
}

function parseLines(stdout: string): StreamJsonEvent[] {
  const lines = stdout.split('\n').filter((line) => line !== '');
  return lines.map((line) => streamJsonEventSchema.parse(JSON.parse(line)));
}

describe('--output-format', () => {
  it('the published JSON Schema is the one the CLI is built with', async () => {
    if (process.env.AGENT_WRITE_SCHEMA === '1') {
      await writeFile(schemaPath, `${JSON.stringify(outputJsonSchema(), null, 2)}\n`);
    }
    const published = JSON.parse(await readFile(schemaPath, 'utf8')) as unknown;
    expect(published).toEqual(outputJsonSchema());
  });

  it('stream-json: every line is a schema-valid event, in run order, with permissions asked and answered', async () => {
    const dir = await scratch();
    const script = await writeThenRemove(dir);
    const { code, stdout, stderr } = await runCli([
      '-p',
      'go',
      '--scripted',
      script,
      '--cwd',
      dir,
      '--allow',
      'write_file',
      '--output-format',
      'stream-json',
    ]);
    expect(stderr).toBe('');
    const events = parseLines(stdout);
    const types = events.map((event) => event.type);
    expect(types[0]).toBe('run-start');
    expect(types.at(-1)).toBe('run-end');
    expect(types).toContain('text-delta');
    expect(types.indexOf('assistant')).toBeLessThan(types.indexOf('tool-result'));
    const started = events.find((event) => event.type === 'tool-start');
    expect(started).toMatchObject({ toolName: 'write_file', arguments: { path: 'a.txt' } });
    const asked = events.filter((event) => event.type === 'permission-asked');
    // In the sandbox (network off) the removal can only touch the workspace: its tier says so.
    const tier = systemToolProblem('bwrap') === undefined ? 'workspace-write' : 'full-access';
    expect(asked).toEqual([
      expect.objectContaining({ toolName: 'bash', subjects: ['rm -f a.txt'], tier }),
    ]);
    const answered = events.find((event) => event.type === 'permission-answered');
    expect(answered).toMatchObject({ answer: 'deny' });
    expect(answered?.type === 'permission-answered' && answered.reason).toContain(
      "--allow 'bash(rm -f a.txt)'",
    );
    const results = events.filter((event) => event.type === 'tool-result');
    expect(results.map((event) => event.type === 'tool-result' && event.isError)).toEqual([
      false,
      true,
    ]);
    expect(events.at(-1)).toMatchObject({
      stopReason: 'completed',
      finalText: 'Done.',
      turns: 2,
      deniedWithoutApprover: 1,
    });
    // The file was written; the removal never ran.
    expect(await readFile(join(dir, 'a.txt'), 'utf8')).toBe('one\n  two  spaced\n');
    expect(code).toBe(4);
  });

  it('json: one schema-valid object at the end, exit 0 when nothing was denied', async () => {
    const dir = await scratch();
    const script = await writeScript(dir, [
      { toolCalls: [{ name: 'list_files', arguments: {} }] },
      { text: 'Nothing here.' },
    ]);
    const { code, stdout } = await runCli([
      '-p',
      'look',
      '--scripted',
      script,
      '--cwd',
      dir,
      '--output-format',
      'json',
    ]);
    const lines = stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const result = jsonResultSchema.parse(JSON.parse(lines[0] ?? ''));
    expect(result).toMatchObject({
      type: 'result',
      stopReason: 'completed',
      finalText: 'Nothing here.',
      turns: 2,
      deniedWithoutApprover: 0,
    });
    expect(code).toBe(0);
  });

  it('text: a denial names the flag that allows the call, and the exit code is 4', async () => {
    const dir = await scratch();
    const script = await writeThenRemove(dir);
    const { code, stderr } = await runCli(['-p', 'go', '--scripted', script, '--cwd', dir]);
    const mode = systemToolProblem('bwrap') === undefined ? 'workspace-write' : 'full-access';
    expect(stderr).toContain(`--allow 'bash(rm -f a.txt)', or use --mode ${mode}`);
    expect(stderr).toMatch(
      /--allow 'write_file\(\/[^)]*\/a\.txt\)', or use --mode workspace-write/,
    );
    expect(stderr).toContain('2 call(s) needed approval and -p could not ask (exit 4)');
    // Argument strings are shown exactly (no whitespace collapsed).
    expect(stderr).toContain('"content":"one\\n  two  spaced\\n"');
    expect(code).toBe(4);
  });
});

describe('prompts from stdin', () => {
  async function savedUserText(dir: string, args: string[], input: string): Promise<string> {
    const script = await writeScript(dir, [{ text: 'ok' }]);
    const save = join(dir, 'conversation.json');
    const { code } = await runCli(['--scripted', script, '--cwd', dir, '--save', save, ...args], {
      input,
    });
    expect(code).toBe(0);
    const saved = JSON.parse(await readFile(save, 'utf8')) as {
      messages: { role: string; content: unknown }[];
    };
    const user = saved.messages.find((message) => message.role === 'user');
    return typeof user?.content === 'string' ? user.content : JSON.stringify(user?.content);
  }

  it('piped stdin is appended to the -p prompt', async () => {
    const dir = await scratch();
    const text = await savedUserText(dir, ['-p', 'explain'], 'line 1\nline 2\n');
    expect(text).toBe('explain\n\nline 1\nline 2\n');
  });

  it('-p - takes the whole prompt from stdin', async () => {
    const dir = await scratch();
    expect(await savedUserText(dir, ['-p', '-'], 'from stdin\n')).toBe('from stdin\n');
  });

  it('-p - with empty stdin is a usage error', async () => {
    const dir = await scratch();
    const script = await writeScript(dir, [{ text: 'ok' }]);
    const { code, stderr } = await runCli(['-p', '-', '--scripted', script], { input: '' });
    expect(code).toBe(2);
    expect(stderr).toContain('-p has no prompt: none after -p, and stdin was empty');
  });

  it.each([[['-p']], [['--print']], [['-p', '--max-turns', '5']], [['--max-turns', '5', '-p']]])(
    '%j with piped stdin takes stdin as the prompt (echo data | agent -p)',
    async (args) => {
      const dir = await scratch();
      expect(await savedUserText(dir, args, 'data from a pipe\n')).toBe('data from a pipe\n');
    },
  );

  it('-p followed by options and then words takes the words as the prompt, stdin appended', async () => {
    const dir = await scratch();
    const text = await savedUserText(dir, ['-p', '--max-turns', '5', 'explain', 'this'], 'log\n');
    expect(text).toBe('explain this\n\nlog\n');
  });
});

describe('mistakes get clear errors', () => {
  it.each([
    [['-p'], 2, '-p has no prompt: none after -p, and stdin was empty'],
    [['--mode', 'read-only', '-p'], 2, '-p has no prompt'],
    [['-p', '-x'], 2, 'one that starts with "-" must be attached'],
    [['--no-such-flag'], 2, 'Unknown option --no-such-flag'],
    [['fix', 'it'], 2, 'A prompt without -p starts an interactive session'],
    [['-p', 'x', '--output-format', 'xml'], 2, 'Unknown output format "xml"'],
    [['--output-format', 'json'], 2, '--output-format json needs -p'],
  ])('%j exits %i', async (args, expectedCode, message) => {
    const { code, stderr } = await runCli(args);
    expect(code).toBe(expectedCode);
    expect(stderr).toContain(message);
    expect(stderr).not.toContain('ambiguous');
  });

  it('a --cwd that does not exist is an error, and nothing is created', async () => {
    const dir = await scratch();
    const script = await writeScript(dir, [{ text: 'ok' }]);
    const missing = join(dir, 'typo');
    const { code, stderr } = await runCli(['-p', 'x', '--scripted', script, '--cwd', missing]);
    expect(code).toBe(1);
    expect(stderr).toContain(`The workspace ${missing} does not exist`);
    await expect(readFile(missing)).rejects.toThrow();
  });

  it('a scripted turn with an unknown field is an error', async () => {
    const dir = await scratch();
    const script = await writeScript(dir, [{ txt: 'typo' }]);
    const { code, stderr } = await runCli(['-p', 'x', '--scripted', script]);
    expect(code).toBe(1);
    expect(stderr).toContain('step 1 has unknown field "txt"');
  });

  it('--version names the CLI and every package it runs on', async () => {
    const { code, stdout } = await runCli(['--version']);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^agent \d+\.\d+\.\d+\n/);
    expect(stdout).toMatch(/^@agent\/core \d+\.\d+\.\d+$/m);
    expect(stdout).toMatch(/^@agent\/tools-builtin \d+\.\d+\.\d+$/m);
    expect(stdout).not.toContain('unknown');
  });
});

describe('--sandbox', () => {
  it('shows the sandbox state; off says commands are not sandboxed', async (context) => {
    skipWithout('bwrap')(context);
    const dir = await scratch();
    const script = await writeScript(dir, [{ text: 'ok' }]);
    const on = await runCli(['-p', 'x', '--scripted', script, '--cwd', dir]);
    expect(on.stderr).toContain('bash: sandboxed (bubblewrap): writes only in');
    const off = await runCli(['-p', 'x', '--scripted', script, '--cwd', dir, '--sandbox', 'off']);
    expect(off.stderr).toContain('bash: NOT sandboxed (the sandbox is off)');
  });

  it('required refuses to start where bubblewrap is unavailable; auto falls back and says so', async () => {
    const dir = await scratch();
    const script = await writeScript(dir, [{ text: 'ok' }]);
    // A PATH without bwrap: the probe finds no bubblewrap.
    const env = { ...cleanEnv(), PATH: dir };
    const required = await runCli(
      ['-p', 'x', '--scripted', script, '--cwd', dir, '--sandbox', 'required'],
      { env },
    );
    expect(required.code).toBe(1);
    expect(required.stderr).toContain(
      'The sandbox is required but cannot run: bubblewrap is not installed',
    );
    const auto = await runCli(['-p', 'x', '--scripted', script, '--cwd', dir], { env });
    expect(auto.code).toBe(0);
    expect(auto.stderr).toContain('bash: NOT sandboxed (bubblewrap is not installed');
  });
});

describe('--output-format json / stream-json when the CLI stops on an error of its own', () => {
  // Before a run (no key, a bad option value, an unknown option) stdout stayed empty: a script
  // parsing it failed on no JSON at all. Now it holds one schema-valid error object too.
  it.each([
    ['json', ['-p', 'hi', '--output-format', 'json'], 1, 'No model provider configured'],
    ['stream-json', ['-p', 'hi', '--output-format', 'stream-json'], 1, 'No model provider'],
    ['json, an unknown option', ['-p', 'hi', '--output-format=json', '--bogus'], 2, '--bogus'],
    [
      'stream-json, a bad --mode',
      ['-p', 'hi', '--output-format', 'stream-json', '--mode', 'yolo'],
      2,
      'yolo',
    ],
  ] as const)(
    '%s: stdout holds {type: "error", message, exitCode}',
    async (_what, args, exitCode, said) => {
      const { code, stdout, stderr } = await runCli([...args], { env: cleanEnv() });
      expect(code).toBe(exitCode);
      expect(stderr).toContain(said);
      const lines = stdout.split('\n').filter((line) => line !== '');
      expect(lines).toHaveLength(1);
      const event = streamJsonEventSchema.parse(JSON.parse(lines[0] ?? ''));
      expect(event).toMatchObject({ type: 'error', exitCode });
      expect(event.type === 'error' ? event.message : '').toContain(said);
    },
  );

  it('text output keeps stdout empty', async () => {
    const { code, stdout } = await runCli(['-p', 'hi'], { env: cleanEnv() });
    expect(code).toBe(1);
    expect(stdout).toBe('');
  });
});
