import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import {
  type AgentEvent,
  type AnyAgentTool,
  createPermissionGate,
  executeTool,
  PermissionPolicy,
  type PermissionRequest,
  type ToolResultMessage,
} from '@agent/core';
import { describe, expect, it } from 'vitest';
import { createLspTools } from './lsp-tools.js';
import type { LspWorkspace } from './lsp-workspace.js';
import { copyFixture, testWorkspace } from './test-helpers.js';

function toolsOf(workspace: LspWorkspace) {
  const tools = createLspTools({ workspace });
  const byName = (name: string): AnyAgentTool => {
    const tool = tools.find((candidate) => candidate.name === name);
    if (tool === undefined) throw new Error(`no tool ${name}`);
    return tool;
  };
  return byName;
}

function textOf(result: ToolResultMessage): string {
  return result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
}

async function call(tool: AnyAgentTool, args: unknown): Promise<string> {
  const result = await executeTool(tool, args);
  if (result.isError) throw new Error(`${tool.name} failed: ${textOf(result)}`);
  return textOf(result);
}

describe('LSP tools on a real TypeScript project (typescript-language-server)', () => {
  it('answers definition, references, hover and symbols with workspace-relative locations', async () => {
    await using fixture = await copyFixture('ts-project');
    await using workspace = testWorkspace(fixture.dir);
    const tool = toolsOf(workspace);

    // The first call starts the server and says so; later ones do not.
    const progress: string[] = [];
    const onEvent = (event: AgentEvent) => {
      if (event.type === 'progress') progress.push(event.text);
    };
    const first = await executeTool(
      tool('lsp_definition'),
      { path: 'src/main.ts', line: 4, symbol: 'add' },
      { onEvent },
    );
    expect(textOf(first)).toBe(
      'src/geometry.ts:16:17  export function add(a: number, b: number): number {',
    );
    expect(progress).toEqual(['Starting the typescript language server…']);
    await executeTool(
      tool('lsp_hover'),
      { path: 'src/main.ts', line: 4, symbol: 'add' },
      { onEvent },
    );
    expect(progress).toHaveLength(1);
    // Without a line: the symbol's first occurrence in the file (the import).
    expect(await call(tool('lsp_definition'), { path: 'src/main.ts', symbol: 'Circle' })).toBe(
      'src/geometry.ts:7:14  export class Circle implements Shape {',
    );
    // The second `add` on line 5.
    expect(
      await call(tool('lsp_references'), { path: 'src/main.ts', line: 5, symbol: 'add' }),
    ).toMatch(/^4 references in 2 files:\n/);
    expect(
      await call(tool('lsp_references'), {
        path: 'src/main.ts',
        line: 4,
        column: 15,
        include_declaration: false,
      }),
    ).toContain('src/main.ts:5:20  console.log(total, add(1, 2));');
    expect(
      await call(tool('lsp_hover'), { path: 'src/geometry.ts', line: 16, symbol: 'add' }),
    ).toContain('function add(a: number, b: number): number');
    expect(await call(tool('lsp_document_symbols'), { path: 'src/geometry.ts' })).toBe(
      [
        'interface Shape  2-4',
        '  method area  3',
        'class Circle  7-13',
        '  constructor constructor  8',
        '  property radius  8',
        '  method area  10-12',
        'function add  16-18',
      ].join('\n'),
    );
    expect(await call(tool('lsp_workspace_symbols'), { query: 'Circle' })).toContain(
      'class Circle  src/geometry.ts:7',
    );
  });

  it('reports diagnostics of a file and of the workspace, and sees edits made on disk', async () => {
    await using fixture = await copyFixture('ts-project');
    await using workspace = testWorkspace(fixture.dir);
    const tool = toolsOf(workspace);
    expect(await call(tool('lsp_diagnostics'), { path: 'src/broken.ts' })).toBe(
      [
        "src/broken.ts:1:14 error TS2322: Type 'string' is not assignable to type 'number'.",
        '1 error in 1 file (src/broken.ts).',
      ].join('\n'),
    );
    expect(await call(tool('lsp_diagnostics'), {})).toBe(
      [
        "src/broken.ts:1:14 error TS2322: Type 'string' is not assignable to type 'number'.",
        '1 error in 1 file (3 files checked).',
      ].join('\n'),
    );
    // Another tool fixes broken.ts and breaks main.ts: both are open, both re-read.
    await fs.writeFile(
      path.join(fixture.dir, 'src', 'broken.ts'),
      'export const count: number = 3;\n',
    );
    await fs.writeFile(
      path.join(fixture.dir, 'src', 'main.ts'),
      "import { add } from './geometry';\n\nadd(1);\n",
    );
    expect(await call(tool('lsp_diagnostics'), { path: 'src/broken.ts' })).toBe(
      'No problems in src/broken.ts.',
    );
    expect(await call(tool('lsp_diagnostics'), { path: 'src/main.ts' })).toContain(
      'src/main.ts:3:1 error TS2554: Expected 2 arguments, but got 1.',
    );
  });

  it('path rules: a rule on read_file covers the LSP reads; results in covered files are left out', async () => {
    await using fixture = await copyFixture('ts-project');
    await using workspace = testWorkspace(fixture.dir);
    const tools = createLspTools({ workspace });
    const tool = toolsOf(workspace);
    // A reader of the session (read_file) that the rule names; the LSP tools are readers too.
    const readFile = {
      name: 'read_file',
      source: 'builtin',
      policy: { pathAccess: 'read' as const },
      permissionSubjects: () => [],
    };
    const policy = new PermissionPolicy({
      mode: 'full-access',
      workspaceRoot: await fs.realpath(fixture.dir),
      deny: ['read_file(src/main.ts)'],
      tools: [readFile, ...tools],
    });
    const options = { permissionGate: policy.gate, isPathDenied: policy.isPathDenied };
    const denied = await executeTool(
      tool('lsp_hover'),
      { path: 'src/main.ts', line: 4, symbol: 'add' },
      options,
    );
    expect(denied.isError).toBe(true);
    expect(textOf(denied)).toContain('Denied by rule "read_file(src/main.ts)"');
    const references = textOf(
      await executeTool(
        tool('lsp_references'),
        { path: 'src/geometry.ts', line: 16, symbol: 'add' },
        options,
      ),
    );
    expect(references).toMatch(/^1 reference in 1 file:\nsrc\/geometry\.ts:16:17/);
    expect(references).not.toContain('main.ts');
    const rename = await executeTool(
      tool('lsp_rename'),
      { path: 'src/geometry.ts', line: 16, symbol: 'add', new_name: 'sum' },
      options,
    );
    expect(rename.isError).toBe(true);
    expect(textOf(rename)).toContain('would change files the permission rules keep from reading');
    expect(textOf(rename)).not.toContain('main.ts');
    // Without the rule, the same calls see main.ts.
    const open = textOf(
      await executeTool(tool('lsp_references'), {
        path: 'src/geometry.ts',
        line: 16,
        symbol: 'add',
      }),
    );
    expect(open).toContain('src/main.ts');
    expect(policy.unmatchableRules()).toEqual([]);
  });

  it('previews a rename as a diff, writes nothing, and applies it as a separate write-tier call', async () => {
    await using fixture = await copyFixture('ts-project');
    await using workspace = testWorkspace(fixture.dir);
    const tool = toolsOf(workspace);
    const geometry = path.join(fixture.dir, 'src', 'geometry.ts');
    const main = path.join(fixture.dir, 'src', 'main.ts');
    const before = await fs.readFile(main, 'utf8');

    const preview = await call(tool('lsp_rename'), {
      path: 'src/geometry.ts',
      line: 16,
      symbol: 'add',
      new_name: 'sum',
    });
    expect(preview).toContain('Preview rename-1: 2 files would change. Nothing was written');
    expect(preview).toContain('--- a/src/main.ts\n+++ b/src/main.ts\n');
    expect(preview).toContain(
      "-import { add, Circle } from './geometry';\n+import { sum, Circle } from './geometry';",
    );
    expect(preview).toContain(
      '-export function add(a: number, b: number): number {\n+export function sum(a: number, b: number): number {',
    );
    expect(await fs.readFile(main, 'utf8')).toBe(before);

    // The gate sees the write tier and the files as subjects: read-only mode denies it.
    const readOnly = await executeTool(
      tool('lsp_apply_rename'),
      { id: 'rename-1' },
      {
        permissionGate: createPermissionGate({ mode: 'read-only' }),
      },
    );
    expect(readOnly.isError).toBe(true);
    expect(await fs.readFile(main, 'utf8')).toBe(before);
    const asked: PermissionRequest[] = [];
    const applied = await executeTool(
      tool('lsp_apply_rename'),
      { id: 'rename-1' },
      {
        permissionGate: createPermissionGate({
          approver: (request) => {
            asked.push(request);
            return 'once';
          },
        }),
      },
    );
    expect(textOf(applied)).toBe('Applied rename-1: wrote src/geometry.ts, src/main.ts.');
    expect(asked.map((request) => [request.toolName, request.subjects])).toEqual([
      ['lsp_apply_rename', [geometry, main]],
    ]);
    expect(await fs.readFile(main, 'utf8')).toBe(before.replaceAll('add', 'sum'));
    // The server saw the write: the project still type-checks.
    expect(await call(tool('lsp_diagnostics'), { path: 'src/main.ts' })).toBe(
      'No problems in src/main.ts.',
    );

    const again = await executeTool(tool('lsp_apply_rename'), { id: 'rename-1' });
    expect(textOf(again)).toContain('No previewed edit "rename-1"');
  });

  it('refuses to apply a preview when a file changed since', async () => {
    await using fixture = await copyFixture('ts-project');
    await using workspace = testWorkspace(fixture.dir);
    const tool = toolsOf(workspace);
    const preview = await call(tool('lsp_rename'), {
      path: 'src/main.ts',
      symbol: 'circle',
      new_name: 'disc',
    });
    expect(preview).toContain('Preview rename-1: 1 file would change.');
    const main = path.join(fixture.dir, 'src', 'main.ts');
    await fs.appendFile(main, '// touched\n');
    const applied = await executeTool(tool('lsp_apply_rename'), { id: 'rename-1' });
    expect(applied.isError).toBe(true);
    expect(textOf(applied)).toBe(
      'src/main.ts changed since the rename was previewed; preview it again.',
    );
    expect(await fs.readFile(main, 'utf8')).toContain('const circle');
  });

  it('gives clear errors for bad positions, other files and paths outside the workspace', async () => {
    await using fixture = await copyFixture('ts-project');
    await using workspace = testWorkspace(fixture.dir);
    const tool = toolsOf(workspace);
    const missing = await executeTool(tool('lsp_definition'), {
      path: 'src/main.ts',
      line: 4,
      symbol: 'nope',
    });
    expect(textOf(missing)).toBe(
      'Invalid arguments: "nope" does not occur on line 4: "const total = add(circle.area(), 1);"',
    );
    const past = await executeTool(tool('lsp_hover'), { path: 'src/main.ts', line: 99, column: 1 });
    expect(textOf(past)).toBe('Invalid arguments: line 99 is past the end of the file (6 lines)');
    const neither = await executeTool(tool('lsp_hover'), { path: 'src/main.ts', line: 2 });
    expect(textOf(neither)).toBe(
      'Invalid arguments: give "symbol" (the name to look up) or "column" with "line"',
    );
    const outside = await executeTool(tool('lsp_document_symbols'), { path: '../../etc/passwd' });
    expect(outside.isError).toBe(true);
    expect(textOf(outside)).toMatch(
      /^Permission denied: \.\.\/\.\.\/etc\/passwd is outside the workspace/,
    );
    await fs.writeFile(path.join(fixture.dir, 'notes.txt'), 'hello\n');
    const text = await executeTool(tool('lsp_document_symbols'), { path: 'notes.txt' });
    expect(textOf(text)).toMatch(
      /^No language server handles \.txt files \(typescript: \.ts .*; python: \.py \.pyi\)\.$/,
    );
    const absent = await executeTool(tool('lsp_document_symbols'), { path: 'src/gone.ts' });
    expect(textOf(absent)).toBe('File not found: src/gone.ts');
  });
});

describe('LSP tools on a real Python project (pyright)', () => {
  it('answers definition, references, hover, symbols and diagnostics', async () => {
    await using fixture = await copyFixture('py-project');
    await using workspace = testWorkspace(fixture.dir);
    const tool = toolsOf(workspace);
    expect(await call(tool('lsp_definition'), { path: 'app.py', line: 4, symbol: 'add' })).toBe(
      'geometry.py:16:5  def add(a: float, b: float) -> float:',
    );
    expect(await call(tool('lsp_references'), { path: 'geometry.py', symbol: 'Circle' })).toMatch(
      /^3 references in 2 files:\n/,
    );
    expect(await call(tool('lsp_hover'), { path: 'app.py', line: 3, symbol: 'Circle' })).toContain(
      'class Circle',
    );
    expect(await call(tool('lsp_document_symbols'), { path: 'geometry.py' })).toBe(
      [
        'class Circle  6-13',
        '  method __init__  9-10',
        '    variable radius  9',
        '  variable radius  10',
        '  method area  12-13',
        'function add  16-18',
        '  variable a  16',
        '  variable b  16',
      ].join('\n'),
    );
    // pyright answers workspace/symbol from the files it has found so far, and finds them in the
    // background after it starts: on a loaded machine (a CI run) the first answers can still be
    // empty. Ask again until it has (each call is a real request; the class must show).
    let symbols = '';
    for (let attempt = 0; attempt < 40 && !symbols.includes('class Circle'); attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 250));
      symbols = await call(tool('lsp_workspace_symbols'), { query: 'Circle', language: 'python' });
    }
    expect(symbols).toContain('class Circle  geometry.py:6');
    expect(await call(tool('lsp_diagnostics'), { path: 'broken.py' })).toMatch(
      /^broken\.py:1:14 error \[reportAssignmentType\]: Type "Literal\['three'\]" is not assignable to declared type "int"\n1 error in 1 file \(broken\.py\)\.$/,
    );
  });

  it('sees a file another tool changed, open or not, and applies a rename', async () => {
    await using fixture = await copyFixture('py-project');
    // No settling time: what is asserted after the change must come from an analysis made after
    // it (open documents are sent again under a new version), not from waiting long enough.
    await using workspace = testWorkspace(fixture.dir, { diagnosticsSettleMs: 0 });
    const tool = toolsOf(workspace);
    expect(await call(tool('lsp_diagnostics'), { path: 'app.py' })).toBe('No problems in app.py.');
    // geometry.py is not open: the app reports the write (as after write_file/edit_file).
    await fs.writeFile(
      path.join(fixture.dir, 'geometry.py'),
      'class Circle:\n    def __init__(self, radius: float) -> None:\n        self.radius = radius\n\n    def area(self) -> float:\n        return 3.0\n',
    );
    await workspace.notifyFilesChanged(['geometry.py']);
    expect(await call(tool('lsp_diagnostics'), { path: 'app.py' })).toContain(
      'app.py:1:30 error [reportAttributeAccessIssue]: "add" is unknown import symbol',
    );

    const preview = await call(tool('lsp_rename'), {
      path: 'app.py',
      line: 3,
      symbol: 'circle',
      new_name: 'disc',
    });
    expect(preview).toContain(
      '-circle = Circle(2)\n-total = add(circle.area(), 1)\n+disc = Circle(2)\n+total = add(disc.area(), 1)\n',
    );
    expect(await call(tool('lsp_apply_rename'), { id: 'rename-1' })).toBe(
      'Applied rename-1: wrote app.py.',
    );
    expect(await fs.readFile(path.join(fixture.dir, 'app.py'), 'utf8')).toContain(
      'total = add(disc.area(), 1)',
    );
  });
});
