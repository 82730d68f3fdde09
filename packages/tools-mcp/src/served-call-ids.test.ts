import { defineTool, type PermissionGate } from '@agent/core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { serveHttp, serveOn, type ToolServerOptions } from './serve.js';

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

// A served call's gate and hooks know which client session asked (`forSession`): hooks that keep
// state per session (a rate limit, an audit log) must not mix two clients of one `serveHttp`.
/** Tools whose gate, made per session, writes down each call's session and text; its hooks too. */
function recording(): { options: ToolServerOptions; calls: { session: string; text: string }[] } {
  const calls: { session: string; text: string }[] = [];
  const options: ToolServerOptions = {
    tools: [echo],
    forSession: (session) => {
      const permissionGate: PermissionGate = (request) => {
        calls.push({ session, text: String((request.args as { text: unknown }).text) });
        return { behavior: 'allow' };
      };
      return {
        permissionGate,
        hooks: {
          afterToolExecution: async (_call, result) => ({
            ...result,
            content: [...result.content, { type: 'text', text: `after, in ${session}` }],
          }),
        },
      };
    },
  };
  return { options, calls };
}

function text(result: Awaited<ReturnType<Client['callTool']>>): string {
  return (result.content as { text?: string }[]).map((block) => block.text ?? '').join('\n');
}

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('forSession', () => {
  it('over HTTP: each client is a session of its own (its Mcp-Session-Id), every call of it in that one', async () => {
    const { options, calls } = recording();
    const server = await serveHttp({ ...options, auth: 'none' });
    closers.push(server.close);
    const clients: { client: Client; transport: StreamableHTTPClientTransport }[] = [];
    for (const name of ['first', 'second']) {
      const transport = new StreamableHTTPClientTransport(new URL(server.url));
      const client = new Client({ name, version: '1' });
      await client.connect(transport);
      closers.push(() => client.close());
      clients.push({ client, transport });
    }
    for (const round of [1, 2])
      await Promise.all(
        clients.map(({ client }, index) =>
          client.callTool({ name: 'echo', arguments: { text: `client ${index} call ${round}` } }),
        ),
      );
    const [first, second] = clients.map(({ transport }) => transport.sessionId ?? '');
    expect(first).toMatch(uuid);
    expect(second).toMatch(uuid);
    expect(first).not.toBe(second);
    expect(
      calls.toSorted((a, b) => a.text.localeCompare(b.text)).map((call) => call.session),
    ).toEqual([first, first, second, second]);
    expect(calls.find((call) => call.text === 'client 0 call 1')?.session).toBe(first);
    // The hooks of the same session saw the call.
    const result = await clients[1]?.client.callTool({
      name: 'echo',
      arguments: { text: 'again' },
    });
    expect(result === undefined ? '' : text(result)).toContain(`after, in ${second}`);
  });

  it('over HTTP: requests with no session id, or one not of the server’s form, share one session apart from the clients’', async () => {
    const { options, calls } = recording();
    const server = await serveHttp({ ...options, auth: 'none' });
    closers.push(server.close);
    const call = (sessionId: string | undefined, id: number) =>
      fetch(server.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-06-18',
          ...(sessionId === undefined ? {} : { 'mcp-session-id': sessionId }),
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id,
          method: 'tools/call',
          params: { name: 'echo', arguments: { text: `raw ${id}` } },
        }),
      }).then((response) => response.text());
    await call(undefined, 1);
    await call('../../etc/passwd', 2);
    const client = new Client({ name: 'sdk', version: '1' });
    const transport = new StreamableHTTPClientTransport(new URL(server.url));
    await client.connect(transport);
    closers.push(() => client.close());
    await client.callTool({ name: 'echo', arguments: { text: 'sdk' } });
    const sessionOf = (text: string) => calls.find((entry) => entry.text === text)?.session;
    expect(sessionOf('raw 1')).toMatch(uuid);
    expect(sessionOf('raw 2')).toBe(sessionOf('raw 1'));
    expect(sessionOf('sdk')).toBe(transport.sessionId);
    expect(sessionOf('sdk')).not.toBe(sessionOf('raw 1'));
  });

  it('on any other transport: one session per server, its calls all in it', async () => {
    const { options, calls } = recording();
    const sessions: (string | undefined)[] = [];
    for (const name of ['first', 'second']) {
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      const served = await serveOn(options, serverSide);
      closers.push(served.close);
      const client = new Client({ name, version: '1' });
      await client.connect(clientSide);
      closers.push(() => client.close());
      for (const round of [1, 2])
        await client.callTool({ name: 'echo', arguments: { text: `${name} ${round}` } });
      sessions.push(calls.find((call) => call.text === `${name} 1`)?.session);
      expect(calls.find((call) => call.text === `${name} 2`)?.session).toBe(sessions.at(-1));
    }
    expect(sessions[0]).toMatch(uuid);
    expect(sessions[1]).toMatch(uuid);
    expect(sessions[0]).not.toBe(sessions[1]);
  });
});
