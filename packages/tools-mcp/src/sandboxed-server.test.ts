import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createSandbox } from '@agent/sandbox';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { McpToolAdapter } from './mcp-tool-adapter.js';
import {
  nodeServer,
  rawStdioServerEntry,
  referenceServerEntry,
  resultText,
  testContext,
} from './test-helpers.js';

// An MCP stdio server can run in the OS sandbox (opt-in per server): the reference filesystem
// server is told it may write two directories, but the sandbox lets it write only one.

const adapters: McpToolAdapter[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const adapter of adapters.splice(0)) await adapter.close();
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function dir(parent: string, prefix: string): string {
  const made = fs.realpathSync(fs.mkdtempSync(path.join(parent, prefix)));
  dirs.push(made);
  return made;
}

describe('a sandboxed stdio MCP server', () => {
  beforeEach(skipWithout('bwrap'));
  it('writes its workspace, cannot write elsewhere even where the server itself would allow it', async () => {
    const workspace = dir(os.tmpdir(), 'mcp-sandbox-ws-');
    // Outside /tmp (private inside the sandbox), so the server can see it but not write it.
    const elsewhere = dir(fs.existsSync('/var/tmp') ? '/var/tmp' : os.tmpdir(), 'mcp-sandbox-out-');
    const server = await McpToolAdapter.connect({
      name: 'fs',
      transport: nodeServer(referenceServerEntry('filesystem'), [workspace, elsewhere], {
        cwd: workspace,
        // The server's code lives in this repository, which may itself be under /tmp: the
        // sandbox shows the code it launches from there by itself (launch roots).
        sandbox: { mode: 'required' },
      }),
    });
    adapters.push(server);
    const write = server.tools().find((tool) => tool.name === 'fs__write_file');
    if (write === undefined) throw new Error('no write_file tool');

    const inside = await write.execute(
      { path: path.join(workspace, 'a.txt'), content: 'in' },
      testContext(),
    );
    expect(inside.isError).toBeUndefined();
    expect(fs.readFileSync(path.join(workspace, 'a.txt'), 'utf8')).toBe('in');

    const outside = await write.execute(
      { path: path.join(elsewhere, 'b.txt'), content: 'out' },
      testContext(),
    );
    expect(outside.isError).toBe(true);
    expect(resultText(outside)).toMatch(/read-only file system|EROFS/i);
    expect(fs.existsSync(path.join(elsewhere, 'b.txt'))).toBe(false);
  });

  it('a server the sandbox killed for memory: the call says the sandbox did it', async () => {
    const workspace = dir(os.tmpdir(), 'mcp-sandbox-ws-');
    const sandbox = createSandbox({
      mode: 'required',
      writableRoots: [workspace],
      maxMemoryBytes: 256 * 1024 * 1024,
      onWarning: () => undefined,
    });
    try {
      if (sandbox.status.limits.maxMemoryBytes === undefined) {
        // No cgroup here (an ordinary user without delegation): not run unbounded, only said.
        expect(sandbox.describe()).toMatch(/memory NOT bounded/);
        return;
      }
      const server = await McpToolAdapter.connect({
        name: 'raw',
        transport: nodeServer(rawStdioServerEntry, [], { cwd: workspace, sandbox }),
      });
      adapters.push(server);
      const allocate = server.tools().find((tool) => tool.name === 'raw__allocate');
      if (allocate === undefined) throw new Error('no allocate tool');
      const small = await allocate.execute({ bytes: 8 * 1024 * 1024 }, testContext());
      expect(resultText(small)).toBe(`allocated ${8 * 1024 * 1024}`);
      // The call fails as a server that stopped answering does, saying why.
      await expect(allocate.execute({ bytes: 1024 * 1024 * 1024 }, testContext())).rejects.toThrow(
        /stopped answering while "allocate" was running: .*\sKilled by the sandbox: its commands used more than 256 MiB of memory together/s,
      );
    } finally {
      await sandbox.close();
    }
  });
});
