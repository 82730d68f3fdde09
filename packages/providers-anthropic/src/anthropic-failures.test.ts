// Failures only this provider has; those every provider shares (HTTP errors, resets, aborts,
// a refused connection) are in the provider suite (tooling/wire-server, run by its *wire.test.ts).
import { Agent, defineTool, userMessage } from '@agent/core';
import {
  closeWireServers,
  collectEvents,
  fixtureReader,
  SSE_HEADERS,
  startWireServer,
  terminalEvent,
  type WireServer,
} from '@agent/tooling-wire-server';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { createAnthropicProvider } from './anthropic-provider.js';

const fixture = fixtureReader(new URL('./__fixtures__/', import.meta.url));
const errorBody = (type: string, message: string) =>
  JSON.stringify({ type: 'error', error: { type, message } });

let server: WireServer | undefined;
afterEach(closeWireServers);

const request = { model: 'claude-haiku-4-5', messages: [userMessage('hi')] };
const fast = { initialDelayMs: 5, maxBackoffMs: 20 };

describe('Anthropic failures become events', () => {
  it('maps an overloaded error event inside the stream to 529', async () => {
    const chunks = fixture('text-cache.sse').slice(0, 1);
    chunks.push(`event: error\ndata: ${errorBody('overloaded_error', 'Overloaded')}\n\n`);
    server = await startWireServer([{ headers: SSE_HEADERS, body: chunks }]);
    const provider = createAnthropicProvider({
      apiKey: 'k',
      baseURL: server.url,
      retry: fast,
      maxRetries: 0,
    });
    const end = terminalEvent(await collectEvents(provider.stream(request)));
    expect(end).toMatchObject({ type: 'error', error: { statusCode: 529, isRetryable: true } });
  });

  it('ends a stream cut after 3 deltas with one error event and runs no partial tool call', async () => {
    server = await startWireServer([
      // A pause between chunks lets each delta be read before the socket is destroyed.
      {
        headers: SSE_HEADERS,
        body: fixture('tool-call-cut.sse'),
        cutAfterChunks: 6,
        chunkDelayMs: 5,
      },
    ]);
    let executions = 0;
    const tool = defineTool({
      name: 'get_weather',
      description: 'Weather',
      input: z.object({ city: z.string() }),
      execute: async () => {
        executions++;
        return 'sunny';
      },
    });
    const provider = createAnthropicProvider({ apiKey: 'k', baseURL: server.url, retry: fast });
    const events = await collectEvents(provider.stream(request));
    expect(events.filter((event) => event.type === 'tool-call-delta')).toHaveLength(3);
    const end = terminalEvent(events);
    if (end.type !== 'error') throw new Error('expected error');
    expect(end.error.isRetryable).toBe(true);
    expect(end.message.content).toEqual([]);
    // No retry once content streamed.
    expect(server.requests).toHaveLength(1);

    const agent = new Agent({ provider, model: 'claude-haiku-4-5', tools: [tool] });
    const result = await agent.run('weather?').result;
    expect(result.stopReason).toBe('error');
    expect(executions).toBe(0);
  });
});
