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

/** A connected flaky server whose `beforeStart` answers `refusal` (none at first); counts the asks. */
async function pinnedServer(reconnect: { maxAttempts: number; delayMs: number }) {
  const state = { refusal: undefined as string | undefined, asked: 0 };
  const adapter = await McpToolAdapter.connect({
    name: 'pinned',
    transport: nodeServer(flakyServerEntry, [], {
      closeGraceMs: 200,
      beforeStart: () => {
        state.asked++;
        return state.refusal;
      },
    }),
    reconnect,
  });
  open.push(adapter);
  const tool = (name: string) => {
    const found = adapter.tools().find((candidate) => candidate.name === `pinned__${name}`);
    if (found === undefined) throw new Error(`no tool ${name}`);
    return found;
  };
  /** Calls `echo`; what it threw. */
  const echoError = () =>
    tool('echo')
      .execute({ text: 'x' }, testContext())
      .then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
  /** Kills the server through its `die` tool. */
  const kill = () =>
    expect(tool('die').execute({ code: 3 }, testContext())).rejects.toBeInstanceOf(ToolError);
  return { adapter, state, kill, echoError };
}

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
    const { adapter, state, kill, echoError } = await pinnedServer({ maxAttempts: 1, delayMs: 0 });
    expect(state.asked).toBe(1);
    await kill();
    state.refusal = 'server.mjs changed during this session';
    expect(String(await echoError())).toContain('server.mjs changed during this session');
    expect(state.asked).toBe(2);
    expect(adapter.pid).toBeUndefined();
  });

  it('a refused reconnect is not retried: the call fails at once with the reason', async () => {
    // Retries with backoff, as by default: a server that failed to start may start next time.
    const { state, kill, echoError } = await pinnedServer({ maxAttempts: 3, delayMs: 60_000 });
    await kill();
    state.refusal = 'server.mjs changed during this session';
    // A refusal is the owner's answer, not a failure to wait out: asked once, no delay, no retry.
    const error = await echoError();
    expect(ToolError.isInstance(error)).toBe(true);
    expect(String(error)).toContain(
      'MCP server "pinned" was not started: server.mjs changed during this session',
    );
    expect(String(error)).not.toContain('attempts to reconnect failed');
    expect(state.asked).toBe(2);
    // The next call asks again (the owner may have changed its answer), once.
    expect(String(await echoError())).toContain('was not started');
    expect(state.asked).toBe(3);
  });
});
