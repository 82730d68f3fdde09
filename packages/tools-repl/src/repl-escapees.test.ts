import { execFile } from 'node:child_process';
import { randomInt } from 'node:crypto';
import fs from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createPermissionGate, executeTool, toolResultText } from '@agent/core';
import { createSandbox, type Sandbox } from '@agent/sandbox';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createReplTools, findExecutable, type ReplTools } from './repl-tools.js';

// What a cell starts must not outlive its interpreter: processes that left the interpreter's
// group (`setsid`, a detached child, a double fork) survived a reset, `close()` and the agent's
// exit, as did an interpreter kept alive by a thread or timer of its own. Before the fix every
// case below left its `sleep` running (unsandboxed; a sandbox's PID namespace already ended them).

const hasPython = findExecutable('python3') !== undefined;
const gate = createPermissionGate({ mode: 'full-access' });

/** A `sleep` whose argument no other process has: `sleep 300.<random>`. */
function uniqueSleep(): string {
  return `300.${randomInt(1e8, 1e9)}`;
}

/** Processes whose command line holds `needle`. */
function processesWith(needle: string): number[] {
  const found: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue;
    try {
      const cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, 'latin1');
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'latin1');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if (cmdline.includes(needle) && state !== 'Z') found.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

/** Waits (bounded) until no process holds `needle`; SIGKILL is delivered asynchronously. */
async function goneWithin(needle: string, ms = 5_000): Promise<number[]> {
  const deadline = Date.now() + ms;
  let left = processesWith(needle);
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    left = processesWith(needle);
  }
  return left;
}

/** Waits (bounded) until at least `count` processes hold `needle`; returns how many do. */
async function countWithin(needle: string, count: number, ms = 5_000): Promise<number> {
  const deadline = Date.now() + ms;
  let found = processesWith(needle).length;
  while (found < count && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    found = processesWith(needle).length;
  }
  return found;
}

/** Cells that start `sleep <tag>` outside the interpreter's process group, three ways. */
function escapingCells(tag: string): { python: string; javascript: string } {
  return {
    python: [
      'import os, subprocess',
      `subprocess.Popen(['setsid', 'sleep', '${tag}'])`,
      'if os.fork() == 0:',
      '    os.setsid()',
      '    if os.fork() == 0:',
      `        os.execvp('sleep', ['sleep', '${tag}'])`,
      '    os._exit(0)',
      "'started'",
    ].join('\n'),
    javascript: `const { spawn } = require('node:child_process'); spawn('sleep', ['${tag}'], { detached: true, stdio: 'ignore' }).unref(); spawn('setsid', ['sleep', '${tag}'], { stdio: 'ignore' }).unref(); 'started'`,
  };
}

let cwd: string;
let repl: ReplTools | undefined;
let sandbox: Sandbox | undefined;
const tags: string[] = [];
beforeEach(async () => {
  cwd = await mkdtemp(path.join(tmpdir(), 'repl-escapees-'));
});
afterEach(async () => {
  await repl?.close();
  await sandbox?.close();
  repl = undefined;
  sandbox = undefined;
  // A failed test must not leave its sleeps behind.
  for (const tag of tags.splice(0))
    for (const pid of processesWith(tag)) process.kill(pid, 'SIGKILL');
  await rm(cwd, { recursive: true, force: true });
});

async function cell(name: string, code: string, timeoutMs?: number): Promise<string> {
  const tool = repl?.tools.find((candidate) => candidate.name === name);
  if (tool === undefined) throw new Error(`no ${name}`);
  const args = timeoutMs === undefined ? { code } : { code, timeout_ms: timeoutMs };
  return toolResultText((await executeTool(tool, args, { permissionGate: gate })).content);
}

const languages = [
  ['js_repl', 'javascript', 'while (true) {}', 'process.exit(3)'],
  ['python_repl', 'python', 'while True: pass', 'import os; os._exit(3)'],
] as const;

describe.each([
  ['unsandboxed', false],
  ['sandboxed', true],
] as const)('processes a cell started outside its group, %s', (_label, sandboxed) => {
  if (sandboxed) beforeEach(skipWithout('bwrap'));
  function make() {
    if (sandboxed) sandbox = createSandbox({ mode: 'required', writableRoots: [cwd] });
    repl = createReplTools({
      cwd,
      ...(hasPython ? {} : { languages: ['javascript'] }),
      ...(sandbox === undefined ? {} : { sandbox }),
    });
  }

  describe.each(languages)('%s', (tool, language, endless, exit) => {
    beforeEach((context) => {
      if (language === 'python' && !hasPython) context.skip('python3 is not on the PATH');
    });

    it.each([
      ['a cell past its time limit resets the session', (_tag: string) => cell(tool, endless, 500)],
      ['the interpreter exits by itself', (_tag: string) => cell(tool, exit)],
      ['close()', (_tag: string) => (repl as ReplTools).close()],
    ])('end with the interpreter when %s', async (_name, end) => {
      make();
      const tag = uniqueSleep();
      tags.push(tag);
      expect(await cell(tool, escapingCells(tag)[language])).toContain("'started'");
      // Both escapees run until the interpreter ends (the double fork may still be under way).
      expect(await countWithin(tag, 2)).toBeGreaterThanOrEqual(2);
      await end(tag);
      expect(await goneWithin(tag)).toEqual([]);
    });
  });
});

describe('the agent exiting', () => {
  const execute = promisify(execFile);

  it.each(languages)(
    '%s: its interpreter and what it started end with the agent',
    async (tool, language) => {
      if (language === 'python' && !hasPython) return;
      const tag = uniqueSleep();
      tags.push(tag);
      const pidFile = path.join(cwd, 'interpreter.pid');
      const keepAlive =
        language === 'python'
          ? `import os, threading, time\nopen(${JSON.stringify(pidFile)}, 'w').write(str(os.getpid()))\nthreading.Thread(target=lambda: time.sleep(3600)).start()`
          : `require('node:fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setInterval(() => {}, 1000)`;
      // A separate agent process (the package's build): a cell starts escapees and keeps its
      // interpreter busy, then the process exits while the session is still open.
      const entry = new URL('../dist/index.js', import.meta.url).href;
      const program = `
      import { createPermissionGate, executeTool } from '@agent/core';
      const { createReplTools } = await import(${JSON.stringify(entry)});
      const repl = createReplTools({ cwd: ${JSON.stringify(cwd)}, languages: [${JSON.stringify(language)}] });
      const tool = repl.tools.find((t) => t.name === ${JSON.stringify(tool)});
      const gate = createPermissionGate({ mode: 'full-access' });
      await executeTool(tool, { code: ${JSON.stringify(escapingCells(tag)[language])} }, { permissionGate: gate });
      await executeTool(tool, { code: ${JSON.stringify(keepAlive)} }, { permissionGate: gate });
      process.exit(0);
    `;
      await execute(process.execPath, ['--input-type=module', '-e', program], {
        cwd: path.dirname(new URL(import.meta.url).pathname),
      });
      expect(await goneWithin(tag)).toEqual([]);
      // The interpreter itself, kept alive by its thread or timer after its stdin closed, too.
      const interpreter = fs.readFileSync(pidFile, 'utf8');
      expect(await alive(Number(interpreter))).toBe(false);
    },
  );
});

/** Whether a process runs (not a zombie), after waiting a bounded time for it to end. */
async function alive(pid: number): Promise<boolean> {
  const deadline = Date.now() + 5_000;
  const running = () => {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
      return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
    } catch {
      return false;
    }
  };
  while (running() && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 20));
  return running();
}
