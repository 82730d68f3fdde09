import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Agent, executeTool } from '@agent/core';
import { createScriptedProvider } from '@agent/core/testing';
import { createSandbox } from '@agent/sandbox';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createReplTools, type ReplTools } from './repl-tools.js';

let cwd: string;
let repl: ReplTools;

beforeEach(async () => {
  cwd = await mkdtemp(path.join(tmpdir(), 'repl-test-'));
});
afterEach(async () => {
  await repl?.close();
  await rm(cwd, { recursive: true, force: true });
});

function tool(name: string) {
  const found = repl.tools.find((t) => t.name === name);
  if (found === undefined) throw new Error(`no ${name}`);
  return found;
}
async function call(name: string, args: Record<string, unknown>, signal?: AbortSignal) {
  const result = await executeTool(tool(name), args, signal === undefined ? {} : { signal });
  const text = result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
  return { text, isError: result.isError === true };
}

describe('js_repl', () => {
  it('keeps state across calls; prints, values, require and top-level await', async () => {
    repl = createReplTools({ cwd, languages: ['javascript'] });
    expect(
      (
        await call('js_repl', {
          code: 'let total = 40; function add(n) { total += n; return total }',
        })
      ).text,
    ).toBe('[new javascript session]\n(no output)');
    expect((await call('js_repl', { code: 'console.log("adding"); add(2)' })).text).toBe(
      'adding\n=> 42',
    );
    expect(
      (await call('js_repl', { code: 'require("node:path").basename(process.cwd())' })).text,
    ).toBe(`=> '${path.basename(cwd)}'`);
    expect(
      (
        await call('js_repl', {
          code: 'await new Promise((r) => setTimeout(() => r(total * 2), 5))',
        })
      ).text,
    ).toBe('=> 84');
  });

  it('reports syntax and runtime errors as errors; the session survives them', async () => {
    repl = createReplTools({ cwd, languages: ['javascript'] });
    await call('js_repl', { code: 'const kept = 7' });
    const syntax = await call('js_repl', { code: 'let = = 3' });
    expect(syntax.isError).toBe(true);
    expect(syntax.text).toMatch(/SyntaxError/);
    const thrown = await call('js_repl', { code: 'console.log("before"); null.field' });
    expect(thrown.isError).toBe(true);
    expect(thrown.text).toMatch(/^before\nTypeError: Cannot read properties of null/);
    expect((await call('js_repl', { code: 'kept' })).text).toBe('=> 7');
  });

  it('an endless loop times out and resets the session, which then starts afresh', async () => {
    repl = createReplTools({ cwd, languages: ['javascript'] });
    await call('js_repl', { code: 'globalThis.marker = 1' });
    const stuck = await call('js_repl', { code: 'while (true) {}', timeout_ms: 300 });
    expect(stuck.isError).toBe(true);
    expect(stuck.text).toContain(
      'did not finish within 300 ms; the javascript session was reset (its state is gone)',
    );
    const after = await call('js_repl', { code: 'typeof marker' });
    expect(after.text).toBe("[new javascript session]\n=> 'undefined'");
  });

  it('an abort stops the cell and resets; process.exit is reported, not hung on', async () => {
    repl = createReplTools({ cwd, languages: ['javascript'] });
    const controller = new AbortController();
    const running = call('js_repl', { code: 'await new Promise(() => {})' }, controller.signal);
    setImmediate(() => controller.abort());
    const aborted = await running;
    expect(aborted.isError).toBe(true);
    const exited = await call('js_repl', { code: 'process.exit(3)' });
    expect(exited.isError).toBe(true);
    expect(exited.text).toContain('the javascript interpreter exited (exit code 3)');
    expect((await call('js_repl', { code: '1 + 1' })).text).toBe('[new javascript session]\n=> 2');
  });

  it('caps large output, keeping its head and tail', async () => {
    repl = createReplTools({ cwd, languages: ['javascript'], maxOutputChars: 1000 });
    const big = await call('js_repl', { code: 'console.log("a".repeat(50000) + "END")' });
    expect(big.text.length).toBeLessThan(1200);
    expect(big.text).toMatch(/characters cut/);
    expect(big.text).toMatch(/END$/);
  });

  it('runs in the OS sandbox when given one: writes outside the workspace fail', async (context) => {
    skipWithout('bwrap')(context);
    const sandbox = createSandbox({ mode: 'required', writableRoots: [cwd] });
    try {
      repl = createReplTools({ cwd, languages: ['javascript'], sandbox });
      const inside = await call('js_repl', {
        code: 'require("node:fs").writeFileSync("in.txt", "ok"); "written"',
      });
      expect(inside.text).toContain("=> 'written'");
      expect(await readFile(path.join(cwd, 'in.txt'), 'utf8')).toBe('ok');
      const outside = await call('js_repl', {
        code: 'require("node:fs").writeFileSync("/etc/repl-escape", "x")',
      });
      expect(outside.isError).toBe(true);
      expect(outside.text).toMatch(/EROFS|EACCES|read-only/i);
    } finally {
      await repl.close();
      await sandbox.close();
    }
  });
});

describe('the interpreter under the sandbox limits', () => {
  it('an interpreter killed for memory: the reset says the sandbox did it, and the next cell runs', async (context) => {
    skipWithout('bwrap')(context);
    const sandbox = createSandbox({
      mode: 'required',
      writableRoots: [cwd],
      maxMemoryBytes: 256 * 1024 * 1024,
      onWarning: () => undefined,
    });
    try {
      if (sandbox.status.limits.maxMemoryBytes === undefined) {
        // No cgroup here (an ordinary user without delegation): not run unbounded, only said.
        expect(sandbox.describe()).toMatch(/memory NOT bounded/);
        return;
      }
      repl = createReplTools({ cwd, languages: ['javascript'], sandbox });
      const hog = await call('js_repl', { code: 'const b = Buffer.alloc(1 << 30, 1); b.length' });
      expect(hog.isError).toBe(true);
      expect(hog.text).toMatch(
        /interpreter exited \((signal SIGKILL|exit code 137)\).*the session was reset.*Killed by the sandbox: its commands used more than 256 MiB of memory together/s,
      );
      const next = await call('js_repl', { code: '1 + 1' });
      expect(next.text).toContain('=> 2');
    } finally {
      await repl.close();
      await sandbox.close();
    }
  });
});

describe('python_repl', () => {
  beforeEach(skipWithout('python3'));
  it('keeps state, shows the last expression, reports tracebacks and times out', async () => {
    repl = createReplTools({ cwd, languages: ['python'] });
    expect((await call('python_repl', { code: 'import math\nradius = 2' })).text).toBe(
      '[new python session]\n(no output)',
    );
    expect(
      (await call('python_repl', { code: 'print("area")\nround(math.pi * radius ** 2, 3)' })).text,
    ).toBe('area\n=> 12.566');
    const failed = await call('python_repl', { code: 'def f():\n    return 1 / 0\nf()' });
    expect(failed.isError).toBe(true);
    expect(failed.text).toMatch(/ZeroDivisionError: division by zero/);
    const syntax = await call('python_repl', { code: 'def broken(:' });
    expect(syntax.isError).toBe(true);
    expect(syntax.text).toMatch(/SyntaxError/);
    expect((await call('python_repl', { code: 'radius' })).text).toBe('=> 2');
    const stuck = await call('python_repl', { code: 'while True: pass', timeout_ms: 300 });
    expect(stuck.text).toContain('the python session was reset');
    expect((await call('python_repl', { code: "'radius' in globals()" })).text).toBe(
      '[new python session]\n=> False',
    );
  });
});

describe('through the loop', () => {
  it('is a full-access tool: asked unless a rule allows it; the rule sees the exact code', async () => {
    repl = createReplTools({ cwd, languages: ['javascript'] });
    expect(tool('js_repl').policy?.permission).toBe('full-access');
    const provider = createScriptedProvider([
      { toolCalls: [{ name: 'js_repl', arguments: { code: '6 * 7' } }] },
      { text: 'done' },
    ]);
    const { PermissionPolicy } = await import('@agent/core');
    const policy = new PermissionPolicy({ mode: 'workspace-write', allow: ['js_repl(6 * 7)'] });
    const result = await new Agent({
      provider,
      model: 'm',
      tools: repl.tools,
      permissionGate: policy.gate,
    }).run('compute').result;
    const toolResult = result.messages.find((m) => m.role === 'toolResult');
    expect(JSON.stringify(toolResult?.content)).toContain('=> 42');
  });
});

describe('REPL (claw-code): one tool, {code, language, timeout_ms}', () => {
  it('runs claw-code’s python example through the alias', async (context) => {
    skipWithout('python3')(context);
    repl = createReplTools({ cwd, combined: true });
    expect(repl.tools.map((t) => t.name)).toEqual(['repl']);
    const provider = createScriptedProvider([
      {
        toolCalls: [
          {
            name: 'REPL',
            arguments: { language: 'python', code: 'print(1 + 1)', timeout_ms: 500 },
          },
          { name: 'REPL', arguments: { language: 'js', code: 'let kept = 20; kept + 1' } },
        ],
      },
      { toolCalls: [{ name: 'REPL', arguments: { language: 'node', code: 'kept * 2' } }] },
      { text: 'ok' },
    ]);
    const agent = new Agent({ provider, model: 'm', tools: repl.tools });
    await agent.run('go').result;
    const results = agent.messages.filter((m) => m.role === 'toolResult');
    const text = (index: number) =>
      (results[index]?.content ?? [])
        .map((part) => (part.type === 'text' ? part.text : ''))
        .join('');
    expect(results.map((m) => [m.toolName, m.isError])).toEqual([
      ['repl', false],
      ['repl', false],
      ['repl', false],
    ]);
    expect(text(0)).toBe('[new python session]\n2');
    expect(text(1)).toBe('[new javascript session]\n=> 21');
    // Each language keeps its own session.
    expect(text(2)).toBe('=> 40');
  });

  it('refuses claw-code’s bad examples: blank code, an unsupported language', async () => {
    repl = createReplTools({ cwd, combined: true, languages: ['javascript'] });
    const blank = await executeTool(tool('repl'), { language: 'javascript', code: '   ' });
    expect(blank).toMatchObject({ isError: true, errorKind: 'invalid-args' });
    expect(JSON.stringify(blank.content)).toContain('code must not be empty');
    const ruby = await executeTool(tool('repl'), { language: 'ruby', code: 'puts 1' });
    expect(ruby).toMatchObject({ isError: true, errorKind: 'invalid-args' });
    expect(JSON.stringify(ruby.content)).toContain(
      'unsupported REPL language: ruby (offered: javascript)',
    );
    // Python is not offered here, so it is refused the same way, before anything runs.
    const python = await executeTool(tool('repl'), { language: 'python', code: 'print(1)' });
    expect(JSON.stringify(python.content)).toContain('unsupported REPL language: python');
    // A name every object inherits is no language either.
    const inherited = await executeTool(tool('repl'), { language: 'constructor', code: '1' });
    expect(JSON.stringify(inherited.content)).toContain('unsupported REPL language: constructor');
    expect(repl.sessions.every((session) => !session.running)).toBe(true);
  });

  it('claw-code’s timeout example is a timeout', async (context) => {
    skipWithout('python3')(context);
    repl = createReplTools({ cwd, combined: true });
    const slow = await executeTool(tool('repl'), {
      language: 'python',
      code: 'import time\ntime.sleep(1)',
      timeout_ms: 10,
    });
    expect(slow).toMatchObject({ isError: true, errorKind: 'timeout' });
  });

  it('rules see the language with the code', async () => {
    repl = createReplTools({ cwd, combined: true, languages: ['javascript'] });
    expect(
      await tool('repl').permissionSubjects?.({ language: 'javascript', code: '1+1' }),
    ).toEqual(['javascript: 1+1']);
  });
});
