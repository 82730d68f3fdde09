/**
 * A Streamable HTTP server that sends requests (pings) over a call's event stream and never
 * answers the POSTs that carry the client's replies. Each reply held a socket: the client had
 * thousands open (and thousands of abort listeners) and its event loop starved, until the
 * process ran out of descriptors. Now at most 256 POSTs wait for an answer; past that the
 * connection is given up and the call fails naming why. A real server on 127.0.0.1.
 */
import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { maxPendingPosts } from './bounded-fetch.js';
import { McpToolAdapter } from './mcp-tool-adapter.js';
import { testContext } from './test-helpers.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The server; `held` counts the client's replies it left unanswered. */
async function pingingServer(): Promise<{ url: string; held: () => number }> {
  const heldReplies: ServerResponse[] = [];
  const server = createServer(async (request, response) => {
    if (request.method !== 'POST') {
      response.writeHead(request.method === 'DELETE' ? 200 : 405).end();
      return;
    }
    let body = '';
    for await (const chunk of request) body += String(chunk);
    const message = JSON.parse(body) as { id?: number | string; method?: string; params?: never };
    if (message.method === undefined) {
      heldReplies.push(response); // a reply to our ping: never answered
      return;
    }
    if (message.id === undefined) {
      response.writeHead(202).end();
      return;
    }
    const json = (result: unknown) => {
      response.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's' });
      response.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
    };
    if (message.method === 'initialize')
      json({
        protocolVersion: '2025-06-18',
        capabilities: { tools: {} },
        serverInfo: { name: 'pinging', version: '1' },
      });
    else if (message.method === 'tools/list')
      json({ tools: [{ name: 'call', inputSchema: { type: 'object' } }] });
    else if (message.method === 'tools/call') {
      response.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': 's' });
      let next = 0;
      // Pings until the client goes away, each burst after the last one was taken.
      const burst = () => {
        if (response.destroyed) return;
        let text = '';
        for (let count = 0; count < 100; count++)
          text += `data: ${JSON.stringify({ jsonrpc: '2.0', id: `ping-${next++}`, method: 'ping' })}\n\n`;
        if (response.write(text)) setImmediate(burst);
        else response.once('drain', burst);
      };
      burst();
    } else json({});
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.push(async () => {
    server.closeAllConnections();
    server.close();
    await once(server, 'close');
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    held: () => heldReplies.filter((reply) => !reply.destroyed).length,
  };
}

describe('an HTTP server that never answers the POSTs carrying our replies', () => {
  it(`is given up past ${maxPendingPosts} waiting POSTs; the call fails naming why`, async () => {
    const { url, held } = await pingingServer();
    const errors: string[] = [];
    const adapter = await McpToolAdapter.connect({
      name: 'pinging',
      transport: { type: 'http', url },
      onError: (error) => errors.push(error.message),
    });
    cleanups.push(() => adapter.close());
    const [tool] = adapter.tools();
    const error = await Promise.resolve(tool?.execute({}, testContext())).then(
      () => undefined,
      (thrown: unknown) => thrown as Error,
    );
    expect(error?.message).toMatch(
      /MCP server "pinging" .*stopped accepting messages: 256 sent to it wait for its answer/,
    );
    expect(held()).toBeLessThanOrEqual(maxPendingPosts);
  });
});
