import * as path from 'node:path';
import { executeTool } from '@agent/core';
import { describe, expect, it } from 'vitest';
import { LspError } from './errors.js';
import { findServerExecutable, typescriptServer } from './language-servers.js';
import { createLspTools } from './lsp-tools.js';
import { copyFixture, packageBin, processesInGroup, testWorkspace } from './test-helpers.js';

describe('language server lifecycle', () => {
  it('starts one server per language lazily and reuses it', async () => {
    await using fixture = await copyFixture('ts-project');
    await using workspace = testWorkspace(fixture.dir);
    expect(await workspace.runningServers()).toEqual([]);
    const main = path.join(fixture.dir, 'src', 'main.ts');
    await workspace.hover(main, { line: 3, character: 14 });
    const [first] = await workspace.runningServers();
    await workspace.definition(path.join(fixture.dir, 'src', 'geometry.ts'), {
      line: 15,
      character: 16,
    });
    expect(await workspace.runningServers()).toEqual([first]);
    expect(first?.language).toBe('typescript');
  });

  it('starts the server again after it was killed, and the next query is answered', async () => {
    await using fixture = await copyFixture('ts-project');
    await using workspace = testWorkspace(fixture.dir);
    const main = path.join(fixture.dir, 'src', 'main.ts');
    expect(await workspace.definition(main, { line: 3, character: 14 })).toHaveLength(1);
    const [before] = await workspace.runningServers();
    if (before === undefined) throw new Error('no server running');
    // tsserver runs in the server's process group too.
    expect((await processesInGroup(before.pid)).length).toBeGreaterThan(1);
    process.kill(before.pid, 'SIGKILL');
    const definition = await workspace.definition(main, { line: 3, character: 14 });
    expect(definition.map((location) => path.basename(location.uri))).toEqual(['geometry.ts']);
    const [after] = await workspace.runningServers();
    expect(after?.pid).not.toBe(before.pid);
    // Nothing of the killed server's group is left behind (tsserver included).
    expect(await processesInGroup(before.pid)).toEqual([]);
  });

  it('a request in flight when the server dies is retried on a fresh server', async () => {
    await using fixture = await copyFixture('py-project');
    await using workspace = testWorkspace(fixture.dir);
    const app = path.join(fixture.dir, 'app.py');
    await workspace.hover(app, { line: 3, character: 8 });
    const [before] = await workspace.runningServers();
    if (before === undefined) throw new Error('no server running');
    const pending = workspace.references(app, { line: 3, character: 8 });
    process.kill(before.pid, 'SIGKILL');
    expect(await pending).toHaveLength(4);
    const [after] = await workspace.runningServers();
    expect(after?.pid).not.toBe(before.pid);
  });

  it('close stops every server and leaves no process behind; later calls fail clearly', async () => {
    await using ts = await copyFixture('ts-project');
    await using py = await copyFixture('py-project');
    const workspace = testWorkspace(ts.dir, { roots: [ts.dir, py.dir] });
    await workspace.hover(path.join(ts.dir, 'src', 'main.ts'), { line: 3, character: 14 });
    await workspace.hover(path.join(py.dir, 'app.py'), { line: 3, character: 8 });
    const running = await workspace.runningServers();
    expect(running.map((server) => server.language).sort()).toEqual(['python', 'typescript']);
    await workspace.close();
    for (const server of running) expect(await processesInGroup(server.pid)).toEqual([]);
    expect(await workspace.runningServers()).toEqual([]);
    const after = await workspace
      .hover(path.join(py.dir, 'app.py'), { line: 3, character: 8 })
      .catch((error: unknown) => error);
    expect(LspError.isInstance(after) && after.code).toBe('closed');
  });

  it('a missing server is a clear error naming how to install it', async () => {
    await using fixture = await copyFixture('ts-project');
    await using workspace = testWorkspace(fixture.dir, { binPaths: [] });
    const [definition] = createLspTools({ workspace }).filter(
      (tool) => tool.name === 'lsp_definition',
    );
    const result = await definition
      ?.execute(
        { path: 'src/main.ts', line: 4, symbol: 'add' },
        {
          toolCallId: 'c',
          toolName: 'lsp_definition',
          signal: new AbortController().signal,
          onUpdate: () => {},
          onProgress: () => {},
        },
      )
      .catch((error: unknown) => error);
    expect(result).toBeInstanceOf(Error);
    expect((result as Error).message).toMatch(
      /^No typescript language server found: neither `tsc` of TypeScript 7 or later nor `typescript-language-server` is in .*node_modules\/\.bin \(or a parent's\), nor on PATH; install it with `npm install --save-dev typescript` \(TypeScript 7 and later has its own server\) or `npm install --save-dev typescript-language-server typescript@5`\.$/,
    );
    expect(await workspace.installedServers()).toEqual([]);
  });

  it('finds servers in node_modules/.bin above the root, then in binPaths, then on PATH', async () => {
    const here = path.dirname(packageBin);
    expect(
      await findServerExecutable(typescriptServer, {
        root: path.join(here, 'src'),
        pathVariable: '',
      }),
    ).toBe(path.join(packageBin, 'typescript-language-server'));
    expect(
      await findServerExecutable(typescriptServer, {
        root: '/',
        binPaths: [packageBin],
        pathVariable: '',
      }),
    ).toBe(path.join(packageBin, 'typescript-language-server'));
    expect(
      await findServerExecutable(typescriptServer, { root: '/', pathVariable: packageBin }),
    ).toBe(path.join(packageBin, 'typescript-language-server'));
    expect(
      await findServerExecutable(typescriptServer, { root: '/', pathVariable: '' }),
    ).toBeUndefined();
  });
});

describe('cancellation', () => {
  it('a call aborted while its server starts ends as cancelled; the server serves the next call', async () => {
    await using fixture = await copyFixture('ts-project');
    await using workspace = testWorkspace(fixture.dir);
    const [definition] = createLspTools({ workspace }).filter(
      (tool) => tool.name === 'lsp_definition',
    );
    if (definition === undefined) throw new Error('no lsp_definition');
    const controller = new AbortController();
    const args = { path: 'src/main.ts', line: 4, symbol: 'add' };
    const aborted = await executeTool(definition, args, {
      signal: controller.signal,
      // Abort as soon as the tool says it is starting the server.
      onEvent: (event) => {
        if (event.type === 'progress') controller.abort();
      },
    });
    expect(aborted.isError).toBe(true);
    expect(aborted.content).toEqual([{ type: 'text', text: 'Cancelled' }]);
    const answered = await executeTool(definition, args);
    expect(answered.content).toEqual([
      {
        type: 'text',
        text: 'src/geometry.ts:16:17  export function add(a: number, b: number): number {',
      },
    ]);
  });
});
