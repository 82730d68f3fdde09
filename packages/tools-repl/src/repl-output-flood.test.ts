// A cell that prints (or returns) tens of megabytes (80 times what is kept): the interpreter keeps the two ends of
// each stream and sends one bounded reply, so the host never holds the flood; a cell that writes
// to the reply channel itself without a line break resets its session instead of filling memory.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { executeTool } from '@agent/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createReplTools, findExecutable, type ReplTools } from './repl-tools.js';

let cwd: string;
let repl: ReplTools | undefined;
beforeEach(async () => {
  cwd = await mkdtemp(path.join(tmpdir(), 'repl-flood-'));
});
afterEach(async () => {
  await repl?.close();
  repl = undefined;
  await rm(cwd, { recursive: true, force: true });
});

// Large enough that the interpreter's own cut (500,000 characters at each end) shows through.
const maxOutputChars = 2_000_000;

async function run(name: string, args: Record<string, unknown>) {
  const tool = repl?.tools.find((candidate) => candidate.name === name);
  if (tool === undefined) throw new Error(`no ${name}`);
  const result = await executeTool(tool, args);
  const text = result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
  return { text, isError: result.isError === true };
}

const floods: [string, string][] = [
  [
    'process.stdout.write',
    'for (let i = 0; i < 40; i++) process.stdout.write("y".repeat(1_000_000)); "done"',
  ],
  [
    'console.log',
    'const line = "y".repeat(99_999); for (let i = 0; i < 400; i++) console.log(line); "done"',
  ],
  ['console.error', 'for (let i = 0; i < 40; i++) console.error("y".repeat(1_000_000)); "done"'],
  ['one huge write', 'process.stdout.write("y".repeat(40_000_000)); "done"'],
];

describe('js_repl: a flood of output', () => {
  it.each(floods)(
    '%s: both ends kept, the middle counted, the session goes on',
    async (_name, code) => {
      repl = createReplTools({ cwd, languages: ['javascript'], maxOutputChars });
      await run('js_repl', { code: 'const kept = 42' });
      const flood = await run('js_repl', { code, timeout_ms: 120_000 });
      expect(flood.isError, flood.text.slice(0, 300)).toBe(false);
      expect(flood.text).toMatch(/\[… \d+ characters dropped …\]/);
      const dropped = Number(/\[… (\d+) characters dropped …\]/.exec(flood.text)?.[1]);
      expect(dropped).toBeGreaterThan(38_000_000);
      expect(flood.text.length).toBeLessThan(1_100_000);
      expect(flood.text).toMatch(/=> 'done'$/);
      expect((await run('js_repl', { code: 'kept' })).text).toBe('=> 42');
    },
  );

  it('a value or an error of millions of characters is cut too', async () => {
    repl = createReplTools({ cwd, languages: ['javascript'], maxOutputChars });
    const value = await run('js_repl', {
      code: 'Object.fromEntries(Array.from({ length: 400_000 }, (_, i) => ["key" + i, i]))',
    });
    expect(value.text.length).toBeLessThan(600_000);
    const error = await run('js_repl', { code: 'throw new Error("e".repeat(5_000_000))' });
    expect(error.isError).toBe(true);
    expect(error.text.length).toBeLessThan(600_000);
  });

  it('writing to the reply channel directly without a line break resets the session', async () => {
    repl = createReplTools({ cwd, languages: ['javascript'], maxOutputChars });
    await run('js_repl', { code: 'const kept = 1' });
    const flood = await run('js_repl', {
      // The pipe is non-blocking: a write the host has not drained yet fails (EAGAIN) and is
      // tried again, as fast as the host reads.
      code: 'const fs = require("node:fs"); const chunk = "z".repeat(1_000_000); for (let i = 0; i < 1_000_000; i++) { try { fs.writeSync(1, chunk) } catch {} } "unreachable"',
      timeout_ms: 120_000,
    });
    expect(flood.isError).toBe(true);
    expect(flood.text).toContain('without a line break on its reply channel');
    expect(flood.text).toContain('the session was reset');
    const after = await run('js_repl', { code: 'typeof kept' });
    expect(after.text).toContain('[new javascript session]');
    expect(after.text).toContain("=> 'undefined'");
  });
});

describe.skipIf(findExecutable('python3') === undefined)('python_repl: a flood of output', () => {
  it('print, sys.stdout.write and stderr: both ends kept, the middle counted', async () => {
    repl = createReplTools({ cwd, languages: ['python'], maxOutputChars });
    for (const code of [
      'import sys\nfor i in range(40):\n    sys.stdout.write("y" * 1000000)\n"done"',
      'line = "y" * 99999\nfor i in range(400):\n    print(line)\n"done"',
      'import sys\nfor i in range(40):\n    sys.stderr.write("y" * 1000000)\n"done"',
    ]) {
      const flood = await run('python_repl', { code, timeout_ms: 120_000 });
      expect(flood.isError, code).toBe(false);
      const dropped = Number(/\[… (\d+) characters dropped …\]/.exec(flood.text)?.[1]);
      expect(dropped, code).toBeGreaterThan(38_000_000);
      expect(flood.text.length, code).toBeLessThan(1_100_000);
      expect(flood.text, code).toMatch(/=> 'done'$/);
    }
    const error = await run('python_repl', { code: 'raise ValueError("e" * 5000000)' });
    expect(error.isError).toBe(true);
    expect(error.text.length).toBeLessThan(600_000);
  });
});
