import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { createSandbox } from '@agent/sandbox';
import { skipWithout } from '@agent/tooling-system-tools';
import { beforeEach, describe, expect, it } from 'vitest';
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
});
