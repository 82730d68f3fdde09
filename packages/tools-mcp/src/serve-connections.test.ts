// The connection limit of `serveHttp` against a local user without the token: holding every
// connection (idle, as any user of the machine can) kept the token's clients out — they were
// closed as they arrived. Real server on 127.0.0.1, raw sockets for the stranger, fetch for the
// token's client.
import { connect } from 'node:net';
import { defineTool } from '@agent/core';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { serveHttp } from './serve-http.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

/** A tool whose calls run until `release()`; `started()` resolves when the next one runs. */
function holdingTool() {
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));
  let onStart: () => void = () => undefined;
  const tool = defineTool({
    name: 'hold',
    description: 'Runs until released.',
    input: z.object({}),
    policy: { permission: 'read-only' },
    execute: async () => {
      onStart();
      await released;
      return 'released';
    },
  });
  const started = () => new Promise<void>((resolve) => (onStart = resolve));
  return { tool, started, release };
}

/** A stranger's raw connection: connected, sending nothing. */
interface Held {
  closed: Promise<void>;
  isClosed(): boolean;
}

function idle(port: number): Promise<Held> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let gone = false;
    const closed = new Promise<void>((done) =>
      socket.once('close', () => {
        gone = true;
        done();
      }),
    );
    socket.on('error', () => undefined);
    socket.once('connect', () => resolve({ closed, isClosed: () => gone }));
    socket.once('error', reject);
  });
}

async function served(maxConnections: number) {
  const holding = holdingTool();
  // The headers timeout is not what closes anything here, however slow the machine.
  const server = await serveHttp({
    tools: [holding.tool],
    maxConnections,
    headersTimeoutMs: 120_000,
  });
  closers.push(async () => {
    holding.release();
    await server.close();
  });
  const port = Number(new URL(server.url).port);
  const call = (id: number, name = 'hold') =>
    fetch(server.url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${server.token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name } }),
    });
  return { server, port, call, holding };
}

describe('connections past the limit', () => {
  it("strangers holding every connection do not keep the token's client out", async () => {
    const { port, call } = await served(4);
    const held: Held[] = [];
    for (let i = 0; i < 4; i++) held.push(await idle(port));
    // The token's client is served (it was closed as it arrived before)…
    const response = await call(1, 'nothing');
    expect(response.status).toBe(200);
    // …in the place of the stranger's connection that had been open longest.
    await held[0]?.closed;
    expect(held.slice(1).map((connection) => connection.isClosed())).toEqual([false, false, false]);
  });

  it('a connection that presented the token is never closed to make room', async () => {
    const { port, call, holding } = await served(3);
    const started = holding.started();
    const running = call(1);
    await started;
    const first = await idle(port);
    const second = await idle(port);
    // Full: the newcomer takes the oldest stranger's place, not the running call's.
    const third = await idle(port);
    await first.closed;
    expect([second.isClosed(), third.isClosed()]).toEqual([false, false]);
    holding.release();
    const answer = await running;
    expect(answer.status).toBe(200);
    expect(await answer.text()).toContain('released');
  });

  it("when every connection is the token's, a newcomer is closed at once", async () => {
    const { port, call, holding } = await served(2);
    const calls = [];
    for (const id of [1, 2]) {
      const started = holding.started();
      calls.push(call(id));
      await started;
    }
    const stranger = await idle(port);
    await stranger.closed;
    holding.release();
    for (const answer of await Promise.all(calls)) expect(answer.status).toBe(200);
  });
});
