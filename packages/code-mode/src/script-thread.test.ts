import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { defineTool } from '@agent/core';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { addTool, runScriptTool } from './test-helpers.js';

// Scripts run in a worker thread the agent's thread watches. QuickJS checks for an interrupt only
// every ~10,000 interpreter steps, and one step can be a call into its C code that takes
// milliseconds to tens of milliseconds: on the agent's own thread, a loop of a few thousand such
// calls ran far past its CPU limit (3,000 searches of a 4 MB string: ~19 s against a 100 ms
// limit) and froze the agent meanwhile — no timer, no abort. Each loop below is finite: before,
// it returned its value long after its limit; now its worker is ended at the limit.

const cpuLimit = (ms: number) =>
  `The script failed: The script used more than its ${ms} ms of CPU time and was stopped (an endless loop?).`;

describe('a script busy in the engine’s C code is stopped at its CPU limit', () => {
  it.each([
    [
      'searching a long string',
      'const s = "a".repeat(1 << 22); for (let i = 0; i < 3000; i++) s.indexOf("b")',
    ],
    [
      'searching backwards',
      'const s = "a".repeat(1 << 22); for (let i = 0; i < 3000; i++) s.lastIndexOf("ab")',
    ],
    ['building long strings', 'for (let i = 0; i < 3000; i++) "xy".repeat(1 << 22).length'],
    [
      'sorting a big typed array',
      'const a = new Float64Array(1 << 21).map((_, i) => (i * 7919) % 1000003); for (let i = 0; i < 2000; i++) a.slice().sort()',
    ],
    [
      'serialising a big array',
      'const a = Array.from({ length: 1 << 18 }, (_, i) => i); for (let i = 0; i < 3000; i++) JSON.stringify(a)',
    ],
    [
      'normalising a long string',
      'const s = "é".repeat(1 << 20); for (let i = 0; i < 3000; i++) s.normalize("NFD")',
    ],
  ])('%s', async (_name, script) => {
    const { text, message } = await runScriptTool(`${script}; return "finished"`, {
      limits: { cpuTimeMs: 100 },
    });
    expect(message.isError).toBe(true);
    expect(text).toBe(cpuLimit(100));
    // The worker that was ended is replaced: the next script runs.
    expect((await runScriptTool('return 6 * 7')).text).toBe('42');
  });

  it('what a stopped script printed before is kept', async () => {
    const { text } = await runScriptTool(
      'console.log("step 1"); const s = "a".repeat(1 << 22); for (let i = 0; i < 3000; i++) s.indexOf("b"); return "finished"',
      { limits: { cpuTimeMs: 100 } },
    );
    expect(text).toBe(`${cpuLimit(100)}\n\nOutput before it stopped:\nstep 1`);
  });
});

describe('the agent’s thread is never blocked by a script', () => {
  it.each([
    ['an endless loop', 'for (;;) {}'],
    ['endless calls into C code', 'const s = "a".repeat(1 << 22); for (;;) s.indexOf("b")'],
    ['an endless getter read at the end', 'throw { get message() { for (;;) {} } }'],
  ])('an abort reaches a script running %s', async (_name, body) => {
    const controller = new AbortController();
    // The script tells us it started; the abort comes from a timer of this thread, which a script
    // computing on this thread would never let run.
    const started = defineTool({
      name: 'started',
      description: 'aborts the run soon after it is called',
      input: z.object({}),
      execute: async () => {
        setImmediate(() => setImmediate(() => controller.abort()));
        return 'ok';
      },
    });
    const { text, message } = await runScriptTool(`await tools.started({}); ${body}`, {
      tools: [started],
      signal: controller.signal,
      limits: { cpuTimeMs: 600_000 },
    });
    expect(message.errorKind).toBe('cancelled');
    expect(text).toBe('Cancelled');
  });

  it('scripts running at once each get their own worker', async () => {
    const results = await Promise.all([
      runScriptTool('for (;;) {}', { limits: { cpuTimeMs: 100 } }),
      runScriptTool('return (await tools.add({ a: 2, b: 3 })).sum', { tools: [addTool] }),
      runScriptTool('return declarations("add")', { tools: [addTool] }),
    ]);
    expect(results.map((result) => result.text)).toEqual([
      cpuLimit(100),
      '5',
      expect.stringContaining('add(args: {'),
    ]);
  });
});

describe('the CPU limit counts CPU time, not time on a busy machine', () => {
  it('a script that waits its turn for a core is not stopped before it has used its limit', async () => {
    // Three busy processes per core: this process's threads get a third of a core or less, so
    // 1.5 s of the clock on the wall is well under 1 s of CPU time. Counted by the wall clock
    // (as before), the script was stopped at its 1,000 ms "CPU" limit.
    const busy: ChildProcess[] = Array.from({ length: availableParallelism() * 3 }, () =>
      spawn(process.execPath, ['-e', 'for (;;);'], { stdio: 'ignore' }),
    );
    try {
      const { text } = await runScriptTool(
        'const end = Date.now() + 1500; let spins = 0; while (Date.now() < end) spins++; return "done"',
        { limits: { cpuTimeMs: 1_000 } },
      );
      expect(text).toBe('done');
    } finally {
      for (const child of busy) child.kill('SIGKILL');
    }
  });
});

describe('the workers', () => {
  it('an idle worker does not keep the process alive', async () => {
    // A separate process on the package's build: scripts ran (one of them ended by the watchdog),
    // then nothing is left to do — the process must end by itself, not hang on its workers.
    const entry = new URL('../dist/index.js', import.meta.url).href;
    const program = `
      import { executeTool, toolResultText } from '@agent/core';
      const { createCodeModeTool, warmUpCodeMode } = await import(${JSON.stringify(entry)});
      // Compiled first (as while the model answers): the first script's 100 ms is its own.
      await warmUpCodeMode();
      const tool = createCodeModeTool({ tools: [], limits: { cpuTimeMs: 100 } });
      const texts = [];
      for (const script of ['return 1 + 1', 'const s = "a".repeat(1 << 22); for (;;) s.indexOf("b")'])
        texts.push(toolResultText((await executeTool(tool, { script })).content));
      console.log(JSON.stringify(texts));
    `;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--input-type=module', '-e', program],
      { cwd: fileURLToPath(new URL('.', import.meta.url)), timeout: 50_000 },
    );
    expect(JSON.parse(stdout)).toEqual(['2', cpuLimit(100)]);
  });

  it('the engine has no WebAssembly, Atomics or way to block its thread', async () => {
    const { text } = await runScriptTool(
      'return [typeof WebAssembly, typeof Atomics, typeof setTimeout, typeof queueMicrotask, typeof SharedArrayBuffer === "function" ? "sab" : "none"].join(" ")',
    );
    expect(text).toBe('undefined undefined undefined undefined sab');
  });
});

describe('a burst of scripts', () => {
  it('shares at most 16 workers, and no script waits for another to end', async () => {
    const count = 40;
    const threads = () =>
      existsSync('/proc/self/task') ? readdirSync('/proc/self/task').length : undefined;
    const before = threads();
    let arrived = 0;
    let during: number | undefined;
    let release: () => void = () => undefined;
    const barrier = new Promise<void>((resolve) => {
      release = resolve;
    });
    // Answers only once every script has called it: a script kept waiting for a worker would
    // never call it, and the burst would hang.
    const meet = defineTool({
      name: 'meet',
      description: 'waits for every script',
      input: z.object({ id: z.number() }),
      execute: async ({ id }) => {
        arrived++;
        if (arrived === count) {
          during = threads();
          release();
        }
        await barrier;
        return String(id);
      },
    });
    const results = await Promise.all(
      Array.from({ length: count }, (_, id) =>
        runScriptTool(`return await tools.meet({ id: ${id} })`, { tools: [meet] }),
      ),
    );
    expect(results.map((result) => result.text)).toEqual(
      Array.from({ length: count }, (_, id) => String(id)),
    );
    // Linux: a worker is a thread; 40 scripts took 40 before.
    if (before !== undefined && during !== undefined)
      expect(during - before).toBeLessThanOrEqual(16);
  });
});
