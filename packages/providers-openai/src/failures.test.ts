// Failures only this provider has; those every provider shares (HTTP errors, resets, aborts,
// a refused connection) are in the provider suite (tooling/wire-server, run by its *wire.test.ts).
import { Agent, type ProviderRequest, type StreamEvent } from '@agent/core';
import {
  closeWireServers,
  SSE_HEADERS,
  startWireServer,
  terminalEvent,
  type WireServer,
} from '@agent/tooling-wire-server';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createOpenAIProvider } from './openai-provider.js';
import { collect, fixtureResponse, openaiAt, weatherTools } from './test-helpers.js';

let server: WireServer | undefined;
afterEach(closeWireServers);

const request: ProviderRequest = {
  model: 'gpt-4o',
  messages: [{ role: 'user', content: 'hi', timestamp: 0 }],
};

describe('failures end in one error event', () => {
  it('a missing API key for OpenAI is an error event, not a throw', async () => {
    const provider = createOpenAIProvider({ env: {} });
    const event = terminalEvent(await collect(provider.stream(request)), { requireLast: true });
    expect(event.type === 'error' && event.error.message).toMatch(/OPENAI_API_KEY/);
  });

  it('a stream cut after 3 deltas of a tool call ends in an error and the partial call never runs', async () => {
    const full = fixtureResponse('chat-tool-calls.sse');
    const chunks = full.body as string[];
    // role chunk, get_weather start, then 3 argument deltas; then the connection drops. (The
    // SSE comment gives the last delta time to leave before the socket is destroyed.)
    const body = [
      chunks[0],
      chunks[4],
      chunks[5],
      chunks[6],
      chunks[7],
      ': keep-alive\n\n',
      ...chunks.slice(8),
    ] as string[];
    server = await startWireServer([{ ...full, body, chunkDelayMs: 5, cutAfterChunks: 6 }]);
    const { tools, executed } = weatherTools();
    const seen: StreamEvent[] = [];
    const agent = new Agent({
      provider: openaiAt(server.url, { api: 'chat' }),
      model: 'gpt-4o',
      tools,
    });
    agent.subscribe((event) => {
      if (event.type === 'message-update') seen.push(event.event);
    });
    const result = await agent.run('Weather?').result;

    expect(seen.filter((event) => event.type === 'tool-call-delta')).toHaveLength(3);
    expect(result.stopReason).toBe('error');
    expect(result.error).toMatch(/connection lost mid-stream/);
    expect(executed).toEqual([]);
    expect(server.requests).toHaveLength(1); // tokens had arrived: no retry
    // The half-streamed call is not kept: no result answers it, nothing goes back next turn.
    expect(result.messages.some((message) => message.role === 'toolResult')).toBe(false);
  });

  it('a malformed chunk ends the stream with a non-retryable error', async () => {
    server = await startWireServer([
      {
        headers: SSE_HEADERS,
        body: [
          ...(fixtureResponse('chat-final-text.sse').body as string[]).slice(0, 2),
          'data: {"choices": [\n\n',
        ],
      },
    ]);
    const event = terminalEvent(
      await collect(openaiAt(server.url, { api: 'chat' }).stream(request)),
      { requireLast: true },
    );
    expect(event.type === 'error' && event.error).toMatchObject({ isRetryable: false });
    expect(event.type === 'error' && event.error.message).toMatch(/malformed/i);
    expect(event.type === 'error' && event.message.content).toEqual([
      { type: 'text', text: 'In Paris it is ' },
    ]);
    expect(server.requests).toHaveLength(1);
  });

  it('a chunk of the wrong shape is malformed, not a crash', async () => {
    server = await startWireServer([{ headers: SSE_HEADERS, body: ['data: {"choices": 42}\n\n'] }]);
    const event = terminalEvent(
      await collect(openaiAt(server.url, { api: 'chat' }).stream(request)),
      { requireLast: true },
    );
    expect(event.type === 'error' && event.error.message).toMatch(
      /Malformed Chat Completions chunk/,
    );
  });

  it('a stream that ends before finish_reason is an error', async () => {
    const chunks = fixtureResponse('chat-final-text.sse').body as string[];
    server = await startWireServer([{ headers: SSE_HEADERS, body: chunks.slice(0, 3) }]);
    const event = terminalEvent(
      await collect(openaiAt(server.url, { api: 'chat' }).stream(request)),
      { requireLast: true },
    );
    expect(event.type === 'error' && event.error.message).toMatch(
      /ended before the model finished/,
    );
  });

  it('a Responses stream error event becomes the error', async () => {
    server = await startWireServer([
      {
        headers: SSE_HEADERS,
        body: [
          'event: error\ndata: {"type":"error","code":"invalid_prompt","message":"Invalid prompt","param":null,"sequence_number":0}\n\n',
        ],
      },
    ]);
    const event = terminalEvent(
      await collect(openaiAt(server.url, { api: 'responses' }).stream(request)),
      { requireLast: true },
    );
    expect(event.type === 'error' && event.error.message).toMatch(/Invalid prompt/);
    expect(server.requests).toHaveLength(1);
  });
});

describe('the SDK prints nothing of its own', () => {
  it('a malformed chunk is the error event only, not also lines on the console', async () => {
    server = await startWireServer([
      { headers: SSE_HEADERS, body: ['data: {not json at all\n\n', 'data: [DONE]\n\n'] },
    ]);
    const printed: unknown[][] = [];
    const spies = (['error', 'warn', 'log', 'info', 'debug'] as const).map((level) =>
      vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
        printed.push(args);
      }),
    );
    try {
      const event = terminalEvent(
        // No logLevel given (the helper's 'off' is taken away): the provider's default.
        await collect(openaiAt(server.url, { api: 'chat', clientOptions: {} }).stream(request)),
        { requireLast: true },
      );
      expect(event.type === 'error' && event.error.message).toMatch(/malformed/i);
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
    expect(printed).toEqual([]);
  });
});
