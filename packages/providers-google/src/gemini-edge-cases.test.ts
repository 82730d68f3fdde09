import { userMessage } from '@agent/core';
import {
  closeWireServers,
  collectEvents,
  fixtureReader,
  JSON_HEADERS,
  requestGapMs,
  SSE_HEADERS,
  sseEvents,
  startWireServer,
  terminalEvent,
  type WireServer,
} from '@agent/tooling-wire-server';
import { afterEach, describe, expect, it } from 'vitest';
import { createGeminiProvider } from './gemini-provider.js';

const fixture = fixtureReader(new URL('./__fixtures__/', import.meta.url));
const errorBody = (code: number, status: string, message: string) =>
  JSON.stringify({ error: { code, message, status } });

let server: WireServer | undefined;
afterEach(closeWireServers);

const request = { model: 'gemini-2.5-flash', messages: [userMessage('hi')] };
const fast = { initialDelayMs: 5, maxBackoffMs: 20 };

describe('Gemini retry edge cases', () => {
  it.each(['-1', '1 2'])(
    'treats retry-after %j as absent and backs off instead of retrying at once',
    async (value) => {
      server = await startWireServer([
        {
          status: 429,
          headers: { ...JSON_HEADERS, 'retry-after': value },
          body: errorBody(429, 'RESOURCE_EXHAUSTED', 'x'),
        },
        { headers: SSE_HEADERS, body: fixture('text.sse') },
      ]);
      const provider = createGeminiProvider({
        apiKey: 'k',
        baseURL: server.url,
        // random 0: the backoff is exactly 150 ms, so an immediate retry shows.
        retry: { initialDelayMs: 300, maxBackoffMs: 300, random: () => 0 },
      });
      expect(terminalEvent(await collectEvents(provider.stream(request))).type).toBe('done');
      expect(requestGapMs(server)).toBeGreaterThanOrEqual(135);
    },
  );

  it('forgets what a failed attempt reported (a prompt block) before retrying', async () => {
    server = await startWireServer([
      {
        headers: SSE_HEADERS,
        body: [
          ...sseEvents([{ data: { promptFeedback: { blockReason: 'OTHER' } } }]),
          ': padding\n\n',
          ': padding\n\n',
        ],
        // The socket dies after the block was read: a reset before any content, so retried.
        cutAfterChunks: 2,
        chunkDelayMs: 5,
      },
      { headers: SSE_HEADERS, body: fixture('text.sse') },
    ]);
    const provider = createGeminiProvider({ apiKey: 'k', baseURL: server.url, retry: fast });
    const events = await collectEvents(provider.stream(request));
    expect(server.requests).toHaveLength(2);
    expect(terminalEvent(events)).toMatchObject({
      type: 'done',
      message: { content: [{ type: 'text', text: 'Hello, world!' }] },
    });
  });

  it('sends nothing when the signal is already aborted', async () => {
    server = await startWireServer([{ headers: SSE_HEADERS, body: fixture('text.sse') }]);
    const provider = createGeminiProvider({ apiKey: 'k', baseURL: server.url });
    const events = await collectEvents(provider.stream(request, { signal: AbortSignal.abort() }));
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'error', reason: 'aborted' });
    expect(server.requests).toHaveLength(0);
  });
});

describe('Gemini function calls without ids', () => {
  it('gives every call of parallel streams its own id, the same in events and message', async () => {
    server = await startWireServer([{ headers: SSE_HEADERS, body: fixture('thinking-tools.sse') }]);
    const providers = [
      createGeminiProvider({ apiKey: 'k', baseURL: server.url }),
      createGeminiProvider({ apiKey: 'k', baseURL: server.url }),
    ];
    const runs = await Promise.all(
      [...providers, ...providers].map((provider) => collectEvents(provider.stream(request))),
    );
    const ids: string[] = [];
    for (const events of runs) {
      const started = events.flatMap((event) =>
        event.type === 'tool-call-start' ? [event.id] : [],
      );
      const ended = events.flatMap((event) =>
        event.type === 'tool-call-end' ? [event.toolCall.id] : [],
      );
      const end = terminalEvent(events);
      if (end.type !== 'done') throw new Error('expected done');
      const inMessage = end.message.content.flatMap((block) =>
        block.type === 'toolCall' ? [block.id] : [],
      );
      expect(started).toHaveLength(2);
      expect(ended).toEqual(started);
      expect(inMessage).toEqual(started);
      ids.push(...started);
    }
    expect(new Set(ids).size).toBe(8);
  });
});

describe('Gemini parameterless tools', () => {
  const tools = [
    { name: 'now', description: 'Time', parameters: { type: 'object' as const, properties: {} } },
    {
      name: 'echo',
      description: 'Echo',
      parameters: { type: 'object' as const, properties: { text: { type: 'string' } } },
    },
  ];

  it('declares them without parameters in the OpenAPI dialect (an empty OBJECT is a 400)', () => {
    const provider = createGeminiProvider({ apiKey: 'k', schemaDialect: 'openapi' });
    const params = provider.buildParams({ model: 'gemini-2.5-flash', messages: [], tools });
    expect(params.config?.tools).toEqual([
      {
        functionDeclarations: [
          { name: 'now', description: 'Time' },
          {
            name: 'echo',
            description: 'Echo',
            parameters: { type: 'OBJECT', properties: { text: { type: 'STRING' } } },
          },
        ],
      },
    ]);
  });

  it('keeps the empty object schema in the JSON Schema dialect', () => {
    const provider = createGeminiProvider({ apiKey: 'k' });
    const params = provider.buildParams({ model: 'gemini-2.5-flash', messages: [], tools });
    const declarations = params.config?.tools?.[0];
    expect(declarations).toMatchObject({
      functionDeclarations: [
        { name: 'now', parametersJsonSchema: { type: 'object', properties: {} } },
        { name: 'echo', parametersJsonSchema: { type: 'object' } },
      ],
    });
  });
});
