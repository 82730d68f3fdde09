import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { type AnyAgentTool, executeTool, type ToolResultMessage } from '@agent/core';
import { describe, expect, it } from 'vitest';
import { typescriptMajorVersion } from './language-servers.js';
import { createLspTools } from './lsp-tools.js';
import { copyFixture, packageBin, testWorkspace, typescriptNativeBin } from './test-helpers.js';

const textOf = (result: ToolResultMessage) =>
  result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');

describe("TypeScript 7's own language server (tsc --lsp --stdio)", () => {
  it('is picked where the TypeScript found is 7, typescript-language-server where it is 5', async () => {
    expect(await typescriptMajorVersion(path.join(typescriptNativeBin, 'tsc'))).toBe(7);
    expect(await typescriptMajorVersion(path.join(packageBin, 'tsc'))).toBe(5);
    await using fixture = await copyFixture('ts-project');
    const both = testWorkspace(fixture.dir, { binPaths: [typescriptNativeBin, packageBin] });
    expect(
      (await both.installedServers()).map((server) => [server.language, server.command]),
    ).toEqual([
      ['typescript', 'tsc'],
      ['python', 'pyright-langserver'],
    ]);
    // Only TypeScript 5's tsc: it has no server, so typescript-language-server is used.
    const five = testWorkspace(fixture.dir, { binPaths: [packageBin] });
    expect((await five.installedServers()).map((server) => server.command)).toEqual([
      'typescript-language-server',
      'pyright-langserver',
    ]);
  });

  it('answers every tool on a real project, pulls diagnostics and sees edits on disk', async () => {
    await using fixture = await copyFixture('ts-project');
    await using workspace = testWorkspace(fixture.dir, { binPaths: [typescriptNativeBin] });
    const tools = createLspTools({ workspace });
    const tool = (name: string): AnyAgentTool => {
      const found = tools.find((candidate) => candidate.name === name);
      if (found === undefined) throw new Error(`no ${name}`);
      return found;
    };
    const call = async (name: string, args: unknown) => {
      const result = await executeTool(tool(name), args);
      if (result.isError) throw new Error(`${name}: ${textOf(result)}`);
      return textOf(result);
    };
    expect(await call('lsp_definition', { path: 'src/main.ts', line: 4, symbol: 'add' })).toBe(
      'src/geometry.ts:16:17  export function add(a: number, b: number): number {',
    );
    expect((await workspace.runningServers()).map((server) => server.language)).toEqual([
      'typescript',
    ]);
    expect(await call('lsp_references', { path: 'src/main.ts', line: 5, symbol: 'add' })).toMatch(
      /^4 references in 2 files:\n/,
    );
    expect(await call('lsp_hover', { path: 'src/geometry.ts', line: 16, symbol: 'add' })).toContain(
      'function add(a: number, b: number): number',
    );
    expect(await call('lsp_document_symbols', { path: 'src/geometry.ts' })).toContain(
      'class Circle  7-13\n',
    );
    expect(await call('lsp_workspace_symbols', { query: 'Circle' })).toContain(
      'class Circle  src/geometry.ts:7',
    );
    expect(await call('lsp_diagnostics', { path: 'src/broken.ts' })).toBe(
      [
        "src/broken.ts:1:14 error TS2322: Type 'string' is not assignable to type 'number'.",
        '1 error in 1 file (src/broken.ts).',
      ].join('\n'),
    );
    await fs.writeFile(
      path.join(fixture.dir, 'src', 'broken.ts'),
      'export const count: number = 3;\n',
    );
    expect(await call('lsp_diagnostics', { path: 'src/broken.ts' })).toBe(
      'No problems in src/broken.ts.',
    );
    // A file the server has not opened changes: it is told (it does not watch files itself).
    const geometry = path.join(fixture.dir, 'src', 'geometry.ts');
    const original = await fs.readFile(geometry, 'utf8');
    await fs.writeFile(
      geometry,
      original.replace('add(a: number, b: number)', 'add(a: number, b: number, c: number)'),
    );
    await workspace.notifyFilesChanged(['src/geometry.ts']);
    expect(await call('lsp_diagnostics', { path: 'src/main.ts' })).toContain(
      'src/main.ts:4:15 error TS2554: Expected 3 arguments, but got 2.',
    );
    await fs.writeFile(geometry, original);
    await workspace.notifyFilesChanged(['src/geometry.ts']);

    const preview = await call('lsp_rename', {
      path: 'src/geometry.ts',
      line: 16,
      symbol: 'add',
      new_name: 'sum',
    });
    expect(preview).toContain('Preview rename-1: 2 files would change.');
    expect(await call('lsp_apply_rename', { id: 'rename-1' })).toBe(
      'Applied rename-1: wrote src/geometry.ts, src/main.ts.',
    );
    expect(await fs.readFile(path.join(fixture.dir, 'src', 'main.ts'), 'utf8')).toContain(
      'const total = sum(circle.area(), 1);',
    );
  });
});
