// Failures only this provider has; those every provider shares (HTTP errors, resets, aborts,
// a refused connection) are in the provider suite (tooling/wire-server, run by its *wire.test.ts).
import { Agent, defineTool, userMessage } from '@agent/core';
import {
  closeWireServers,
  collectEvents,
  fixtureReader,
  JSON_HEADERS,
  requestGapMs,
  SSE_HEADERS,
  startWireServer,
  terminalEvent,
  type WireServer,
} from '@agent/tooling-wire-server';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { createGeminiProvider } from './gemini-provider.js';

const fixture = fixtureReader(new URL('./__fixtures__/', import.meta.url));
const errorBody = (code: number, status: string, message: string, details?: unknown[]) =>
  JSON.stringify({ error: { code, message, status, ...(details ? { details } : {}) } });

let server: WireServer | undefined;
afterEach(closeWireServers);

const request = { model: 'gemini-2.5-flash', messages: [userMessage('hi')] };
const fast = { initialDelayMs: 5, maxBackoffMs: 20 };

describe('Gemini failures become events', () => {
  it('honours RetryInfo in the error body when there is no header', async () => {
    server = await startWireServer([
      {
        status: 429,
        headers: JSON_HEADERS,
        body: errorBody(429, 'RESOURCE_EXHAUSTED', 'quota', [
          { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '0.3s' },
        ]),
      },
      { headers: SSE_HEADERS, body: fixture('text.sse') },
    ]);
    const provider = createGeminiProvider({
      apiKey: 'k',
      baseURL: server.url,
      retry: { initialDelayMs: 60_000 },
    });
    expect(terminalEvent(await collectEvents(provider.stream(request))).type).toBe('done');
    const gap = requestGapMs(server);
    expect(gap).toBeGreaterThanOrEqual(280);
    expect(gap).toBeLessThan(7500);
  });

  it('ends a stream cut after 3 deltas with one error event and runs no tool call', async () => {
    // Three text deltas and a function call, then the socket dies before finishReason.
    // A pause between chunks lets each one be read before the socket is destroyed.
    const chunks = [...fixture('text-then-call-cut.sse').slice(0, 4), ': padding\n\n'];
    server = await startWireServer([
      { headers: SSE_HEADERS, body: chunks, cutAfterChunks: 5, chunkDelayMs: 5 },
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
    const provider = createGeminiProvider({ apiKey: 'k', baseURL: server.url, retry: fast });
    const events = await collectEvents(provider.stream(request));
    expect(events.filter((event) => event.type === 'text-delta')).toHaveLength(3);
    const end = terminalEvent(events);
    if (end.type !== 'error') throw new Error('expected error');
    expect(end.error.isRetryable).toBe(true);
    // The response had begun: the connection was lost, not refused.
    expect(end.error.message).toMatch(/^Gemini connection lost: /);
    expect(end.message.stopReason).toBe('error');
    expect(server.requests).toHaveLength(1);

    const agent = new Agent({ provider, model: 'gemini-2.5-flash', tools: [tool] });
    const result = await agent.run('weather?').result;
    expect(result.stopReason).toBe('error');
    expect(executions).toBe(0);
  });
});
