import { request as httpRequest } from 'node:http';
import { defineTool, type PermissionGate } from '@agent/core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { McpToolAdapter } from './mcp-tool-adapter.js';
import { serveHttp, serveOn } from './serve.js';
import { resultText, testContext } from './test-helpers.js';

const add = defineTool({
  name: 'add',
  label: 'Add numbers',
  description: 'Adds two numbers.',
  input: z.object({ a: z.number(), b: z.number() }),
  policy: { permission: 'read-only' },
  execute: async ({ a, b }, ctx) => {
    ctx.onProgress('adding', 0.5);
    return `${a + b}`;
  },
});
const remove = defineTool({
  name: 'remove',
  description: 'Removes a file.',
  input: z.object({ path: z.string() }),
  permissionSubjects: ({ path }) => [path],
  execute: async ({ path }) => `removed ${path}`,
});
const slow = defineTool({
  name: 'slow',
  description: 'Waits until cancelled.',
  input: z.object({}),
  execute: (_args, ctx) =>
    new Promise<string>((_resolve, reject) => {
      ctx.signal.addEventListener('abort', () => reject(new Error('stopped')), { once: true });
    }),
});

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

const gate: PermissionGate = (request) =>
  request.toolName === 'remove' && request.subjects.some((subject) => subject.startsWith('/etc'))
    ? { behavior: 'deny', reason: 'outside the workspace' }
    : { behavior: 'allow' };

async function inMemoryClient() {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const served = await serveOn({ tools: [add, remove, slow], permissionGate: gate }, serverSide);
  closers.push(served.close);
  const client = new Client({ name: 'test', version: '1' });
  await client.connect(clientSide);
  closers.push(() => client.close());
  return client;
}

describe('AgentTools served as an MCP server', () => {
  it('lists the tools with their schemas and annotations from the policy', async () => {
    const client = await inMemoryClient();
    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
    expect(Object.keys(byName)).toEqual(['add', 'remove', 'slow']);
    expect(byName.add?.title).toBe('Add numbers');
    expect(byName.add?.inputSchema).toMatchObject({
      type: 'object',
      properties: { a: { type: 'number' }, b: { type: 'number' } },
    });
    expect(byName.add?.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    expect(byName.remove?.annotations).toMatchObject({
      readOnlyHint: false,
      destructiveHint: true,
    });
  });

  it('calls through the loop’s path: validation, the permission gate, progress', async () => {
    const client = await inMemoryClient();
    const progress: unknown[] = [];
    const sum = await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } }, undefined, {
      onprogress: (update) => progress.push(update),
    });
    expect(sum.content).toEqual([{ type: 'text', text: '5' }]);
    expect(progress).toEqual([{ progress: 0.5, total: 1, message: 'adding' }]);

    const invalid = await client.callTool({ name: 'add', arguments: { a: '2' } });
    expect(invalid.isError).toBe(true);
    expect(JSON.stringify(invalid.content)).toContain('at \\"a\\": expected number');

    const denied = await client.callTool({ name: 'remove', arguments: { path: '/etc/passwd' } });
    expect(denied.isError).toBe(true);
    expect(JSON.stringify(denied.content)).toContain('outside the workspace');
    const allowed = await client.callTool({ name: 'remove', arguments: { path: 'notes.txt' } });
    expect(allowed.content).toEqual([{ type: 'text', text: 'removed notes.txt' }]);

    const missing = await client.callTool({ name: 'nope', arguments: {} });
    expect(missing.isError).toBe(true);
  });

  it('a cancelled request stops the tool', async () => {
    const client = await inMemoryClient();
    const controller = new AbortController();
    const call = client.callTool({ name: 'slow', arguments: {} }, undefined, {
      signal: controller.signal,
    });
    setImmediate(() => controller.abort('enough'));
    await expect(call).rejects.toThrow();
  });

  it('over Streamable HTTP: our own adapter and the SDK client list and call the tools', async () => {
    const served = await serveHttp({ tools: [add, remove], permissionGate: gate });
    closers.push(served.close);
    expect(served.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);

    const { headers } = served.clientConfig;
    const client = new Client({ name: 'sdk', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(served.url), { requestInit: { headers } }),
    );
    closers.push(() => client.close());
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['add', 'remove']);

    const adapter = await McpToolAdapter.connect({
      name: 'served',
      transport: { type: 'http', url: served.url, headers },
    });
    closers.push(() => adapter.close());
    const tool = adapter.tools().find((candidate) => candidate.name === 'served__add');
    const context = testContext();
    const result = await tool?.execute({ a: 40, b: 2 }, context);
    expect(result === undefined ? '' : resultText(result)).toBe('42');
    expect(context.progress).toEqual([{ text: expect.stringContaining('adding'), fraction: 0.5 }]);
    // The served annotation reaches our adapter; the gate goes by it only when trusted.
    expect(tool?.policy?.permission).toBe('full-access');
    const trusting = await McpToolAdapter.connect({
      name: 'served',
      transport: { type: 'http', url: served.url, headers },
      trustReadOnlyHint: true,
    });
    closers.push(() => trusting.close());
    expect(trusting.tools().find((candidate) => candidate.name === 'served__add')?.policy).toEqual({
      permission: 'read-only',
    });
  });
});

describe('the HTTP server against DNS rebinding', () => {
  it('refuses a Host or Origin that is not the loopback address it listens on', async () => {
    const served = await serveHttp({ tools: [add] });
    closers.push(served.close);
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
    const { port } = new URL(served.url);
    // node:http, since fetch does not let a caller set Host.
    const post = (extra: Record<string, string>) =>
      new Promise<{ status: number }>((resolve, reject) => {
        const request = httpRequest(
          served.url,
          {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              accept: 'application/json, text/event-stream',
              authorization: `Bearer ${served.token}`,
              ...extra,
            },
          },
          (response) => {
            response.resume();
            resolve({ status: response.statusCode ?? 0 });
          },
        );
        request.on('error', reject);
        request.end(body);
      });
    expect((await post({ host: `evil.example:${port}` })).status).toBe(403);
    expect((await post({ origin: 'http://evil.example' })).status).toBe(403);
    expect(
      (await post({ host: `localhost:${port}`, origin: `http://localhost:${port}` })).status,
    ).toBe(200);
    expect((await post({})).status).toBe(200);
  });
});
