// A trusted hook `python3 scripts/hooks/check.py` imports its helper module: both are pinned by
// content (trust-scripts.ts, hook-file-pins.ts). But Python runs a module from its cached
// bytecode when the cache says it matches — and an "unchecked-hash" .pyc is used without looking
// at the source at all. A sandboxed command wrote `scripts/hooks/__pycache__/helpers.*.pyc` (the
// workspace is writable to it), every pinned file stayed byte for byte the same, and the next
// hook ran the planted bytecode as the user, outside the sandbox. Real CLI, real bubblewrap, real
// python3.
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectFileDigests } from '../config/trust-scripts.js';
import type { Turn } from '../testing/messages-server.js';
import { tempDir, testUsers } from '../testing/test-support.js';
import { hookSessionSuite, runHookSession } from '../testing/trusted-hook-session.js';

const cleanups = hookSessionSuite('bwrap', 'python3');

/**
 * Turns that have a sandboxed bash command compile `source` into bytecode at `target` (a Python
 * expression for a path under the workspace), as an "unchecked-hash" .pyc: Python never compares
 * it with any source. The compiling script is written by write_file (workspace-write allows it).
 */
function plantBytecode(target: string, source: string): Turn[] {
  const program = [
    'import importlib.util, os, py_compile, sys',
    `open('/tmp/planted.py', 'w').write(${JSON.stringify(source)})`,
    `target = ${target}`,
    'os.makedirs(os.path.dirname(target), exist_ok=True)',
    "py_compile.compile('/tmp/planted.py', cfile=target, doraise=True, invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)",
    "print('planted', target)",
  ].join('\n');
  return [
    { tool: { name: 'write_file', input: { path: 'plant.py', content: `${program}\n` } } },
    { tool: { name: 'bash', input: { command: 'python3 plant.py' } } },
  ];
}

/** A trusted repository whose PostToolUse hook runs a Python script importing `helpers` (and `json`). */
function runWithPythonHook(turns: (outside: string) => Turn[], uid?: number) {
  return runHookSession({
    turns,
    cleanups,
    uid,
    setup: {
      command: 'python3 scripts/hooks/check.py',
      files: {
        'scripts/hooks/check.py': 'import json\nimport helpers\nhelpers.run()\n',
        'scripts/hooks/helpers.py':
          "def run():\n    open('OUTSIDE/hook-ran', 'a').write('ran\\n')\n",
      },
    },
  });
}

/** Python that, run as the hook's helper, writes outside the workspace. */
const escapingModule = (outside: string) =>
  `def run():\n    open(${JSON.stringify(join(outside, 'escaped'))}, 'w').write('x')\n` +
  `def dumps(*a, **k):\n    return ''\nrun()\n`;

describe.each(testUsers)(
  'bytecode a sandboxed command planted for a trusted Python hook ($label)',
  ({ uid }) => {
    it.each([
      // Ignored: every Python the CLI starts caches its bytecode outside the workspace.
      [
        'in __pycache__, for the pinned helpers.py',
        "'scripts/hooks/__pycache__/helpers.' + sys.implementation.cache_tag + '.pyc'",
        'ignored',
      ],
      // Where the sandboxed Python itself would cache it: $AGENT_HOME is hidden from the sandbox.
      [
        "in the cache the sandbox's Python is told of",
        "importlib.util.cache_from_source('scripts/hooks/helpers.py')",
        'ignored',
      ],
      // Pinned with the script (there or not): the hook does not run again, and says why.
      [
        'as json.pyc beside the script (before the standard library)',
        "'scripts/hooks/json.pyc'",
        'refused',
      ],
      [
        'as helpers/__init__.pyc (a package comes before helpers.py)',
        "'scripts/hooks/helpers/__init__.pyc'",
        'refused',
      ],
    ] as const)('%s: does not run outside the sandbox', async (_what, target, outcome) => {
      const { run, outside, ran } = await runWithPythonHook(
        (outside) => [
          { tool: { name: 'list_files', input: { path: '.' } } },
          ...plantBytecode(target, escapingModule(outside)),
          { tool: { name: 'list_files', input: { path: '.' } } },
          { text: 'done' },
        ],
        uid,
      );
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toContain('✓ bash: planted ');
      expect(
        existsSync(join(outside, 'escaped')),
        'the planted bytecode ran outside the sandbox',
      ).toBe(false);
      if (outcome === 'ignored') {
        // After list_files, write_file, bash and list_files: the pinned helpers.py, every time.
        expect(ran).toBe('ran\nran\nran\nran\n');
        expect(run.stderr).not.toContain('did not run');
      } else {
        // The control: it ran outside the sandbox (it can write there) until the plant.
        expect(ran).toBe('ran\nran\n');
        expect(run.stderr).toContain(
          'PostToolUse hook "python3 scripts/hooks/check.py" did not run: the project files it runs changed during this session',
        );
      }
    });

    it("an untouched hook runs after every call, and Python's own cache does not stop it", async () => {
      const { run, ran, repo } = await runWithPythonHook(
        () => [
          { tool: { name: 'list_files', input: { path: '.' } } },
          { tool: { name: 'glob', input: { pattern: '*' } } },
          { tool: { name: 'list_files', input: { path: '.' } } },
          { text: 'done' },
        ],
        uid,
      );
      expect(run.code, run.stderr).toBe(0);
      expect(ran).toBe('ran\nran\nran\n');
      expect(run.stderr).not.toContain('did not run');
      // Its bytecode went to the CLI's own cache, not the workspace.
      expect(existsSync(join(repo, 'scripts', 'hooks', '__pycache__'))).toBe(false);
    });
  },
);

describe('projectFileDigests: the forms of a module Python takes before (or for) the source', () => {
  async function project(files: Record<string, string>): Promise<string> {
    const dir = await tempDir('agent-cli-python-forms-');
    cleanups.push(dir.dispose);
    for (const [name, text] of Object.entries(files)) {
      await mkdir(dirname(join(dir.path, name)), { recursive: true });
      await writeFile(join(dir.path, name), text);
    }
    return dir.path;
  }
  const script = { 'hooks/check.py': 'import json\nimport helpers\n', 'hooks/helpers.py': 'x' };

  it.each([
    ['python3 hooks/check.py', 'hooks/json.pyc'],
    ['python3 hooks/check.py', 'hooks/helpers.cpython-311-x86_64-linux-gnu.so'],
    ['python3 hooks/check.py', 'hooks/helpers.abi3.so'],
    ['python3 hooks/check.py', 'hooks/helpers/__init__.pyc'],
    ['python3 -m tool', 'tool.pyc'],
    ['python3 -m tool', 'tool/__main__.pyc'],
  ])('%s: a %s made later changes the pin', async (command, made) => {
    const root = await project({ ...script, 'tool/__init__.py': '', 'tool/__main__.py': 'x' });
    const looked = new Set<string>();
    const before = projectFileDigests([command], root, { looked });
    // Where it would be made is looked at (its folder's stat changes when a file is made there).
    expect(looked).toContain(dirname(join(root, made)));
    await mkdir(dirname(join(root, made)), { recursive: true });
    await writeFile(join(root, made), 'planted');
    const after = projectFileDigests([command], root);
    expect(after).not.toEqual(before);
    expect(Object.keys(after ?? {})).toContain(made);
  });
});
