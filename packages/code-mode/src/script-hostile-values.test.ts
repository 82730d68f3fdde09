import { createPermissionGate, defineTool } from '@agent/core';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { runScriptTool } from './test-helpers.js';

// Values a hostile script hands back to the host — what it throws, returns or prints — carry its
// own code (getters, `toJSON`, `toString`, Proxy traps, replaced globals). That code runs inside
// the interpreter under the CPU limit, never in the host: before, reading a thrown object's
// fields ran its getters in the host with no limit, and one endless getter froze the process for
// good (no timer, no abort). A regression hangs this file rather than failing an assertion.

const cpuLimit =
  'The script failed: The script used more than its 100 ms of CPU time and was stopped (an endless loop?).';

describe('endless code in a value the host reads is stopped at the CPU limit', () => {
  it.each([
    ['a thrown object with an endless toJSON', 'throw { toJSON() { for (;;) {} } }'],
    ['a thrown object with an endless message getter', 'throw { get message() { for (;;) {} } }'],
    ['a thrown object with an endless name getter', 'throw { get name() { for (;;) {} } }'],
    [
      'an error with an endless stack getter',
      'const e = new Error("x"); Object.defineProperty(e, "stack", { get() { for (;;) {} } }); throw e',
    ],
    ['a thrown Proxy whose traps never end', 'throw new Proxy({}, { get() { for (;;) {} } })'],
    [
      'a rejected promise with an endless getter',
      'await Promise.reject({ get message() { for (;;) {} } })',
    ],
    ['a returned object with an endless toJSON', 'return { toJSON() { for (;;) {} } }'],
    ['a returned object with an endless getter', 'return { get x() { for (;;) {} } }'],
    [
      'a returned value whose toString never ends',
      'return { toJSON() { return undefined }, toString() { for (;;) {} } }',
    ],
    ['a printed object with an endless toJSON', 'console.log({ toJSON() { for (;;) {} } })'],
    [
      'a returned value whose toJSON throws and whose toString never ends',
      'return { toJSON() { throw 1 }, toString() { for (;;) {} } }',
    ],
  ])('%s', async (_name, script) => {
    const { text, message } = await runScriptTool(script, { limits: { cpuTimeMs: 100 } });
    expect(message.isError).toBe(true);
    expect(text).toBe(cpuLimit);
  });
});

describe('odd values thrown or returned are described, not trusted', () => {
  it.each([
    ['a number', 'throw 5', 'The script failed: Uncaught 5'],
    ['a symbol', 'throw Symbol("q")', 'The script failed: Uncaught Symbol(q)'],
    ['null', 'throw null', 'The script failed: Uncaught null'],
    ['a plain object', 'throw { a: 1 }', 'The script failed: Error: {\n  "a": 1\n}'],
    [
      'fields that are not strings',
      'throw { name: 42, message: { text: "m" } }',
      'The script failed: Error: {\n  "name": 42,\n  "message": {\n    "text": "m"\n  }\n}',
    ],
    [
      'getters that throw',
      'throw { get name() { throw 1 }, get message() { throw 2 }, toJSON() { throw 3 } }',
      'The script failed: Error: [object Object]',
    ],
    [
      'an error after the script replaced String and JSON',
      'String = 1; JSON.stringify = 3; throw new TypeError("typed")',
      'The script failed: TypeError: typed\n  at <anonymous> (script.js:1:66)',
    ],
  ])('%s', async (_name, script, expected) => {
    const { text, message } = await runScriptTool(script);
    expect(message.isError).toBe(true);
    expect(text.split('\n  at <eval>')[0]).toBe(expected);
  });

  it.each([
    [
      'JSON.stringify replaced by one returning an object with an endless toJSON',
      'JSON.stringify = () => ({ toJSON() { for (;;) {} } }); return { a: 1 }',
      '{\n  "a": 1\n}',
    ],
    [
      'console.log after Array.prototype.join returns an object',
      'Array.prototype.join = () => ({ toString() { for (;;) {} } }); console.log("hi"); return 1',
      'hi\n\nReturned:\n1',
    ],
  ])('%s: the host reads only strings', async (_name, script, expected) => {
    const { text } = await runScriptTool(script, { limits: { cpuTimeMs: 100 } });
    expect(text).toBe(expected);
  });
});

describe('arguments cross once, as JSON: the tool runs on exactly what the gate saw', () => {
  it.each([
    [
      'a getter that answers differently on each read',
      'let n = 0; return await tools.echo({ get path() { return n++ === 0 ? "notes/a.md" : "/etc/passwd" } })',
    ],
    [
      'a Proxy that answers differently on each read',
      'let n = 0; return await tools.echo(new Proxy({}, { ownKeys: () => ["path"], getOwnPropertyDescriptor: () => ({ value: "x", enumerable: true, configurable: true }), get: (_t, key) => key === "path" ? (n++ === 0 ? "notes/a.md" : "/etc/passwd") : undefined }))',
    ],
    [
      'a toJSON that answers differently on each call',
      'let n = 0; return await tools.echo({ toJSON() { return { path: n++ === 0 ? "notes/a.md" : "/etc/passwd" } } })',
    ],
    [
      'arguments changed after the call started',
      'const args = { path: "notes/a.md" }; const call = tools.echo(args); args.path = "/etc/passwd"; await null; return await call',
    ],
  ])('%s', async (_name, script) => {
    const approved: unknown[] = [];
    const ran: string[] = [];
    const echo = defineTool({
      name: 'echo',
      description: 'Echoes a path.',
      input: z.object({ path: z.string() }),
      policy: { permission: 'workspace-write' },
      permissionSubjects: ({ path }) => [path],
      execute: async ({ path }) => {
        ran.push(path);
        return path;
      },
    });
    const { text } = await runScriptTool(script, {
      tools: [echo],
      permissionGate: createPermissionGate({
        allow: ['run_script'],
        approver: (request) => {
          approved.push(request.args);
          return 'once';
        },
      }),
    });
    expect(approved).toEqual([{ path: 'notes/a.md' }]);
    expect(ran).toEqual(['notes/a.md']);
    expect(text).toBe('notes/a.md');
  });
});

describe('declarations(…) asked for a flood of names', () => {
  it('looks at 200 names at most and says how many it did not know', async () => {
    const { text } = await runScriptTool(
      'const names = Array.from({ length: 60000 }, (_, i) => "missing" + i); names.push("echo"); let last; for (let i = 0; i < 20; i++) last = declarations(...names); return last.length + " " + last.split("\\n").pop()',
      { limits: { cpuTimeMs: 60_000 } },
    );
    expect(text).toMatch(
      /^\d+ \/\/ No such tools: missing0, missing1, .*, missing19 and 180 more$/,
    );
  });
});
