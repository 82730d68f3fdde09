import { defineTool } from '@agent/core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { McpToolAdapter } from './mcp-tool-adapter.js';
import { serveOn } from './serve.js';
import { resultText, testContext } from './test-helpers.js';

// Core's JSON content block (Kiro's JSON output item) across MCP, both ways: our tools served as
// MCP give it as text plus structuredContent; an MCP server's structuredContent comes back as a
// JSON block when it sent nothing else.

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

const stats = defineTool({
  name: 'stats',
  description: 'Counts things.',
  input: z.object({ only: z.enum(['object', 'array', 'mixed']) }),
  policy: { permission: 'read-only' },
  execute: async ({ only }) => ({
    content:
      only === 'object'
        ? [{ type: 'json', value: { files: 3, lines: 120 } }]
        : only === 'array'
          ? [{ type: 'json', value: [1, 2] }]
          : [
              { type: 'text', text: 'Counted.' },
              { type: 'json', value: { files: 3 } },
            ],
  }),
});

async function client() {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const served = await serveOn({ tools: [stats] }, serverSide);
  closers.push(served.close);
  const mcp = new Client({ name: 'test', version: '1' });
  await mcp.connect(clientSide);
  closers.push(() => mcp.close());
  return { mcp, clientSide };
}

describe('JSON content over MCP', () => {
  it('served: a JSON object goes as its text and as structuredContent', async () => {
    const { mcp } = await client();
    const result = await mcp.callTool({ name: 'stats', arguments: { only: 'object' } });
    expect(result.structuredContent).toEqual({ files: 3, lines: 120 });
    expect(result.content).toEqual([{ type: 'text', text: '{\n  "files": 3,\n  "lines": 120\n}' }]);
  });

  it('served: an array or text beside it goes as text only (structuredContent is an object)', async () => {
    const { mcp } = await client();
    const array = await mcp.callTool({ name: 'stats', arguments: { only: 'array' } });
    expect(array.structuredContent).toBeUndefined();
    expect(array.content).toEqual([{ type: 'text', text: '[\n  1,\n  2\n]' }]);
    const mixed = await mcp.callTool({ name: 'stats', arguments: { only: 'mixed' } });
    expect(mixed.structuredContent).toEqual({ files: 3 });
    expect(mixed.content).toEqual([
      { type: 'text', text: 'Counted.' },
      { type: 'text', text: '{\n  "files": 3\n}' },
    ]);
  });

  it('round trip: our served tool read back through McpToolAdapter keeps the text the model reads', async () => {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const served = await serveOn({ tools: [stats] }, serverSide);
    closers.push(served.close);
    const adapter = await McpToolAdapter.connect({
      name: 'ours',
      transport: { type: 'custom', create: () => clientSide },
    });
    closers.push(() => adapter.close());
    const tool = adapter.tools().find((each) => each.name === 'ours__stats');
    const result = await tool?.execute({ only: 'object' }, testContext());
    // The server sent text too, so the text is kept and structuredContent stays in details.
    expect(result?.content).toHaveLength(1);
    expect(result && resultText(result)).toBe('{\n  "files": 3,\n  "lines": 120\n}');
    expect(result?.details?.structuredContent).toEqual({ files: 3, lines: 120 });
  });
});
