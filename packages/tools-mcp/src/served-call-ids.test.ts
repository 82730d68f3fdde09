import { defineTool, type PermissionGate } from '@agent/core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import * as z from 'zod';
import { serveHttp, serveOn, type ToolServerOptions } from './serve.js';
import { HttpSessions, principalOf } from './serve-sessions.js';

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
  it('over HTTP: each client is a session of its own (a label of its Mcp-Session-Id), every call of it in that one', async () => {
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
    // Each session's label, not its id (which is all a client needs to act in it: see serve-sessions).
    const [first, second] = ['client 0 call 1', 'client 1 call 1'].map(
      (text) => calls.find((call) => call.text === text)?.session ?? '',
    );
    expect(first).toMatch(uuid);
    expect(second).toMatch(uuid);
    expect(first).not.toBe(second);
    expect(first).not.toBe(clients[0]?.transport.sessionId);
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

  it('over HTTP: requests with no session id share one session apart from the clients’; one the server never gave is refused', async () => {
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
      }).then((response) => response.text().then(() => response.status));
    expect(await call(undefined, 1)).toBe(200);
    expect(await call(undefined, 2)).toBe(200);
    expect(await call('../../etc/passwd', 3)).toBe(404);
    const client = new Client({ name: 'sdk', version: '1' });
    const transport = new StreamableHTTPClientTransport(new URL(server.url));
    await client.connect(transport);
    closers.push(() => client.close());
    await client.callTool({ name: 'echo', arguments: { text: 'sdk' } });
    const sessionOf = (text: string) => calls.find((entry) => entry.text === text)?.session;
    expect(sessionOf('raw 1')).toMatch(uuid);
    expect(sessionOf('raw 2')).toBe(sessionOf('raw 1'));
    expect(sessionOf('raw 3')).toBeUndefined();
    expect(sessionOf('sdk')).toMatch(uuid);
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

// serveHttp keeps the sessions it gives (serve-sessions.ts): an id it never gave, or one ended, is
// refused, and the gate and hooks never see the id itself.
async function connected(url: string, token: string | undefined) {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: token === undefined ? {} : { authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: 'client', version: '1' });
  await client.connect(transport);
  closers.push(() => client.close());
  return { client, transport, sessionId: transport.sessionId ?? '' };
}

/** A raw `tools/call` naming `sessionId`, with the server's token: its status. */
function rawCall(
  server: { url: string; token: string | undefined },
  sessionId: string,
  text: string,
  method = 'POST',
): Promise<number> {
  return fetch(server.url, {
    method,
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
      'mcp-session-id': sessionId,
      ...(server.token === undefined ? {} : { authorization: `Bearer ${server.token}` }),
    },
    ...(method === 'POST'
      ? {
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 7,
            method: 'tools/call',
            params: { name: 'echo', arguments: { text } },
          }),
        }
      : {}),
  }).then(async (response) => {
    await response.text();
    return response.status;
  });
}

describe('serveHttp sessions (real HTTP)', () => {
  it('a session id the server never gave is answered 404, and nothing runs', async () => {
    const { options, calls } = recording();
    const server = await serveHttp(options);
    closers.push(server.close);
    await connected(server.url, server.token);
    // Made up: of the old form (a UUID), of the new one, and a path.
    for (const made of ['3b241101-e2bb-4255-8caf-4136c566a962', 'A'.repeat(43), '../../etc/passwd'])
      expect(await rawCall(server, made, `made up ${made}`)).toBe(404);
    expect(calls).toEqual([]);
  });

  it('an ended session (DELETE) is refused from then on: its id is not reusable', async () => {
    const { options, calls } = recording();
    const server = await serveHttp(options);
    closers.push(server.close);
    const { client, transport, sessionId } = await connected(server.url, server.token);
    await client.callTool({ name: 'echo', arguments: { text: 'before' } });
    expect(await rawCall(server, sessionId, 'still open')).toBe(200);
    await transport.terminateSession();
    expect(await rawCall(server, sessionId, 'after the end')).toBe(404);
    expect(await rawCall(server, sessionId, '', 'DELETE')).toBe(404);
    expect(calls.map((call) => call.text)).toEqual(['before', 'still open']);
  });

  it('the gate and hooks get a label of the session, never the id that acts in it', async () => {
    const { options, calls } = recording();
    const server = await serveHttp(options);
    closers.push(server.close);
    const first = await connected(server.url, server.token);
    const second = await connected(server.url, server.token);
    for (const [index, { client }] of [first, second].entries())
      for (const round of [1, 2])
        await client.callTool({ name: 'echo', arguments: { text: `${index}.${round}` } });
    const sessionOf = (text: string) => calls.find((call) => call.text === text)?.session;
    expect(sessionOf('0.2')).toBe(sessionOf('0.1'));
    expect(sessionOf('1.2')).toBe(sessionOf('1.1'));
    expect(sessionOf('0.1')).not.toBe(sessionOf('1.1'));
    for (const call of calls) {
      expect(call.session).not.toBe(first.sessionId);
      expect(call.session).not.toBe(second.sessionId);
    }
    // The ids themselves: 256 random bits each.
    expect(first.sessionId).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('a session unused for sessionIdleMs is forgotten: its id is answered 404, a used one lives on', async () => {
    // Only the clock is faked (the sessions read performance.now); the server and sockets are real.
    vi.useFakeTimers({ toFake: ['performance'] });
    closers.push(async () => void vi.useRealTimers());
    const { options, calls } = recording();
    const server = await serveHttp({ ...options, sessionIdleMs: 60_000 });
    closers.push(server.close);
    const idle = await connected(server.url, server.token);
    const busy = await connected(server.url, server.token);
    vi.advanceTimersByTime(40_000);
    expect(await rawCall(server, busy.sessionId, 'busy at 40 s')).toBe(200);
    vi.advanceTimersByTime(25_000);
    expect(await rawCall(server, idle.sessionId, 'idle at 65 s')).toBe(404);
    expect(await rawCall(server, busy.sessionId, 'busy at 65 s')).toBe(200);
    vi.advanceTimersByTime(60_000);
    expect(await rawCall(server, busy.sessionId, 'busy at 125 s')).toBe(404);
    expect(await rawCall(server, busy.sessionId, '', 'DELETE')).toBe(404);
    expect(calls.map((call) => call.text)).toEqual(['busy at 40 s', 'busy at 65 s']);
  });

  it('forgets an idle session after 30 minutes by default', async () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    closers.push(async () => void vi.useRealTimers());
    const { options } = recording();
    const server = await serveHttp(options);
    closers.push(server.close);
    const { sessionId } = await connected(server.url, server.token);
    vi.advanceTimersByTime(29 * 60_000);
    expect(await rawCall(server, sessionId, 'at 29 minutes')).toBe(200);
    vi.advanceTimersByTime(30 * 60_000 + 1);
    expect(await rawCall(server, sessionId, 'past 30 idle minutes')).toBe(404);
  });

  it('refuses a sessionIdleMs that is not a positive number', async () => {
    for (const sessionIdleMs of [0, -1, Number.NaN])
      await expect(serveHttp({ tools: [echo], sessionIdleMs })).rejects.toThrow(/idle/);
  });
});

describe('HttpSessions', () => {
  it('binds each session to the credential that created it: another one is told it does not exist', () => {
    const sessions = new HttpSessions();
    const alice = principalOf('Bearer alice-token', true);
    const bob = principalOf('bearer   alice-token', true);
    expect(bob).toBe(alice);
    const mallory = principalOf('Bearer mallory-token', true);
    const { id, label } = sessions.start(alice);
    expect(sessions.find(id, alice)).toBe(label);
    expect(sessions.find(id, mallory)).toBeUndefined();
    expect(sessions.find(id, 'anonymous')).toBeUndefined();
    expect(sessions.end(id, mallory)).toBe(false);
    expect(sessions.end(id, alice)).toBe(true);
    expect(sessions.find(id, alice)).toBeUndefined();
  });

  it('keeps at most maxSessions, forgetting the least recently used', () => {
    const sessions = new HttpSessions({ maxSessions: 2 });
    const a = sessions.start('p');
    const b = sessions.start('p');
    sessions.find(a.id, 'p');
    const c = sessions.start('p');
    expect(sessions.size).toBe(2);
    expect(sessions.find(b.id, 'p')).toBeUndefined();
    expect(sessions.find(a.id, 'p')).toBe(a.label);
    expect(sessions.find(c.id, 'p')).toBe(c.label);
  });

  it('forgets sessions unused for idleMs, by the clock it is given; using one keeps it', () => {
    let now = 0;
    const sessions = new HttpSessions({ idleMs: 1000, now: () => now });
    const a = sessions.start('p');
    const b = sessions.start('p');
    now = 999;
    expect(sessions.find(a.id, 'p')).toBe(a.label);
    now = 1000;
    expect(sessions.find(b.id, 'p')).toBeUndefined();
    expect(sessions.size).toBe(1);
    now = 1998;
    expect(sessions.find(a.id, 'p')).toBe(a.label);
    // A new session sweeps the idle ones: none is kept past its time for want of a request naming it.
    now = 5000;
    sessions.start('p');
    expect(sessions.size).toBe(1);
    expect(sessions.end(a.id, 'p')).toBe(false);
  });
});
