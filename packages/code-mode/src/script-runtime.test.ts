import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineTool, executeTool, toolResultText } from '@agent/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { createCodeModeTool } from './code-mode-tool.js';
import { addTool, hangingTool, runScriptTool } from './test-helpers.js';
import { warmUpCodeMode } from './warm-up.js';

// The runtime on its own terms: what a script can compute, and every way it can fail — each a
// readable error result, never a crash of the host or a hang.

describe('scripts that work', () => {
  it('returns values and prints lines; TypeScript is accepted', async () => {
    const { text, message } = await runScriptTool(
      `const xs: number[] = [1, 2, 3];
       let total = 0;
       for (const x of xs) total = (await tools.add({ a: total, b: x })).sum;
       console.log('total', total);
       console.warn('careful');
       return { total, groups: Object.groupBy(xs, (x) => (x % 2 ? 'odd' : 'even')) };`,
      { tools: [addTool] },
    );
    expect(message.isError).toBe(false);
    expect(text).toBe(
      'total 6\n[warn] careful\n\nReturned:\n{\n  "total": 6,\n  "groups": {\n    "odd": [\n      1,\n      3\n    ],\n    "even": [\n      2\n    ]\n  }\n}',
    );
  });

  it('runs calls together with Promise.all and says when there is no output', async () => {
    const both = await runScriptTool(
      'const r = await Promise.all([1, 2, 3].map((b) => tools.add({ a: 10, b }))); return r.map((x) => x.sum).join(",")',
      { tools: [addTool] },
    );
    expect(both.text).toBe('11,12,13');
    expect((await runScriptTool('const x = 1;')).text).toBe(
      '(no output; the script returned nothing)',
    );
  });

  it('a failed call throws a ToolCallError the script can catch', async () => {
    const { text } = await runScriptTool(
      `try { await tools.add({ a: 'one', b: 2 }) } catch (e) { return [e instanceof ToolCallError, e.tool, e.kind, e.message] }`,
      { tools: [addTool] },
    );
    expect(JSON.parse(text.replace(/\s+/g, ''))).toEqual([
      true,
      'add',
      'invalid-args',
      'Invalidarguments:at"a":expectednumber,receivedstring"one"',
    ]);
  });

  it('an unknown tool, a thrown error and a syntax error are readable', async () => {
    expect((await runScriptTool('await tools.nope({})', { tools: [addTool] })).text).toMatch(
      /^The script failed: ToolCallError: Tool not found: nope \(scripts can call: add\)/,
    );
    expect(
      (
        await runScriptTool(
          'try { await tools.nope() } catch (e) { return [e.kind, typeof tools.then] }',
        )
      ).text,
    ).toBe('[\n  "not-found",\n  "undefined"\n]');
    expect((await runScriptTool('\n\nthrow new RangeError("bad " + 42)')).text).toMatch(
      /^The script failed: RangeError: bad 42\n {2}at <anonymous> \(script\.js:3:/,
    );
    expect((await runScriptTool('const = 1')).text).toMatch(
      /^The script does not parse: SyntaxError: Unexpected token \(1:/,
    );
  });

  it('declarations(…) returns the TypeScript of the named tools', async () => {
    const { text } = await runScriptTool('return declarations("add", "missing")', {
      tools: [addTool],
    });
    expect(text).toContain('add(args: {');
    expect(text).toContain('// No such tools: missing');
  });
});

describe('runaway scripts', () => {
  it.each([
    ['an endless loop', 'while (true) {}'],
    ['an endless loop after a call', 'await tools.add({ a: 1, b: 1 }); for (;;) {}'],
    ['endless microtasks', 'while (true) await null;'],
    ['catastrophic regex backtracking', 'return /(a+)+b/.test("a".repeat(40))'],
    ['a loop that catches the interrupt', 'while (true) { try { while (true) {} } catch {} }'],
  ])('%s is stopped at its CPU limit', async (_name, script) => {
    const { text, message } = await runScriptTool(script, {
      tools: [addTool],
      limits: { cpuTimeMs: 100 },
    });
    expect(message.isError).toBe(true);
    expect(text).toBe(
      'The script failed: The script used more than its 100 ms of CPU time and was stopped (an endless loop?).',
    );
  });

  it('time spent waiting for a tool does not count as CPU time', async () => {
    let release: () => void = () => undefined;
    const slow = defineTool({
      name: 'slow',
      description: 'answers when released',
      input: z.object({}),
      execute: () =>
        new Promise<string>((resolve) => {
          release = () => resolve('"late"');
        }),
    });
    // The script's own slices are timed by the clock: on a busy machine (a CI run's parallel
    // suites) they alone took over 20 ms, so the limit leaves room for them.
    const pending = runScriptTool('return await tools.slow({})', {
      tools: [slow],
      limits: { cpuTimeMs: 400 },
    });
    // Well past the CPU limit in wall time before the tool answers.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    release();
    expect((await pending).text).toBe('"late"');
  });

  it.each([
    ['a growing array', 'const a = []; while (true) a.push(new Array(10000).fill(a.length));'],
    ['growing buffers', 'const a = []; while (true) a.push(new Uint8Array(1 << 20));'],
    [
      'a growing object',
      'const o = {}; for (let i = 0; ; i++) o["key" + i] = { i, s: String(i).padStart(64, "0") };',
    ],
    ['a huge buffer', 'return new ArrayBuffer(512 * 1024 * 1024).byteLength'],
    ['a huge array', 'return new Array(1e8).fill(0).length'],
  ])('%s runs out of memory', async (_name, script) => {
    // The CPU limit well past what filling 16 MB takes: on a loaded CI machine the default 5 s
    // ran out first (the growing object).
    const { text, message } = await runScriptTool(script, {
      limits: { memoryBytes: 16 * 1024 * 1024, cpuTimeMs: 120_000 },
    });
    expect(message.isError).toBe(true);
    expect(text).toMatch(/^The script failed: The script ran out of memory \(limit 16 MB\)/);
  });

  it.each([
    [
      'recursion',
      'function f(n) { return f(n + 1) + 1 }\nreturn f(0)',
      /InternalError: stack overflow\n {2}at f \(script\.js:1:\d+\) \(×\d+\)/,
    ],
    [
      'deeply nested data',
      'let a = []; for (let i = 0; i < 100000; i++) a = [a]; return JSON.stringify(a).length',
      /nested too deeply|stack overflow/,
    ],
    [
      'deeply nested code',
      'return eval("(".repeat(100000) + "1" + ")".repeat(100000))',
      /nested too deeply|stack overflow/,
    ],
  ])(
    '%s is stopped with a readable error, and the next script runs',
    async (_name, script, expected) => {
      const { text, message } = await runScriptTool(script);
      expect(message.isError).toBe(true);
      expect(text).toMatch(expected);
      expect((await runScriptTool('return 1 + 1')).text).toBe('2');
    },
  );

  it("a string past the engine's length limit is a readable error", async () => {
    const { text } = await runScriptTool('let s = "x"; while (true) s = s + s;');
    expect(text).toMatch(
      /^The script failed: (InternalError: string too long|The script ran out of memory)/,
    );
  });

  it('a promise nothing can settle ends the script instead of hanging', async () => {
    const { text } = await runScriptTool('await new Promise(() => {}); return 1');
    expect(text).toBe(
      'The script failed: The script is waiting for a promise that nothing can settle (no tool call is running). Await only tool calls.',
    );
  });

  it('output past the limit is dropped with a note; the result stays small', async () => {
    const { text } = await runScriptTool(
      'for (let i = 0; i < 10000; i++) console.log("line " + i + " " + "x".repeat(50)); return "x".repeat(100000)',
      { limits: { maxOutputChars: 2_000 } },
    );
    expect(text.length).toBeLessThan(4_000);
    expect(text).toMatch(/\[output truncated: \d+ more characters over the 2000-character limit/);
    expect(text).toContain('characters clipped');
  });

  it('a script over its call limit gets errors, not more calls', async () => {
    const { text } = await runScriptTool(
      'let ok = 0, refused = ""; for (let i = 0; i < 10; i++) { try { await tools.add({ a: i, b: 0 }); ok++ } catch (e) { refused = e.message } } return ok + " " + refused',
      { tools: [addTool], limits: { maxCalls: 3 } },
    );
    expect(text).toBe('3 Not executed: a script may make at most 3 tool calls');
  });

  it('runs at most maxConcurrentCalls calls at once', async () => {
    let running = 0;
    let most = 0;
    const counted = defineTool({
      name: 'counted',
      description: 'counts overlapping calls',
      input: z.object({}),
      execute: async () => {
        running++;
        most = Math.max(most, running);
        await new Promise((resolve) => setImmediate(resolve));
        running--;
        return 'ok';
      },
    });
    await runScriptTool('await Promise.all(Array.from({ length: 20 }, () => tools.counted({})))', {
      tools: [counted],
      limits: { maxConcurrentCalls: 3 },
    });
    expect(most).toBe(3);
  });
});

describe('abort', () => {
  it('aborting stops a script that keeps calling tools', async () => {
    const controller = new AbortController();
    let calls = 0;
    const counter = defineTool({
      name: 'tick',
      description: 'counts; the tenth call aborts the run',
      input: z.object({}),
      execute: async () => {
        calls++;
        if (calls === 10) controller.abort();
        return 'ok';
      },
    });
    const { text, message } = await runScriptTool('while (true) await tools.tick({})', {
      tools: [counter],
      signal: controller.signal,
      limits: { cpuTimeMs: 60_000 },
    });
    expect(message.errorKind).toBe('cancelled');
    expect(text).toBe('Cancelled');
    expect(calls).toBe(10);
  });

  it('aborting stops a script waiting on a call, and aborts that call', async () => {
    const controller = new AbortController();
    let aborted = false;
    const tool = hangingTool({
      started: () => controller.abort(),
      aborted: () => {
        aborted = true;
      },
    });
    const { text } = await runScriptTool('await tools.hang({}); console.log("never")', {
      tools: [tool],
      signal: controller.signal,
    });
    expect(text).toBe('Cancelled');
    expect(aborted).toBe(true);
  });
});

describe('isolation: no filesystem, network or process of its own', () => {
  let server: Server;
  let port = 0;
  let connections = 0;
  let dir = '';
  const secret = 'top-secret-value-4711';

  beforeAll(async () => {
    server = createServer((_request, response) => response.end(secret));
    server.on('connection', () => {
      connections++;
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    port = typeof address === 'object' && address !== null ? address.port : 0;
    dir = await mkdtemp(join(tmpdir(), 'code-mode-isolation-'));
    await writeFile(join(dir, 'secret.txt'), secret);
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });

  const probes = (url: string, file: string): [string, string][] => [
    ['fetch', `return await fetch(${JSON.stringify(url)}).then((r) => r.text())`],
    [
      'XMLHttpRequest',
      `const x = new XMLHttpRequest(); x.open('GET', ${JSON.stringify(url)}, false); x.send(); return x.responseText`,
    ],
    ['WebSocket', `return new WebSocket(${JSON.stringify(url.replace('http', 'ws'))})`],
    ['dynamic import over http', `return await import(${JSON.stringify(url)})`],
    [
      'dynamic import of node:http',
      `const http = await import('node:http'); return http.get(${JSON.stringify(url)})`,
    ],
    ['require', `return require('node:fs').readFileSync(${JSON.stringify(file)}, 'utf8')`],
    ['process.binding', 'return process.binding("fs")'],
    [
      'the host through a constructor',
      `return this.constructor.constructor('return process')().mainModule.require('fs').readFileSync(${JSON.stringify(file)}, 'utf8')`,
    ],
    ['the host through Function', `return Function('return globalThis.process')().env`],
    ['a function of tools', `return tools.constructor.constructor('return require')()('fs')`],
    [
      'the std module',
      `const std = await import('std'); return std.loadFile(${JSON.stringify(file)})`,
    ],
    ['the os module', `const os = await import('os'); return os.open(${JSON.stringify(file)}, 0)`],
    ['std as a global', `return std.loadFile(${JSON.stringify(file)})`],
    ['os as a global', `return os.exec(['cat', ${JSON.stringify(file)}])`],
    ['Deno', `return Deno.readTextFileSync(${JSON.stringify(file)})`],
    ['Bun', `return Bun.file(${JSON.stringify(file)}).text()`],
    ['eval of an import', `return await eval("import('fs')")`],
    ['importScripts', `importScripts(${JSON.stringify(url)})`],
    ['navigator.sendBeacon', `navigator.sendBeacon(${JSON.stringify(url)}, 'x')`],
    ['setTimeout', 'setTimeout(() => {}, 1)'],
    [
      'the host functions',
      'return [typeof hostCall, typeof hostPrint, typeof __call, typeof call]',
    ],
  ];

  it('every way out fails inside the script, and the server and the file are never reached', async () => {
    const url = `http://127.0.0.1:${port}/`;
    const file = join(dir, 'secret.txt');
    for (const [name, script] of probes(url, file)) {
      const { text } = await runScriptTool(
        `try { ${script} } catch (e) { return 'blocked: ' + e }`,
      );
      expect(text, name).not.toContain(secret);
      if (name === 'the host functions')
        expect(text).toBe('[\n  "undefined",\n  "undefined",\n  "undefined",\n  "undefined"\n]');
      else expect(text, name).toMatch(/^blocked: |^The script (failed|does not parse)/);
    }
    expect(connections).toBe(0);
  });

  it('globals a script can see are only the language and its own', async () => {
    const { text } = await runScriptTool(
      'return Object.getOwnPropertyNames(globalThis).filter((name) => !/^[A-Z]/.test(name)).sort().join(" ")',
    );
    expect(text.split(' ')).toEqual(
      expect.not.arrayContaining(['process', 'require', 'fetch', 'std', 'os', 'hostCall']),
    );
    expect(text.split(' ')).toEqual(expect.arrayContaining(['console', 'declarations', 'tools']));
  });

  it('a script cannot replace the tools object or console for itself', async () => {
    const { text } = await runScriptTool(
      `'use strict'; try { tools = 1 } catch (e) { return 'refused: ' + e.name }`,
    );
    expect(text).toBe('refused: TypeError');
  });
});

describe('each script starts fresh: nothing one leaves behind reaches the next', () => {
  // One tool, one process, the WebAssembly module compiled once: each script still gets its own
  // instance, so what a script changes dies with it.
  const tool = createCodeModeTool({ tools: [addTool] });
  const run = async (script: string) =>
    toolResultText((await executeTool(tool, { script })).content);
  const fingerprint = `const sum = (await tools.add({ a: 1, b: 2 })).sum;
    return [sum, typeof globalThis.leak, typeof leak, ({}).leak, [1, 2].map((x) => x + 1),
    JSON.stringify({ a: 1 }), String(Promise.prototype.then).includes('[native code]'), 'ab'.toUpperCase(),
    ToolCallError.prototype.leak, tools.add.leak, String(new Error('e')), Object.keys(globalThis).sort(),
    typeof Symbol.leak, Reflect.ownKeys(Object.prototype).length, Object.isFrozen(Object.prototype)]`;
  const polluters: [string, string][] = [
    ['a global', "globalThis.leak = 'secret'; var leak2 = 'secret'"],
    ['a global let', "leak = 'secret'"],
    ['Object.prototype', "Object.prototype.leak = 'secret'"],
    ['Array.prototype.map', "Array.prototype.map = () => ['secret']"],
    ['JSON.stringify', 'JSON.stringify = () => \'"secret"\''],
    ['Promise.prototype.then', 'Promise.prototype.then = function () { return "secret" }'],
    ['String.prototype', "String.prototype.toUpperCase = () => 'secret'"],
    ['ToolCallError.prototype', "ToolCallError.prototype.leak = 'secret'"],
    ['a tool function', "tools.add.leak = 'secret'"],
    ['Error.prototype.toString', "Error.prototype.toString = () => 'secret'"],
    ['Symbol', "Symbol.leak = 'secret'"],
    ['a big value left behind', "globalThis.big = 'secret'.repeat(1_000_000)"],
    [
      'a call left running',
      "tools.add({ a: 1, b: 1 }).then(() => { globalThis.leak = 'secret' }); return 'left'",
    ],
    [
      'a frozen Object.prototype',
      'Object.freeze(Object.prototype); Object.freeze(Array.prototype)',
    ],
  ];

  it.each(polluters)(
    'after a script that changes %s, the next sees the language as new',
    async (_name, polluter) => {
      const baseline = await run(fingerprint);
      expect(baseline).not.toContain('secret');
      // The fingerprint does see the change within the script that makes it.
      expect(await run(`${polluter.replace("return 'left'", '')};\n${fingerprint}`)).not.toBe(
        baseline,
      );
      await run(polluter);
      expect(await run(fingerprint)).toBe(baseline);
    },
  );

  it('the warm-up runs once per process, resolves, and its script leaves nothing behind', async () => {
    const warming = warmUpCodeMode();
    expect(warmUpCodeMode()).toBe(warming);
    await expect(warming).resolves.toBeUndefined();
    const fresh = createCodeModeTool({ tools: [addTool], warmUp: false });
    const seen = toolResultText((await executeTool(fresh, { script: fingerprint })).content);
    expect(seen).toBe(await run(fingerprint));
    expect(seen).not.toContain('values');
  });

  it('two scripts running at once do not see each other', async () => {
    const baseline = await run(fingerprint);
    const [, second] = await Promise.all([
      run(
        `globalThis.leak = 'secret'; Object.prototype.leak = 'secret'; await tools.add({ a: 1, b: 1 }); return 'done'`,
      ),
      run(`await tools.add({ a: 0, b: 0 }); ${fingerprint.replace('return ', 'return ')}`),
    ]);
    expect(second).toBe(baseline);
  });
});

describe('no leak after 1,000 scripts', () => {
  it('memory and handles stay flat', async () => {
    const { setFlagsFromString } = await import('node:v8');
    const { runInNewContext } = await import('node:vm');
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const scripts = [
      'return (await tools.add({ a: 1, b: 2 })).sum',
      'throw new Error("x")',
      'let s = ""; for (let i = 0; i < 1000; i++) s += i; return s.length',
      'await new Promise(() => {})',
    ];
    const runMany = async (count: number) => {
      for (let index = 0; index < count; index++) {
        await runScriptTool(scripts[index % scripts.length] as string, { tools: [addTool] });
      }
    };
    await runMany(100);
    gc();
    const before = process.memoryUsage();
    const handlesBefore = process.getActiveResourcesInfo().length;
    await runMany(1_000);
    gc();
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    const after = process.memoryUsage();
    expect(process.getActiveResourcesInfo().length).toBeLessThanOrEqual(handlesBefore);
    // Each script gets its own WebAssembly instance (16 MiB of linear memory): a leak of one
    // per script would be ~16 GB; what remains is allocator noise.
    expect((after.rss - before.rss) / 1024 / 1024).toBeLessThan(200);
    expect((after.heapUsed - before.heapUsed) / 1024 / 1024).toBeLessThan(50);
  }, 180_000);
});
