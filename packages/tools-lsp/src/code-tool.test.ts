import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import {
  Agent,
  type AnyAgentTool,
  executeTool,
  messageText,
  type ToolResultMessage,
} from '@agent/core';
import { createScriptedProvider } from '@agent/core/testing';
import { describe, expect, it } from 'vitest';
import { createCodeTool } from './code-tool.js';
import { createLspTools } from './lsp-tools.js';
import { copyFixture, testWorkspace } from './test-helpers.js';

// Kiro's `code` tool (its LSP operations, row/column 1-based) over typescript-language-server on
// the fixture project, called with Kiro's argument names.

function textOf(result: ToolResultMessage): string {
  return messageText(result);
}

async function call(tool: AnyAgentTool, args: unknown): Promise<string> {
  const result = await executeTool(tool, args);
  if (result.isError) throw new Error(`code failed: ${textOf(result)}`);
  return textOf(result);
}

describe('code (Kiro) → the LSP tools', () => {
  it('goto_definition, find_references, get_hover, get_document_symbols, get_diagnostics', async () => {
    await using fixture = await copyFixture('ts-project');
    await using workspace = testWorkspace(fixture.dir);
    const code = createCodeTool(createLspTools({ workspace }));
    // `add` on main.ts line 4 starts at column 15.
    const at = { file_path: 'src/main.ts', row: 4, column: 15 };
    expect(await call(code, { operation: 'goto_definition', ...at, show_source: true })).toBe(
      'src/geometry.ts:16:17  export function add(a: number, b: number): number {',
    );
    expect(
      await call(code, { operation: 'find_references', ...at, limit: 10, workspace_only: true }),
    ).toMatch(/^4 references in 2 files:\n/);
    expect(await call(code, { operation: 'get_hover', ...at })).toContain(
      'add(a: number, b: number): number',
    );
    expect(
      await call(code, {
        operation: 'get_document_symbols',
        file_path: 'src/geometry.ts',
        top_level_only: true,
      }),
    ).toBe(['interface Shape  2-4', 'class Circle  7-13', 'function add  16-18'].join('\n'));
    expect(
      await call(code, { operation: 'get_diagnostics', file_path: 'src/broken.ts' }),
    ).toContain(
      "src/broken.ts:1:14 error TS2322: Type 'string' is not assignable to type 'number'.",
    );
    expect(await call(code, { operation: 'initialize_workspace' })).toMatch(/Nothing to do/);
  });

  it('search_symbols with its filters, and lookup_symbols by exact name', async () => {
    await using fixture = await copyFixture('ts-project');
    await using workspace = testWorkspace(fixture.dir);
    const code = createCodeTool(createLspTools({ workspace }));
    expect(await call(code, { operation: 'search_symbols', symbol_name: 'Circle' })).toContain(
      'class Circle  src/geometry.ts:7',
    );
    expect(
      await call(code, {
        operation: 'search_symbols',
        symbol_name: 'Circle',
        symbol_type: 'function',
      }),
    ).toBe('No symbols match "Circle".');
    expect(await call(code, { operation: 'search_symbols', symbol_name: 'add', path: 'lib' })).toBe(
      'No symbols match "add".',
    );
    const looked = await call(code, {
      operation: 'lookup_symbols',
      symbols: ['add', 'Shape'],
      include_source: true,
    });
    expect(looked).toContain('add:\nfunction add  src/geometry.ts:16');
    expect(looked).toContain('Shape:\ninterface Shape  src/geometry.ts:2');
  });

  it('rename_symbol previews by default and writes with dry_run: false (through the loop)', async () => {
    await using fixture = await copyFixture('ts-project');
    await using workspace = testWorkspace(fixture.dir);
    const code = createCodeTool(createLspTools({ workspace }));
    const rename = {
      operation: 'rename_symbol',
      file_path: 'src/geometry.ts',
      row: 16,
      column: 17,
      new_name: 'sum',
    };
    const preview = await call(code, rename);
    expect(preview).toContain('call code again with the same arguments and "dry_run": false');
    expect(preview).not.toContain('lsp_apply_rename');
    expect(await fs.readFile(path.join(fixture.dir, 'src', 'main.ts'), 'utf8')).toContain('add(');
    // Through a loop: the apply is a nested call of its own (its own gate and events).
    const parent = createScriptedProvider([
      { toolCalls: [{ id: 'c', name: 'code', arguments: { ...rename, dry_run: false } }] },
      { text: 'done' },
    ]);
    const run = await new Agent({ provider: parent, model: 'm', tools: [code] }).run('rename')
      .result;
    const result = run.messages.find(
      (message) => message.role === 'toolResult',
    ) as ToolResultMessage;
    expect(result.isError).toBe(false);
    expect(textOf(result)).toMatch(/^Applied rename-\d+: wrote src\/geometry.ts, src\/main.ts\./);
    const main = await fs.readFile(path.join(fixture.dir, 'src', 'main.ts'), 'utf8');
    expect(main).toContain('import { sum, Circle }');
    expect(main).not.toMatch(/\badd\(/);
  });

  it.each([
    [
      { operation: 'format', file_path: 'src/main.ts', tab_size: 2, insert_spaces: true },
      /"format" is not offered here; run the project's formatter/,
    ],
    [
      { operation: 'pattern_search', pattern: 'add($A, $B)', language: 'typescript' },
      /use the search tool/,
    ],
    [
      { operation: 'pattern_rewrite', pattern: 'a', replacement: 'b', language: 'typescript' },
      /use edit_file/,
    ],
    [{ operation: 'generate_codebase_overview', path: '.' }, /use list_files or glob/],
    [{ operation: 'search_codebase_map', path: 'src' }, /use list_files or glob/],
    [
      { operation: 'get_completions', file_path: 'src/main.ts', row: 4, column: 15 },
      /completions are an editor feature/,
    ],
    [
      { operation: 'goto_definition', file_path: 'src/main.ts', row: 4 },
      /goto_definition needs "column"/,
    ],
    [{ operation: 'search_symbols' }, /search_symbols needs "symbol_name"/],
    [{ operation: 'find_symbol' }, /expected one of/],
  ])('refuses %j naming what to use', async (args, message) => {
    await using fixture = await copyFixture('ts-project');
    await using workspace = testWorkspace(fixture.dir);
    const code = createCodeTool(createLspTools({ workspace }));
    const result = await executeTool(code, args);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(message);
  });

  it('refuses to be made without the LSP tools', () => {
    expect(() => createCodeTool([])).toThrow(/give it createLspTools' tools/);
  });
});
