import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { executeTool, PermissionPolicy, toolResultText } from '@agent/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createReplTools, findExecutable, type ReplTools } from './repl-tools.js';

// Permission rules on REPL code. An allow rule's pattern was matched as a glob against the cell:
// `js_repl(6 *)` — the example the README gave — allowed `6 * 7; <anything>`, and
// `python_repl(len(*)` allowed `len([1]); open(…, 'w')`. A pattern cannot bound what code does,
// so an allow rule covers code only when it is the code written in the rule, literally (`*` is a
// character there); deny and ask rules still match as patterns (the safe direction). Each hostile cell below writes a file: none may appear.

const hasPython = findExecutable('python3') !== undefined;

let cwd: string;
let repl: ReplTools | undefined;
beforeEach(async () => {
  cwd = await mkdtemp(path.join(tmpdir(), 'repl-rules-'));
});
afterEach(async () => {
  await repl?.close();
  repl = undefined;
  await rm(cwd, { recursive: true, force: true });
});

async function run(
  rules: { allow?: string[]; deny?: string[]; ask?: string[] },
  name: string,
  code: string,
): Promise<string> {
  repl ??= createReplTools({ cwd, ...(hasPython ? {} : { languages: ['javascript'] }) });
  const combined = name === 'repl';
  const tools = combined
    ? createReplTools({ cwd, combined: true, languages: ['javascript'] }).tools
    : repl.tools;
  const tool = tools.find((candidate) => candidate.name === name);
  if (tool === undefined) throw new Error(`no ${name}`);
  const policy = new PermissionPolicy({ mode: 'workspace-write', ...rules });
  const args = combined ? { code, language: 'javascript' } : { code };
  const result = await executeTool(tool, args, { permissionGate: policy.gate });
  return result.isError ? `${result.errorKind}` : toolResultText(result.content);
}

const js = (file: string) => `require('node:fs').writeFileSync(${JSON.stringify(file)}, 'x')`;
const py = (file: string) => `open(${JSON.stringify(file)}, 'w').write('x')`;

describe('a pattern allow rule never lets other code through', () => {
  const cases: [string, string, (file: string) => string][] = [
    ['js_repl(6 *)', 'js_repl', (file) => `6 * 7; ${js(file)}`],
    ['js_repl(6 *)', 'js_repl', (file) => `6 * (${js(file)}, 7)`],
    ['js_repl(Math.max(*))', 'js_repl', (file) => `Math.max(1, ${js(file)} || 2)`],
    ['js_repl(*7)', 'js_repl', (file) => `${js(file)}; 7`],
    ['python_repl(len(*)', 'python_repl', (file) => `len([1]); ${py(file)}`],
    ['python_repl(len(*)', 'python_repl', (file) => `len("""\n"""); ${py(file)}`],
    ['python_repl(print(*)', 'python_repl', (file) => `print(${py(file)})`],
    ['repl(javascript: 1*)', 'repl', (file) => `1; ${js(file)}`],
  ];
  it.each(cases)('allow %s, %s', async (rule, name, cell) => {
    if (name === 'python_repl' && !hasPython) return;
    const file = path.join(cwd, 'written');
    // Denied: the rule does not cover the call, and there is no one to ask.
    expect(await run({ allow: [rule] }, name, cell(file))).toBe('denied');
    expect(await readdir(cwd)).toEqual([]);
  });

  it('the exact code a rule names is allowed; the bare tool name or tool(*) allows every cell', async () => {
    expect(await run({ allow: ['js_repl(6 * 7)'] }, 'js_repl', '6 * 7')).toContain('=> 42');
    expect(await run({ allow: ['js_repl(6 * 7)'] }, 'js_repl', '6 * 7 ')).toBe('denied');
    expect(await run({ allow: ['js_repl(6 *)'] }, 'js_repl', '6 * 7')).toBe('denied');
    expect(await run({ allow: ['js_repl'] }, 'js_repl', '6 * 8')).toContain('=> 48');
    expect(await run({ allow: ['js_repl(*)'] }, 'js_repl', '6 * 9')).toContain('=> 54');
    expect(await run({ allow: ['repl(javascript: 1 + 1)'] }, 'repl', '1 + 1')).toContain('=> 2');
  });

  it('deny and ask rules still match as patterns', async () => {
    expect(
      await run(
        { allow: ['js_repl'], deny: ['js_repl(*writeFile*)'] },
        'js_repl',
        js(path.join(cwd, 'x')),
      ),
    ).toBe('denied');
    expect(
      await run(
        { allow: ['js_repl'], ask: ['js_repl(*require*)'] },
        'js_repl',
        "require('node:os')",
      ),
    ).toBe('denied');
    expect(await readdir(cwd)).toEqual([]);
  });

  it('a pattern allow rule on a REPL tool is reported for what it allows', () => {
    repl = createReplTools({ cwd, languages: ['javascript'] });
    const policy = new PermissionPolicy({
      allow: ['js_repl(6 *)', 'js_repl(1 + 1)', 'js_repl(*)', 'js_repl'],
    });
    expect(policy.unmatchableRules(repl.tools)).toEqual([
      'allow rule "js_repl(6 *)" allows only the code written in it: js_repl runs code, which no pattern can bound, so "*" there is a literal character, not a wildcard (allow the tool by name to allow every call)',
    ]);
  });
});
