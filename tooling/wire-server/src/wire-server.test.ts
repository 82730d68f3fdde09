import { afterEach, describe, expect, it } from 'vitest';
import { sseEvents, startWireServer, type WireServer } from './index.js';

let server: WireServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('startWireServer', () => {
  it('records requests and replays chunks in order', async () => {
    server = await startWireServer([
      {
        headers: { 'content-type': 'text/event-stream' },
        body: sseEvents([{ event: 'a', data: { n: 1 } }, { data: '[DONE]' }]),
      },
    ]);
    const response = await fetch(`${server.url}/v1/x?y=1`, {
      method: 'POST',
      body: JSON.stringify({ hello: 'world' }),
    });
    expect(await response.text()).toBe('event: a\ndata: {"n":1}\n\ndata: [DONE]\n\n');
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]?.url).toBe('/v1/x?y=1');
    expect(server.requests[0]?.json).toEqual({ hello: 'world' });
  });

  it('cuts the connection after the given number of chunks', async () => {
    server = await startWireServer([{ body: ['one', 'two', 'three'], cutAfterChunks: 2 }]);
    const response = await fetch(server.url);
    await expect(response.text()).rejects.toThrow();
  });

  it('sees a client abort as a closed connection', async () => {
    server = await startWireServer([{ body: ['first'], hangAfterChunks: 1 }]);
    const controller = new AbortController();
    const closed = server.nextConnectionClose();
    const response = await fetch(server.url, { signal: controller.signal });
    const reader = response.body?.getReader();
    await reader?.read();
    controller.abort();
    await closed;
    expect(server.closedConnections).toBeGreaterThanOrEqual(1);
  });
});
