import { defineTool, type PermissionGate } from '@agent/core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { serveOn } from './serve.js';

const echo = defineTool({
  name: 'echo',
  description: 'Echoes its text.',
  input: z.object({ text: z.string() }),
  execute: async ({ text }) => text,
});

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

describe('served calls', () => {
  it('each get a toolCallId of their own, though two clients send the same JSON-RPC id', async () => {
    // Hooks and gates keep state per toolCallId (a PreToolUse verdict awaiting its call): one
    // client's must never be another's.
    const seen: string[] = [];
    const gate: PermissionGate = (request) => {
      seen.push(request.toolCallId);
      return { behavior: 'allow' };
    };
    const clients: Client[] = [];
    for (const name of ['first', 'second']) {
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      const served = await serveOn({ tools: [echo], permissionGate: gate }, serverSide);
      closers.push(served.close);
      const client = new Client({ name, version: '1' });
      await client.connect(clientSide);
      closers.push(() => client.close());
      clients.push(client);
    }
    await Promise.all(
      clients.map((client) => client.callTool({ name: 'echo', arguments: { text: 'hi' } })),
    );
    expect(seen).toHaveLength(2);
    expect(new Set(seen).size).toBe(2);
  });
});
