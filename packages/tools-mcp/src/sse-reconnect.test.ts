// An HTTP server that closes its SSE streams at once with `retry: 0` must not have the client
// reconnect as fast as it can (before: ~500 GETs a second, for ever), and one whose `retry` is
// past what `setTimeout` holds must not either (it fired after 1 ms). The server's `retry` is still
// respected for the first few (SEP-1699; the conformance suite's sse-retry checks 500 ms), and
// resuming a call's stream with Last-Event-ID still works.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { McpToolAdapter } from './mcp-tool-adapter.js';
import {
  boundReconnectDelay,
  legacyStreamSpacingMs,
  maximumReconnectDelayMs,
  minimumReconnectDelayMs,
} from './sse-reconnect.js';
import { resultText, testContext } from './test-helpers.js';

interface Get {
  at: number;
  lastEventId: string | undefined;
  response: ServerResponse;
}

/** A raw Streamable HTTP server; `onGet` answers each GET, `onCall` each tools/call POST. */
async function startServer(handlers: {
  onGet: (get: Get, index: number) => void;
  onCall?: (id: unknown, response: ServerResponse) => void;
}) {
  const gets: Get[] = [];
  const waiters: (() => void)[] = [];
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    if (request.method === 'GET') {
      const header = request.headers['last-event-id'];
      const get = { at: performance.now(), lastEventId: header as string | undefined, response };
      gets.push(get);
      handlers.onGet(get, gets.length - 1);
      for (const wake of waiters.splice(0)) wake();
      return;
    }
    if (request.method === 'DELETE') {
      response.end();
      return;
    }
    let body = '';
    request.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    request.on('end', () => {
      const message = JSON.parse(body) as { id?: unknown; method: string; params?: never };
      if (message.id === undefined) {
        response.writeHead(202).end();
        return;
      }
      const reply = (result: unknown) => {
        response.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's-1' });
        response.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
      };
      if (message.method === 'initialize')
        reply({
          protocolVersion: (message.params as { protocolVersion: string } | undefined)
            ?.protocolVersion,
          capabilities: { tools: {} },
          serverInfo: { name: 'closing-streams', version: '1.0.0' },
        });
      else if (message.method === 'tools/list')
        reply({ tools: [{ name: 'slow', inputSchema: { type: 'object' } }] });
      else if (message.method === 'tools/call' && handlers.onCall !== undefined)
        handlers.onCall(message.id, response);
      else reply({});
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  const nthGet = async (count: number) => {
    while (gets.length < count) await new Promise<void>((resolve) => waiters.push(resolve));
    return gets.slice(0, count);
  };
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return { url, gets, nthGet, close };
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function sse(response: ServerResponse, text: string, end = true): void {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': 's-1' });
  if (end) response.end(text);
  else response.write(text);
}

describe('SSE streams the server closes at once', () => {
  it.each(['0', '1', '10'])(
    'retry: %s — five quick reconnections from the last event id, then the wait doubles from 1 s',
    async (retry) => {
      const server = await startServer({
        onGet: (get, index) => sse(get.response, `retry: ${retry}\nid: event-${index}\ndata: \n\n`),
      });
      cleanups.push(server.close);
      const adapter = await McpToolAdapter.connect({
        name: 'closing',
        transport: { type: 'http', url: server.url },
      });
      cleanups.push(() => adapter.close());
      const gets = await server.nthGet(8);
      const gaps = gets.slice(1).map((get, index) => get.at - (gets[index]?.at ?? 0));
      // setTimeout never fires early: these bounds hold whatever the machine's load.
      for (const gap of gaps.slice(0, 5))
        expect(gap).toBeGreaterThanOrEqual(minimumReconnectDelayMs - 5);
      expect(gaps[5]).toBeGreaterThanOrEqual(1_000 - 5);
      expect(gaps[6]).toBeGreaterThanOrEqual(2_000 - 5);
      expect(gets.slice(1, 4).map((get) => get.lastEventId)).toEqual([
        'event-0',
        'event-1',
        'event-2',
      ]);
    },
    15_000,
  );

  it('retry: 500 is respected (the conformance suite allows 450–1,000 ms)', async () => {
    const server = await startServer({
      onGet: (get, index) => sse(get.response, `retry: 500\nid: event-${index}\ndata: \n\n`),
    });
    cleanups.push(server.close);
    const adapter = await McpToolAdapter.connect({
      name: 'closing',
      transport: { type: 'http', url: server.url },
    });
    cleanups.push(() => adapter.close());
    const [first, second] = await server.nthGet(2);
    expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(500 - 5);
  });

  it('a call whose stream closes after its priming event is resumed with Last-Event-ID and answered', async () => {
    let callId: unknown;
    const server = await startServer({
      onGet: (get) => {
        // The standalone stream is not offered; the call's resumption is.
        if (get.lastEventId === undefined) {
          get.response.writeHead(405).end();
          return;
        }
        sse(
          get.response,
          `id: call-2\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: callId, result: { content: [{ type: 'text', text: 'resumed' }] } })}\n\n`,
        );
      },
      onCall: (id, response) => {
        callId = id;
        sse(response, 'retry: 0\nid: call-1\ndata: \n\n');
      },
    });
    cleanups.push(server.close);
    const adapter = await McpToolAdapter.connect({
      name: 'closing',
      transport: { type: 'http', url: server.url },
    });
    cleanups.push(() => adapter.close());
    const started = performance.now();
    const result = await adapter.tools()[0]?.execute({}, testContext());
    expect(result && resultText(result)).toBe('resumed');
    const resumed = server.gets.filter((get) => get.lastEventId !== undefined);
    expect(resumed.map((get) => get.lastEventId)).toEqual(['call-1']);
    expect((resumed[0]?.at ?? 0) - started).toBeGreaterThanOrEqual(minimumReconnectDelayMs - 5);
  });
});

describe('the bound itself', () => {
  it.each([
    [0, minimumReconnectDelayMs],
    [1, minimumReconnectDelayMs],
    [-1, minimumReconnectDelayMs],
    [2_500, 2_500],
    [9_999_999_999, maximumReconnectDelayMs],
    [Number.NaN, maximumReconnectDelayMs],
  ])('a server retry of %s ms waits %s ms', (serverRetryMs, expected) => {
    const transport = new StreamableHTTPClientTransport(new URL('http://127.0.0.1:9/mcp'));
    boundReconnectDelay(transport);
    // What the SDK stores from a `retry:` field (private in its types).
    const internals = transport as unknown as {
      _serverRetryMs?: number;
      _getNextReconnectionDelay: (attempt: number) => number;
    };
    internals._serverRetryMs = serverRetryMs;
    expect(internals._getNextReconnectionDelay(0)).toBe(expected);
  });

  it('a storm: after five reconnections within 10 s the wait doubles from 1 s, at most 30 s', () => {
    const transport = new StreamableHTTPClientTransport(new URL('http://127.0.0.1:9/mcp'));
    boundReconnectDelay(transport);
    const internals = transport as unknown as {
      _serverRetryMs?: number;
      _getNextReconnectionDelay: (attempt: number) => number;
    };
    internals._serverRetryMs = 0;
    const delays = Array.from({ length: 12 }, () => internals._getNextReconnectionDelay(0));
    expect(delays).toEqual([
      100, 100, 100, 100, 100, 1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000,
    ]);
  });

  it('without a server retry, the SDK’s own backoff is kept (1 s, 1.5 s, …, at most 30 s)', () => {
    const transport = new StreamableHTTPClientTransport(new URL('http://127.0.0.1:9/mcp'));
    boundReconnectDelay(transport);
    const delay = (transport as unknown as { _getNextReconnectionDelay: (n: number) => number })
      ._getNextReconnectionDelay;
    expect([0, 1, 20].map((attempt) => delay.call(transport, attempt))).toEqual([
      1_000, 1_500, 30_000,
    ]);
  });
});

describe('the HTTP+SSE (2024-11-05) transport', () => {
  it('an event stream closed at once with retry: 0 is opened again at most once a second', async () => {
    const opens: number[] = [];
    const waiters: (() => void)[] = [];
    let stream: ServerResponse | undefined;
    const server: Server = createServer((request, response) => {
      if (request.method === 'GET') {
        opens.push(performance.now());
        for (const wake of waiters.splice(0)) wake();
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.write(`retry: 0\nevent: endpoint\ndata: /messages?stream=${opens.length}\n\n`);
        // The first stream carries the handshake; every later one closes at once.
        if (stream === undefined) stream = response;
        else response.end();
        return;
      }
      // Streamable HTTP's POST is refused: the client falls back to HTTP+SSE.
      if (request.url === '/mcp') {
        response.writeHead(405).end();
        return;
      }
      let body = '';
      request.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      request.on('end', () => {
        response.writeHead(202).end();
        const message = JSON.parse(body) as { id?: unknown; method: string };
        if (message.id === undefined) return;
        const send = (result: unknown) =>
          stream?.write(
            `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: message.id, result })}\n\n`,
          );
        if (message.method === 'initialize')
          send({
            protocolVersion: '2024-11-05',
            capabilities: { tools: {} },
            serverInfo: { name: 'legacy-closing', version: '1.0.0' },
          });
        else if (message.method === 'tools/list') {
          send({ tools: [] });
          // Then the stream ends too, and the reconnecting begins.
          setImmediate(() => stream?.end());
        } else send({});
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(
      () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    );
    const adapter = await McpToolAdapter.connect({
      name: 'legacy',
      transport: {
        type: 'http',
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
      },
      onError: () => undefined,
    });
    cleanups.push(() => adapter.close());
    while (opens.length < 4) await new Promise<void>((resolve) => waiters.push(resolve));
    // Paced from when each GET was sent; the server sees them after a connection of varying
    // length, so the gaps it measures may be a little shorter (unpaced, they were ~2 ms).
    for (const index of [2, 3])
      expect((opens[index] ?? 0) - (opens[index - 1] ?? 0)).toBeGreaterThanOrEqual(
        legacyStreamSpacingMs - 100,
      );
  });
});
