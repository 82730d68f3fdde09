import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { executeTool } from '@agent/core';
import { createSandbox, type Sandbox } from '@agent/sandbox';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createReplTools, type ReplTools } from './repl-tools.js';

// python -c puts the working directory first on sys.path, and the workspace is the repository's:
// a cloned repository's json.py or ast.py ran in place of the standard library the Python driver
// imports, as soon as the first cell started the interpreter — the user approved `1+1` and the
// repository's code ran (outside any sandbox when there is none). The driver imports with the
// workspace off sys.path; cells still import the project's own modules.

const shadowed = [
  'ast',
  'json',
  'traceback',
  'contextlib',
  'io',
  'linecache',
  'tokenize',
  'textwrap',
];

let cwd: string;
let repl: ReplTools | undefined;
let sandbox: Sandbox | undefined;
beforeEach(async (context) => {
  skipWithout('python3')(context);
  cwd = await mkdtemp(path.join(tmpdir(), 'repl-modules-'));
  // Each module of the repository leaves a file when imported.
  for (const name of shadowed)
    await writeFile(
      path.join(cwd, `${name}.py`),
      `open(${JSON.stringify(path.join(cwd, `RAN-${name}`))}, 'w').write('x')\n`,
    );
  await writeFile(path.join(cwd, 'project_module.py'), 'VALUE = 41 + 1\n');
});
afterEach(async () => {
  await repl?.close();
  await sandbox?.close();
  repl = undefined;
  sandbox = undefined;
  if (cwd !== undefined) await rm(cwd, { recursive: true, force: true });
});

async function run(code: string): Promise<string> {
  const tool = repl?.tools.find((candidate) => candidate.name === 'python_repl');
  if (tool === undefined) throw new Error('no python_repl');
  const result = await executeTool(tool, { code });
  return result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
}

describe.each([
  ['unsandboxed', false],
  ['sandboxed', true],
] as const)("a workspace's modules named like the standard library, %s", (_label, sandboxed) => {
  if (sandboxed) beforeEach(skipWithout('bwrap'));

  it('do not run when the interpreter starts, nor when a cell fails; the project is still importable', async () => {
    if (sandboxed) sandbox = createSandbox({ mode: 'required', writableRoots: [cwd] });
    repl = createReplTools({
      cwd,
      languages: ['python'],
      ...(sandbox === undefined ? {} : { sandbox }),
    });
    expect(await run('1 + 1')).toContain('2');
    expect(await run('raise ValueError("expected")')).toContain('ValueError: expected');
    expect(await run('import project_module\nproject_module.VALUE')).toContain('42');
    expect((await readdir(cwd)).filter((name) => name.startsWith('RAN-'))).toEqual([]);
    // Control: a cell that imports one of them by name gets the repository's (as Python does).
    await run('import importlib, sys\nsys.modules.pop("textwrap", None)\nimport textwrap');
    expect(existsSync(path.join(cwd, 'RAN-textwrap'))).toBe(true);
  });
});
