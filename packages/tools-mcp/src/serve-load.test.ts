// `serveHttp` under load from whoever holds the token: concurrent calls past the cap wait (in a
// bounded queue) or are refused with a JSON-RPC error; a connection that pipelines thousands of
// requests without reading the answers is closed before it can start more than a few. Real
// server on 127.0.0.1, the SDK's client and raw sockets. Bounds are asserted on counts (calls
// running, requests in progress), not on time; the memory each flood cost is printed.
import { connect, type Socket } from 'node:net';
import { defineTool } from '@agent/core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import {
  type HttpServeOptions,
  type HttpToolServer,
  type HttpToolServerActivity,
  serveHttp,
} from './serve-http.js';
import { serverBusyErrorCode } from './tool-server.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A tool that holds each call until `releaseAll`; counts how many ran at once at most. */
function holdingTool() {
  const state = { running: 0, peak: 0, started: 0 };
  const held: (() => void)[] = [];
  const startWaiters: { count: number; resolve: () => void }[] = [];
  const idleWaiters: (() => void)[] = [];
  const tool = defineTool({
    name: 'hold',
    description: 'Holds until released.',
    input: z.object({ label: z.string() }),
    policy: { permission: 'read-only' },
    execute: (_args, ctx) =>
      new Promise<string>((resolve) => {
        state.running += 1;
        state.started += 1;
        state.peak = Math.max(state.peak, state.running);
        for (const waiter of startWaiters.splice(0))
          if (state.started >= waiter.count) waiter.resolve();
          else startWaiters.push(waiter);
        const done = () => {
          state.running -= 1;
          if (state.running === 0) for (const idle of idleWaiters.splice(0)) idle();
          resolve('released');
        };
        held.push(done);
        ctx.signal.addEventListener('abort', done, { once: true });
      }),
  });
  return {
    tool,
    state,
    /** Resolves once `count` calls have started in all. */
    started: (count: number) =>
      new Promise<void>((resolve) => {
        if (state.started >= count) resolve();
        else startWaiters.push({ count, resolve });
      }),
    /** Resolves once no call is running. */
    idle: () =>
      new Promise<void>((resolve) => {
        if (state.running === 0) resolve();
        else idleWaiters.push(resolve);
      }),
    releaseAll: () => {
      for (const done of held.splice(0)) done();
    },
  };
}

async function served(
  options: Omit<HttpServeOptions, 'tools'>,
  tool: ReturnType<typeof holdingTool>,
) {
  const server = await serveHttp({ tools: [tool.tool], ...options });
  cleanups.push(() => server.close());
  return server;
}

async function client(server: HttpToolServer): Promise<Client> {
  const sdk = new Client({ name: 'sdk', version: '1' });
  await sdk.connect(
    new StreamableHTTPClientTransport(new URL(server.url), {
      requestInit: { headers: { Authorization: `Bearer ${server.token}` } },
    }),
  );
  cleanups.push(() => sdk.close());
  return sdk;
}

describe('concurrent calls of one token', () => {
  it('past maxConcurrentCalls they wait; past maxQueuedCalls they get a JSON-RPC error', async () => {
    const hold = holdingTool();
    const server = await served({ maxConcurrentCalls: 2, maxQueuedCalls: 3 }, hold);
    // Several clients with the one token: the cap is the token's, not a connection's.
    const clients = await Promise.all([1, 2, 3].map(() => client(server)));
    const calls = Array.from({ length: 10 }, (_, index) =>
      (clients[index % 3] as Client)
        .callTool({ name: 'hold', arguments: { label: String(index) } })
        .then(
          () => 'ran' as const,
          (error: unknown) => error,
        ),
    );
    // Five are refused as they come (two run, three wait); the others are held.
    const refused: unknown[] = [];
    await new Promise<void>((done) => {
      for (const call of calls)
        void call.then((outcome) => {
          if (outcome !== 'ran') refused.push(outcome);
          if (refused.length === 5) done();
        });
    });
    for (const error of refused) {
      expect(error).toBeInstanceOf(McpError);
      expect((error as McpError).code).toBe(serverBusyErrorCode);
      expect((error as McpError).message).toContain('Too many tool calls at once');
      expect((error as McpError).message).toContain('maxConcurrentCalls 2, maxQueuedCalls 3');
    }
    expect(server.activity()).toMatchObject({ callsRunning: 2, callsWaiting: 3 });
    expect(hold.state.running).toBe(2);
    // Released, the waiting calls run in turn; never more than two at once.
    const finished = Promise.all(calls);
    while (hold.state.started < 5) {
      hold.releaseAll();
      await hold.started(hold.state.started + 1);
    }
    hold.releaseAll();
    const outcomes = await finished;
    expect(outcomes.filter((outcome) => outcome === 'ran')).toHaveLength(5);
    expect(hold.state.peak).toBe(2);
    expect(server.activity()).toMatchObject({ callsRunning: 0, callsWaiting: 0 });
  });

  it('a waiting call the client abandons leaves the queue', async () => {
    const hold = holdingTool();
    const server = await served({ maxConcurrentCalls: 1, maxQueuedCalls: 4 }, hold);
    const sdk = await client(server);
    const first = sdk.callTool({ name: 'hold', arguments: { label: 'first' } });
    await hold.started(1);
    const abandon = new AbortController();
    const waiting = sdk
      .callTool({ name: 'hold', arguments: { label: 'second' } }, undefined, {
        signal: abandon.signal,
      })
      .catch((error: unknown) => error);
    // The second call is queued once the server holds it: nothing to await but its arrival.
    await until(server, (now) => now.callsWaiting === 1);
    abandon.abort();
    expect(await waiting).toBeInstanceOf(Error);
    await until(server, (now) => now.callsWaiting === 0);
    hold.releaseAll();
    await first;
    // The abandoned call never ran.
    expect(hold.state.started).toBe(1);
  });

  it.each([
    [{ maxConcurrentCalls: 0 }, 'maxConcurrentCalls must be a number >= 1'],
    [{ maxConcurrentCalls: Number.NaN }, 'maxConcurrentCalls must be a number >= 1'],
    [{ maxQueuedCalls: -1 }, 'maxQueuedCalls must be a number >= 0'],
    [{ maxPipelinedRequests: 0 }, 'maxPipelinedRequests must be a number >= 1'],
  ])('%j is refused before anything listens', async (options, message) => {
    await expect(serveHttp({ tools: [holdingTool().tool], ...options })).rejects.toThrow(message);
  });
});

/** One pipelined tools/call request, as raw HTTP/1.1. */
function callRequest(port: number, token: string, id: number): string {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'hold', arguments: { label: String(id) } },
  });
  return (
    `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${token}\r\n` +
    'Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
}

/** A connection that writes `count` requests and never reads an answer. */
async function flood(port: number, token: string, count: number): Promise<Socket> {
  const socket: Socket = connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  cleanups.push(async () => socket.destroy());
  // Never read: the answers pile up on the server's side unless it stops taking requests.
  socket.pause();
  await new Promise((resolve) => socket.once('connect', resolve));
  const requests: string[] = [];
  for (let id = 1; id <= count; id++) requests.push(callRequest(port, token, id));
  socket.write(requests.join(''));
  return socket;
}

/**
 * Resolves once `condition` holds of the server's activity. (A client that never reads does not
 * see the close while answers sit unread before it, so the server is asked, each turn of the
 * event loop.)
 */
async function until(
  server: HttpToolServer,
  condition: (activity: HttpToolServerActivity) => boolean,
): Promise<void> {
  while (!condition(server.activity())) await new Promise((tick) => setImmediate(tick));
}

function megabytes(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(0)} MB`;
}

describe('a connection that pipelines without reading', () => {
  it.each([
    { connections: 1, requests: 20_000 },
    { connections: 8, requests: 2_500 },
  ])(
    '$connections connection(s) × $requests requests: closed, few started, memory bounded',
    async ({ connections, requests }) => {
      const hold = holdingTool();
      const server = await served({}, hold);
      const port = Number(new URL(server.url).port);
      const token = server.token ?? '';
      const before = process.memoryUsage().rss;
      await Promise.all(Array.from({ length: connections }, () => flood(port, token, requests)));
      await until(server, (now) => now.connectionsClosedForPipelining === connections);
      // The closed connections' calls are stopped (nobody released them), their turns given back.
      await hold.idle();
      await until(server, (now) => now.callsRunning === 0);
      const after = process.memoryUsage().rss;
      const activity = server.activity();
      console.info(
        `serve flood: ${connections} × ${requests} pipelined calls; RSS ${megabytes(before)} → ${megabytes(after)}; ` +
          `at most ${activity.mostRequestsInProgress} requests in progress, ${hold.state.peak} calls at once, ${hold.state.started} started`,
      );
      // Every flooding connection was closed by the server after at most 16 requests each; at
      // most 8 calls ran at once (the default caps), and none is left running or waiting.
      expect(activity.connectionsClosedForPipelining).toBe(connections);
      expect(activity.mostRequestsInProgress).toBeLessThanOrEqual(16 * connections);
      expect(hold.state.peak).toBeLessThanOrEqual(8);
      expect(hold.state.started).toBeLessThan(16 * connections + 1);
      expect(hold.state.running).toBe(0);
      expect(activity).toMatchObject({ requestsInProgress: 0, callsRunning: 0, callsWaiting: 0 });
      // The server still answers a well-behaved client once the floods are gone.
      hold.releaseAll();
      const sdk = await client(server);
      const answer = sdk.callTool({ name: 'hold', arguments: { label: 'after' } });
      await hold.started(hold.state.started + 1);
      hold.releaseAll();
      expect((await answer).isError).toBeFalsy();
    },
  );
});
