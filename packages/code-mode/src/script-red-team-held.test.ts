import { createPermissionGate, defineTool, type PermissionPolicyOptions } from '@agent/core';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { addTool, runScriptTool } from './test-helpers.js';

// Attacks of a hostile or careless script that held when tried (the red team of code mode); the
// holes it found, fixed, are in script-red-team.test.ts. Each row is the script and what the
// model reads back.

const cpuLimit = (ms: number) =>
  `The script failed: The script used more than its ${ms} ms of CPU time and was stopped (an endless loop?).`;

describe('escapes and hostile values', () => {
  it.each([
    [
      'the host through constructors',
      'return [typeof process, typeof require, typeof globalThis.process, (function(){}).constructor("return typeof process")(), await tools.add.constructor("return typeof require")()].join(" ")',
      'undefined undefined undefined undefined undefined',
    ],
    [
      'the prelude through the tools Proxy and its functions',
      'return [String(Object.getPrototypeOf(tools)), Object.keys(tools).join(), Object.getOwnPropertyNames(tools.add).join()].join(" ")',
      'null add length,name',
    ],
    [
      'a dynamic import of a node module',
      'try { await import("node:fs"); return "imported" } catch (e) { return e.name }',
      'ReferenceError',
    ],
    ['WebAssembly to grow past the memory limit', 'return typeof WebAssembly', 'undefined'],
    [
      'timers to outlive the script',
      'return [typeof setTimeout, typeof setInterval, typeof queueMicrotask].join(" ")',
      'undefined undefined undefined',
    ],
    ['a cyclic returned value', 'const a = {}; a.self = a; return a', '[object Object]'],
    ['a returned BigInt', 'return 5n', '5n'],
    [
      'a returned sparse array',
      'const a = []; a[3] = 1; return a',
      '[\n  null,\n  null,\n  null,\n  1\n]',
    ],
    ['a returned symbol', 'return Symbol("s")', 'Symbol(s)'],
    [
      'a returned thenable that never settles',
      'return { then() {} }',
      'The script failed: The script is waiting for a promise that nothing can settle (no tool call is running). Await only tool calls.',
    ],
    ['a rejection nobody handles', 'Promise.reject(new Error("x")); return 1', '1'],
    [
      'a BigInt in the arguments',
      'try { await tools.add({ a: 1n, b: 2 }) } catch (e) { return e.name + ": " + e.message }',
      'TypeError: Do not know how to serialize a BigInt',
    ],
    [
      'a cyclic argument',
      'const a = { a: 1, b: 2 }; a.self = a; try { await tools.add(a) } catch (e) { return e.name }',
      'TypeError',
    ],
    [
      'a __proto__ key in the arguments',
      'try { await tools.add(JSON.parse(\'{"a":1,"b":2,"__proto__":{"polluted":1}}\')) } catch (e) { return e.kind + " " + e.message }',
      'invalid-args Invalid arguments: at "(root)": unknown field "__proto__" (known fields: a, b)',
    ],
    [
      'a tool name off the prototype',
      'try { await tools.constructor({}) } catch (e) { return e.kind }',
      'not-found',
    ],
  ])('%s', async (_name, script, expected) => {
    const { text } = await runScriptTool(script, {
      tools: [addTool],
      permissionGate: createPermissionGate({ mode: 'full-access' }),
    });
    expect(text.split('\n  at ')[0]).toBe(expected);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('runaway scripts', () => {
  it.each([
    ['an endless loop in a finally', 'try { return 1 } finally { for (;;) {} }'],
    [
      'an endless getter the script itself reads',
      'const o = { get x() { for (;;) {} } }; return o.x',
    ],
    ['an endless loop of unawaited calls', 'for (;;) tools.add({ a: 1, b: 2 })'],
    ['an endless loop of declarations()', 'for (;;) declarations()'],
  ])('%s is stopped at the CPU limit', async (_name, script) => {
    const { text } = await runScriptTool(script, {
      tools: [addTool],
      limits: { cpuTimeMs: 200 },
      permissionGate: createPermissionGate({ mode: 'full-access' }),
    });
    expect(text.split('\n\n')[0]).toBe(cpuLimit(200));
  });

  it('an output flood keeps the result within its limit', async () => {
    const { text } = await runScriptTool('for (;;) console.log("x".repeat(1000))', {
      limits: { cpuTimeMs: 200, maxOutputChars: 5_000 },
    });
    expect(text.length).toBeLessThan(5_500);
    expect(text).toMatch(/\[output truncated: \d+ more characters over the 5000-character limit/);
  });

  it('10,000 calls at once run at most maxCalls times', async () => {
    let ran = 0;
    const counted = defineTool({
      name: 'counted',
      description: 'Counts its runs.',
      input: z.object({}),
      policy: { permission: 'read-only' },
      execute: async () => String(++ran),
    });
    const { text } = await runScriptTool(
      `const all = await Promise.allSettled(Array.from({ length: 10000 }, () => tools.counted({})));
       return all.filter((each) => each.status === 'fulfilled').length`,
      { tools: [counted], limits: { maxCalls: 1_000 } },
    );
    expect(text).toBe('1000');
    expect(ran).toBe(1_000);
  });
});

describe('the gate inside scripts', () => {
  const writeNote = defineTool({
    name: 'write_note',
    description: 'Writes a note.',
    input: z.object({ path: z.string() }),
    policy: { permission: 'workspace-write' },
    permissionSubjects: ({ path }) => [path],
    aliases: ['save_note'],
    execute: async ({ path }) => `wrote ${path}`,
  });
  const script = `const out = [];
    for (const [name, path] of [["write_note", "a.md"], ["write_note", "a.md"], ["write_note", "b.md"], ["save_note", "c.md"]]) {
      try { out.push(await tools[name]({ path })) } catch (e) { out.push(e.kind) }
    }
    return out.join(" | ")`;

  it.each<[string, PermissionPolicyOptions, string, string[]]>([
    [
      'plan mode refuses writes, whoever asks',
      { mode: 'plan', allow: ['run_script'], approver: () => 'once' },
      'denied | denied | denied | not-found',
      [],
    ],
    [
      '"always" for one subject does not widen to another; an alias is not a way round',
      { allow: ['run_script'], approver: () => 'always' },
      'wrote a.md | wrote a.md | wrote b.md | not-found',
      ['write_note a.md', 'write_note b.md'],
    ],
    [
      'a deny rule holds for every call, and an alias is not callable',
      { mode: 'full-access', deny: ['write_note(b.md)'] },
      'wrote a.md | wrote a.md | denied | not-found',
      [],
    ],
  ])('%s', async (_name, policy, expected, expectedAsked) => {
    const asked: string[] = [];
    const approver = policy.approver;
    const { text } = await runScriptTool(script, {
      tools: [writeNote],
      permissionGate: createPermissionGate({
        ...policy,
        ...(approver === undefined
          ? {}
          : {
              approver: (request, context) => {
                asked.push(`${request.toolName} ${request.subjects.join(',')}`);
                return approver(request, context);
              },
            }),
      }),
    });
    expect(text).toBe(expected);
    expect(asked).toEqual(expectedAsked);
  });
});
