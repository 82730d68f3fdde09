// A cell that closes or replaces the interpreter's standard input (its request channel) and
// keeps running: the next cell's request then hits a pipe with no reader. Before the fix that
// EPIPE was an unhandled 'error' event on the host's end of the pipe, and it ended the agent's
// own process; now the session is reset with a message saying why, and the cell after runs.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { executeTool, toolResultText } from '@agent/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createReplTools, findExecutable, type ReplTools } from './repl-tools.js';

const hasPython = findExecutable('python3') !== undefined;
let cwd: string;
let repl: ReplTools | undefined;

beforeEach(async () => {
  cwd = await mkdtemp(path.join(tmpdir(), 'repl-input-'));
});
afterEach(async () => {
  await repl?.close();
  repl = undefined;
  await rm(cwd, { recursive: true, force: true });
});

async function call(name: string, code: string) {
  const tool = repl?.tools.find((candidate) => candidate.name === name);
  if (tool === undefined) throw new Error(`no ${name}`);
  const result = await executeTool(tool, { code });
  return { text: toolResultText(result.content), isError: result.isError === true };
}

const cases: [string, 'js_repl' | 'python_repl', string][] = [
  ['fs.closeSync(0)', 'js_repl', "require('node:fs').closeSync(0); 'closed'"],
  [
    'dup2 of /dev/null onto 0, reader paused',
    'js_repl',
    "const fs = require('node:fs'); process.stdin.pause(); fs.closeSync(0); fs.openSync('/dev/null', 'r'); 'closed'",
  ],
  ['os.close(0)', 'python_repl', "import os; os.close(0); 'closed'"],
  [
    'os.dup2 of /dev/null onto 0',
    'python_repl',
    "import os; fd = os.open('/dev/null', os.O_RDONLY); os.dup2(fd, 0); 'closed'",
  ],
];

describe('a cell closes the interpreter’s standard input and stays alive', () => {
  it.each(cases)(
    '%s (%s): the next cell resets the session with a reason; the one after runs',
    async (_name, tool, code) => {
      if (tool === 'python_repl' && !hasPython) return;
      repl = createReplTools({
        cwd,
        languages: tool === 'js_repl' ? ['javascript'] : ['python'],
        timeoutMs: 20_000,
      });
      const closing = await call(tool, code);
      expect(closing.isError, closing.text).toBe(false);
      expect(closing.text).toContain('closed');
      // The request cannot reach the interpreter: an error result, never a crash of this process.
      const next = await call(tool, '1 + 1');
      expect(next.isError).toBe(true);
      expect(next.text).toMatch(/session was reset/);
      const after = await call(tool, '40 + 2');
      expect(after.isError, after.text).toBe(false);
      expect(after.text).toContain('42');
    },
  );
});
