import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LspWorkspace } from './lsp-workspace.js';
import { copyFixture, testWorkspace } from './test-helpers.js';

describe('LspWorkspace on a TypeScript project', () => {
  it('finds a definition, references, hover and diagnostics', async () => {
    await using fixture = await copyFixture('ts-project');
    await using workspace = testWorkspace(fixture.dir);
    const main = path.join(fixture.dir, 'src', 'main.ts');
    const definition = await workspace.definition(main, { line: 3, character: 14 });
    expect(
      definition.map((location) => [path.basename(location.uri), location.range.start.line]),
    ).toEqual([['geometry.ts', 15]]);
    const references = await workspace.references(main, { line: 3, character: 14 });
    expect(references.length).toBe(4);
    const hover = await workspace.hover(main, { line: 3, character: 14 });
    expect(JSON.stringify(hover?.contents)).toContain('add(a: number, b: number): number');
    const broken = await workspace.diagnostics(path.join(fixture.dir, 'src', 'broken.ts'));
    expect(broken.diagnostics.map((item) => item.message)).toEqual([
      "Type 'string' is not assignable to type 'number'.",
    ]);
  });
});

describe('LspWorkspace on a Python project', () => {
  it('finds a definition, references, hover and diagnostics', async () => {
    await using fixture = await copyFixture('py-project');
    await using workspace = testWorkspace(fixture.dir);
    const app = path.join(fixture.dir, 'app.py');
    const definition = await workspace.definition(app, { line: 3, character: 8 });
    expect(
      definition.map((location) => [path.basename(location.uri), location.range.start.line]),
    ).toEqual([['geometry.py', 15]]);
    const references = await workspace.references(app, { line: 3, character: 8 });
    expect(references.length).toBe(4);
    const hover = await workspace.hover(app, { line: 3, character: 8 });
    expect(JSON.stringify(hover?.contents)).toContain('def add');
    const broken = await workspace.diagnostics(path.join(fixture.dir, 'broken.py'));
    expect(broken.diagnostics.map((item) => item.message).join('\n')).toContain(
      '"Literal[\'three\']" is not assignable to "int"',
    );
  });
});

describe('workspace symbols in a workspace of several TypeScript projects', () => {
  it('asks with a file of each project, so every project is searched', async () => {
    await using fixture = await copyFixture('ts-project');
    // A second project beside the first, in the same root.
    const second = path.join(fixture.dir, 'shapes');
    await fs.mkdir(path.join(second, 'src'), { recursive: true });
    await fs.writeFile(
      path.join(second, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { strict: true, noEmit: true, types: [] },
        include: ['src'],
      }),
    );
    await fs.writeFile(
      path.join(second, 'src', 'square.ts'),
      'export class Square {\n  side = 1;\n}\n',
    );
    await using workspace = testWorkspace(fixture.dir);
    const progress: string[] = [];
    const names = async (query: string) =>
      (await workspace.workspaceSymbols(query, { onProgress: (text) => progress.push(text) })).map(
        (symbol) => `${symbol.name} ${path.basename(symbol.location.uri)}`,
      );
    expect(await names('Square')).toContain('Square square.ts');
    expect(await names('Circle')).toContain('Circle geometry.ts');
    // The first search loads both projects, and says so; the second finds them loaded.
    expect(progress).toEqual(['Loading 2 typescript projects for the search…']);
  });
});

describe('paths shown to the model', () => {
  it('are relative to the workspace also when it is reached through a symlink', async () => {
    await using fixture = await copyFixture('ts-project');
    const link = `${fixture.dir}-link`;
    await fs.symlink(fixture.dir, link);
    try {
      const workspace = new LspWorkspace({ cwd: link });
      // Servers report real paths.
      expect(workspace.display(path.join(fixture.dir, 'src', 'main.ts'))).toBe(
        path.join('src', 'main.ts'),
      );
      expect(await workspace.confine('src/main.ts')).toBe(path.join(fixture.dir, 'src', 'main.ts'));
      expect(await workspace.confine('../elsewhere.ts')).toBeUndefined();
      expect(workspace.display('/etc/hosts')).toBe('/etc/hosts');
    } finally {
      await fs.rm(link);
    }
  });
});

describe('syncWorkspaceFiles', () => {
  it('reports files created, changed and deleted on disk since the last scan (a shell edit)', async () => {
    await using fixture = await copyFixture('py-project');
    await using workspace = testWorkspace(fixture.dir);
    const app = path.join(fixture.dir, 'app.py');
    expect((await workspace.diagnostics(app)).diagnostics).toEqual([]);
    expect(await workspace.syncWorkspaceFiles()).toBe(0);
    // As `sed -i` or `git checkout` would: files the server has not opened.
    const geometry = path.join(fixture.dir, 'geometry.py');
    await fs.writeFile(
      geometry,
      (await fs.readFile(geometry, 'utf8')).replace('def add(', 'def total('),
    );
    await fs.writeFile(path.join(fixture.dir, 'extra.py'), 'x = 1\n');
    await fs.rm(path.join(fixture.dir, 'broken.py'));
    expect(await workspace.syncWorkspaceFiles()).toBe(3);
    // The server re-checks the open app.py on its own schedule after the change of a file it
    // imports: on a loaded machine the first answer can still be the earlier (clean) one, so ask
    // again until the new diagnostic is published (each call waits for the server to settle).
    let messages: unknown[] = [];
    for (let attempt = 0; attempt < 40; attempt++) {
      messages = (await workspace.diagnostics(app)).diagnostics.map((item) => item.message);
      if (messages.includes('"add" is unknown import symbol')) break;
    }
    expect(messages).toContain('"add" is unknown import symbol');
    expect(await workspace.syncWorkspaceFiles()).toBe(0);
  });
});
