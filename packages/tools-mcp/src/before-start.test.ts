// `beforeStart` of a stdio server: asked before every start, the first and each reconnect; a
// reason it gives refuses that start — nothing is spawned, and the call fails naming the reason.
import { ToolError } from '@agent/core';
import { afterEach, describe, expect, it } from 'vitest';
import { McpToolAdapter } from './mcp-tool-adapter.js';
import { flakyServerEntry, nodeServer, testContext } from './test-helpers.js';

const open: McpToolAdapter[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((adapter) => adapter.close()));
});

describe('a stdio server’s beforeStart', () => {
  it('refuses the start at once when it gives a reason', async () => {
    await expect(
      McpToolAdapter.connect({
        name: 'pinned',
        transport: nodeServer(flakyServerEntry, [], { beforeStart: () => 'its script changed' }),
      }),
    ).rejects.toThrow('MCP server "pinned" was not started: its script changed');
  });

  it('is asked again at a reconnect, which it can refuse (the server died; its files changed since)', async () => {
    let refusal: string | undefined;
    let asked = 0;
    const adapter = await McpToolAdapter.connect({
      name: 'pinned',
      transport: nodeServer(flakyServerEntry, [], {
        closeGraceMs: 200,
        beforeStart: () => {
          asked++;
          return refusal;
        },
      }),
      reconnect: { maxAttempts: 1, delayMs: 0 },
    });
    open.push(adapter);
    expect(asked).toBe(1);
    const tool = (name: string) => {
      const found = adapter.tools().find((candidate) => candidate.name === `pinned__${name}`);
      if (found === undefined) throw new Error(`no tool ${name}`);
      return found;
    };
    await expect(tool('die').execute({ code: 3 }, testContext())).rejects.toBeInstanceOf(ToolError);
    refusal = 'server.mjs changed during this session';
    const error = await tool('echo')
      .execute({ text: 'x' }, testContext())
      .then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
    expect(String(error)).toContain('server.mjs changed during this session');
    expect(asked).toBe(2);
    expect(adapter.pid).toBeUndefined();
  });
});
