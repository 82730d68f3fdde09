import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, runCli, tempDir, writeScript } from '../testing/test-support.js';
import { jsonResultSchema, type StreamJsonEvent, streamJsonEventSchema } from './stream-json.js';

// Issue 34, "Marks that lie" and "unknown tool arguments are dropped silently": the built CLI
// as a real process, the real tools, the real OS sandbox.

const cleanups: (() => Promise<void>)[] = [];
async function scratch(): Promise<string> {
  const dir = await tempDir('agent-cli-marks-');
  cleanups.push(dir.dispose);
  return dir.path;
}

beforeAll(() => assertBuilt());
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

function events(stdout: string): StreamJsonEvent[] {
  return stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => streamJsonEventSchema.parse(JSON.parse(line)));
}

function toolResults(stdout: string) {
  return events(stdout).flatMap((event) => (event.type === 'tool-result' ? [event] : []));
}

describe('a failed command is marked failed', () => {
  it.each([
    ['exit 3', '3'],
    ['false', '1'],
    ['echo some output; exit 42', '42'],
    ['ls /no-such-directory-here', '2'],
  ])('text: `%s` is ✗ with its exit code', async (command, exitCode) => {
    const dir = await scratch();
    const script = await writeScript(dir, [
      { toolCalls: [{ name: 'bash', arguments: { command } }] },
      { text: 'Seen.' },
    ]);
    const { code, stderr } = await runCli([
      '-p',
      'go',
      '--scripted',
      script,
      '--cwd',
      dir,
      '--mode',
      'full-access',
    ]);
    expect(stderr).toContain(`✗ bash [failed]: Exit code: ${exitCode} · `);
    expect(stderr).not.toContain('✓ bash');
    // The run itself completed: the model read the failure and answered.
    expect(code).toBe(0);
  });

  it('a command that succeeds is still ✓', async () => {
    const dir = await scratch();
    const script = await writeScript(dir, [
      { toolCalls: [{ name: 'bash', arguments: { command: 'echo fine' } }] },
      { text: 'Seen.' },
    ]);
    const { stderr } = await runCli([
      '-p',
      'go',
      '--scripted',
      script,
      '--cwd',
      dir,
      '--mode',
      'full-access',
    ]);
    expect(stderr).toContain('✓ bash: fine (+1 lines)');
  });

  it('stream-json: isError true, the output and exit code readable; run-end lists it', async () => {
    const dir = await scratch();
    const script = await writeScript(dir, [
      {
        toolCalls: [
          { name: 'bash', arguments: { command: 'echo partial; exit 3' } },
          { name: 'bash', arguments: { command: 'echo ok' } },
        ],
      },
      { text: 'Seen.' },
    ]);
    const { stdout } = await runCli([
      '-p',
      'go',
      '--scripted',
      script,
      '--cwd',
      dir,
      '--mode',
      'full-access',
      '--output-format',
      'stream-json',
    ]);
    const results = toolResults(stdout);
    expect(results.map((result) => [result.isError, result.text])).toEqual([
      [true, 'partial\nExit code: 3'],
      [false, 'ok\nExit code: 0'],
    ]);
    const end = events(stdout).at(-1);
    expect(end?.type === 'run-end' && end.toolResults.map((result) => result.isError)).toEqual([
      true,
      false,
    ]);
  });

  it('json: the result lists every tool call and whether it failed', async () => {
    const dir = await scratch();
    const script = await writeScript(dir, [
      { toolCalls: [{ name: 'bash', arguments: { command: 'exit 3' } }] },
      { text: 'Seen.' },
    ]);
    const { stdout } = await runCli([
      '-p',
      'go',
      '--scripted',
      script,
      '--cwd',
      dir,
      '--mode',
      'full-access',
      '--output-format',
      'json',
    ]);
    const result = jsonResultSchema.parse(JSON.parse(stdout));
    expect(result.toolResults).toEqual([
      { toolCallId: expect.any(String), toolName: 'bash', isError: true, errorKind: 'failed' },
    ]);
  });

  it('a write the sandbox blocked is ✗, and says the sandbox blocked it', async (context) => {
    skipWithout('bwrap')(context);
    const dir = await scratch();
    // Outside the workspace and outside /tmp (the sandbox gives commands a private /tmp).
    const outside = await mkdtemp('/var/tmp/agent-marks-outside-');
    cleanups.push(() => rm(outside, { recursive: true, force: true }));
    const target = join(outside, 'escaped.txt');
    const script = await writeScript(dir, [
      { toolCalls: [{ name: 'bash', arguments: { command: `touch ${target}` } }] },
      { text: 'Seen.' },
    ]);
    const { stderr, stdout } = await runCli([
      '-p',
      'go',
      '--scripted',
      script,
      '--cwd',
      dir,
      '--mode',
      'full-access',
      '--output-format',
      'stream-json',
    ]);
    expect(stderr).toBe('');
    const [result] = toolResults(stdout);
    expect(result?.isError).toBe(true);
    expect(result?.text).toContain('Blocked by the sandbox: writes outside');
    const text = await runCli([
      '-p',
      'go',
      '--scripted',
      script,
      '--cwd',
      dir,
      '--mode',
      'full-access',
    ]);
    expect(text.stderr).toMatch(/✗ bash \[failed\]: Exit code: 1 · /);
    expect(text.stderr).toContain('Blocked by the sandbox: writes outside');
  });
});

describe('a -p denial says no one was asked', () => {
  it.each([
    ['text', [] as string[]],
    ['stream-json', ['--output-format', 'stream-json']],
  ])(
    '%s: names the flags that would allow it, never "Denied by the user"',
    async (_format, flags) => {
      const dir = await scratch();
      const script = await writeScript(dir, [
        {
          toolCalls: [
            { name: 'bash', arguments: { command: 'curl -s https://example.com' } },
            { name: 'write_file', arguments: { path: 'notes.txt', content: 'x' } },
          ],
        },
        { text: 'Not allowed.' },
      ]);
      const { code, stdout, stderr } = await runCli([
        '-p',
        'go',
        '--scripted',
        script,
        '--cwd',
        dir,
        ...flags,
      ]);
      const output = `${stdout}\n${stderr}`;
      expect(output).not.toContain('Denied by the user');
      expect(output).toContain('No one could be asked to approve this call (-p with no terminal');
      expect(output).toContain("--allow 'bash(curl -s https://example.com)'");
      expect(output).toMatch(
        /--allow 'write_file\([^)]*notes\.txt\)', or use --mode workspace-write/,
      );
      expect(code).toBe(4);
    },
  );
});

describe('unknown tool arguments are refused, not dropped', () => {
  it("search with Claude Code's glob filters; an argument nothing maps is invalid-args naming the known ones", async () => {
    const dir = await scratch();
    await writeFile(join(dir, 'a.ts'), 'needle in ts\n');
    await writeFile(join(dir, 'b.md'), 'needle in md\n');
    const script = await writeScript(dir, [
      {
        toolCalls: [
          { name: 'search', arguments: { pattern: 'needle', glob: '*.md' } },
          { name: 'search', arguments: { pattern: 'needle', max_depth: 1 } },
          { name: 'read_file', arguments: { path: 'a.ts', encoding: 'latin1' } },
        ],
      },
      { text: 'Seen.' },
    ]);
    const { stdout, stderr } = await runCli([
      '-p',
      'go',
      '--scripted',
      script,
      '--cwd',
      dir,
      '--output-format',
      'stream-json',
    ]);
    expect(stderr).toBe('');
    const [filtered, unknownDepth, unknownEncoding] = toolResults(stdout);
    expect(filtered?.isError).toBe(false);
    expect(filtered?.text).toContain('b.md');
    expect(filtered?.text).not.toContain('a.ts');
    expect(unknownDepth).toMatchObject({ isError: true, errorKind: 'invalid-args' });
    expect(unknownDepth?.text).toContain(
      'unknown field "max_depth" (known fields: pattern, path, include',
    );
    expect(unknownEncoding).toMatchObject({ isError: true, errorKind: 'invalid-args' });
    expect(unknownEncoding?.text).toContain(
      'unknown field "encoding" (known fields: path, offset, limit)',
    );
  });
});
