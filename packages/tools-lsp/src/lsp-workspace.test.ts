import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
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
