import * as fs from 'node:fs/promises';
import { readFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { executeTool } from '@agent/core';
import { createSandbox } from '@agent/sandbox';
import { skipWithout } from '@agent/tooling-system-tools';
import { beforeEach, describe, expect, it } from 'vitest';
import { createLspTools } from './lsp-tools.js';
import { LspWorkspace } from './lsp-workspace.js';
import { copyFixture, processesInGroup, testWorkspace } from './test-helpers.js';

describe('a language server in the OS sandbox', () => {
  beforeEach(skipWithout('bwrap'));
  it('answers from inside bubblewrap and leaves nothing behind on close', async () => {
    await using fixture = await copyFixture('py-project');
    // The repository may itself live under /tmp (a CI clone), which the sandbox replaces with a
    // private one: the sandbox shows the server it launches from there by itself (launch roots).
    const sandbox = createSandbox({ mode: 'required', writableRoots: [fixture.dir] });
    try {
      const workspace = testWorkspace(fixture.dir, { sandbox });
      const app = path.join(fixture.dir, 'app.py');
      const definition = await workspace.definition(app, { line: 3, character: 8 });
      expect(definition.map((location) => path.basename(location.uri))).toEqual(['geometry.py']);
      const [server] = await workspace.runningServers();
      if (server === undefined) throw new Error('no server running');
      // The process we started is bubblewrap, with the server inside it.
      const commandLine = (await readFile(`/proc/${server.pid}/cmdline`, 'utf8')).split('\0');
      expect(path.basename(commandLine[0] ?? '')).toBe('bwrap');
      expect(commandLine.some((part) => part.endsWith('pyright-langserver'))).toBe(true);
      // The server stays up between queries: servers check every 3 s that the client's pid is
      // alive (vscode-languageserver), which from inside the sandbox's pid namespace it never is.
      // Nothing signals "still alive", so this waits past one check.
      await new Promise((resolve) => setTimeout(resolve, 4_000));
      expect(await workspace.definition(app, { line: 3, character: 8 })).toHaveLength(1);
      expect((await workspace.runningServers()).map((running) => running.pid)).toEqual([
        server.pid,
      ]);
      await workspace.close();
      expect(await processesInGroup(server.pid)).toEqual([]);
    } finally {
      await sandbox.close();
    }
  });

  it('a server the sandbox killed for memory: the call says the sandbox did it', async () => {
    const workspace = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'agent-lsp-oom-')));
    await fs.writeFile(path.join(workspace, 'main.fl'), 'let value = 1;\n');
    const sandbox = createSandbox({
      mode: 'required',
      writableRoots: [workspace],
      maxMemoryBytes: 256 * 1024 * 1024,
      onWarning: () => undefined,
    });
    const lsp = new LspWorkspace({
      cwd: workspace,
      servers: [
        {
          language: 'flood',
          command: process.execPath,
          args: [floodingServer],
          extensions: ['.fl'],
          languageIdOf: () => 'flood',
          installHint: 'the test fixture',
        },
      ],
      env: { ...process.env, FLOOD_MODE: 'allocate', FLOOD_BYTES: String(1024 * 1024 * 1024) },
      sandbox,
    });
    try {
      if (sandbox.status.limits.maxMemoryBytes === undefined) {
        // No cgroup here (an ordinary user without delegation): not run unbounded, only said.
        expect(sandbox.describe()).toMatch(/memory NOT bounded/);
        return;
      }
      const tool = createLspTools({ workspace: lsp }).find((t) => t.name === 'lsp_definition');
      if (tool === undefined) throw new Error('no lsp_definition');
      const result = await executeTool(tool, { path: 'main.fl', line: 1, column: 5 });
      const text = result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
      expect(result.isError).toBe(true);
      expect(text).toMatch(
        /language server .* (exited with code 137|was killed by SIGKILL)[\s\S]*Killed by the sandbox: its commands used more than 256 MiB of memory together/,
      );
    } finally {
      await lsp.close();
      await sandbox.close();
      await fs.rm(workspace, { recursive: true, force: true });
    }
  });
});

const floodingServer = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  '__fixtures__',
  'flooding-server',
  'server.mjs',
);
