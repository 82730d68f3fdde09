import { ToolError } from '@agent/core';
import { afterEach, describe, expect, it } from 'vitest';
import { type McpAgentTool, McpToolAdapter } from './mcp-tool-adapter.js';
import {
  type HttpServerProcess,
  resultText,
  startEverythingHttp,
  testContext,
} from './test-helpers.js';

// The everything reference server in Streamable HTTP mode, a real HTTP server on 127.0.0.1.
describe('McpToolAdapter over Streamable HTTP (everything server)', () => {
  const servers: HttpServerProcess[] = [];
  const adapters: McpToolAdapter[] = [];
  afterEach(async () => {
    await Promise.all(adapters.splice(0).map((adapter) => adapter.close()));
    await Promise.all(servers.splice(0).map((server) => server.stop()));
  });

  async function setUp() {
    const server = await startEverythingHttp();
    servers.push(server);
    const errors: Error[] = [];
    const adapter = await McpToolAdapter.connect({
      name: 'remote',
      transport: { type: 'http', url: server.url, headers: { 'x-test': '1' } },
      onError: (error) => errors.push(error),
      reconnect: { maxAttempts: 2, delayMs: 10 },
    });
    adapters.push(adapter);
    const tool = (mcpName: string): McpAgentTool => {
      const found = adapter.tools().find((candidate) => candidate.name === `remote__${mcpName}`);
      if (found === undefined) throw new Error(`no tool ${mcpName}`);
      return found;
    };
    return { server, adapter, tool, errors };
  }

  it('lists and calls tools, with progress streamed over SSE', async () => {
    const { adapter, tool } = await setUp();
    expect(adapter.tools().length).toBeGreaterThan(5);
    expect(adapter.pid).toBeUndefined();
    expect(resultText(await tool('get-sum').execute({ a: 2, b: 3 }, testContext()))).toBe(
      'The sum of 2 and 3 is 5.',
    );
    const context = testContext();
    await tool('trigger-long-running-operation').execute({ duration: 0.2, steps: 2 }, context);
    expect(context.progress[0]).toEqual({ text: '1/2', fraction: 0.5 });
  });

  it('cancels a call when aborted', async () => {
    const { tool } = await setUp();
    const controller = new AbortController();
    const context = testContext({
      signal: controller.signal,
      onProgress: () => controller.abort(),
    });
    const error = await tool('trigger-long-running-operation')
      .execute({ duration: 60, steps: 600 }, context)
      .catch((thrown: unknown) => thrown);
    expect(ToolError.isInstance(error) && error.kind).toBe('cancelled');
    expect(resultText(await tool('echo').execute({ message: 'ok' }, testContext()))).toBe(
      'Echo: ok',
    );
  });

  it('fails a call in flight at once when the server dies, and reconnects to its successor', async () => {
    const { server, adapter, tool } = await setUp();
    const context = testContext({ onProgress: () => void server.stop('SIGKILL') });
    // 60 s would outlast the test timeout if the dead connection were not noticed.
    const error = await tool('trigger-long-running-operation')
      .execute({ duration: 60, steps: 600 }, context)
      .catch((thrown: unknown) => thrown);
    expect(ToolError.isInstance(error) && error.kind).toBe('failed');
    expect(String(error)).toMatch(
      /MCP server "remote" stopped answering while "trigger-long-running-operation" was running: it is unreachable \(fetch failed: .*(ECONNREFUSED|ECONNRESET)/,
    );
    expect(adapter.status).toBe('disconnected');

    // Nobody listens now: the next call tries (bounded) and says the server is unavailable.
    const unavailable = await tool('echo')
      .execute({ message: 'anyone?' }, testContext())
      .catch((thrown: unknown) => thrown);
    expect(String(unavailable)).toMatch(
      /MCP server "remote" is unavailable: 2 attempts to reconnect failed/,
    );

    // A new server on the same port: the next call opens a new session.
    servers.push(await startEverythingHttp(server.port));
    expect(resultText(await tool('echo').execute({ message: 'again' }, testContext()))).toBe(
      'Echo: again',
    );
    expect(adapter.status).toBe('connected');
  });

  it('close() ends the HTTP session on the server', async () => {
    const { server, adapter } = await setUp();
    await adapter.close();
    await server.waitForOutput('Received session termination request');
    expect(adapter.status).toBe('closed');
  });
});
