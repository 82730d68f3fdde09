import { type AssistantMessage, type Message, type StreamEvent, userMessage } from '@agent/core';
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
import { createGeminiProvider } from './gemini-provider.js';

const fixture = fixtureReader(new URL('./__fixtures__/', import.meta.url));

let server: WireServer | undefined;
afterEach(closeWireServers);

function body(index = 0): Record<string, unknown> {
  return server?.requests[index]?.json as Record<string, unknown>;
}

function doneMessage(events: StreamEvent[]): AssistantMessage {
  const end = events.at(-1);
  if (end?.type !== 'done') throw new Error(`expected done, got ${JSON.stringify(end)}`);
  return end.message;
}

describe('createGeminiProvider over the wire', () => {
  it('streams text and reports usage with cached and thought tokens and cost', async () => {
    server = await startWireServer([{ headers: SSE_HEADERS, body: fixture('text.sse') }]);
    const provider = createGeminiProvider({
      apiKey: 'g-key',
      baseURL: server.url,
      headers: { 'x-custom': 'yes' },
    });
    const events = await collectEvents(
      provider.stream({
        model: 'gemini-2.5-flash',
        systemPrompt: 'Be brief.',
        messages: [userMessage('Say hello')],
        maxOutputTokens: 100,
        temperature: 0.3,
      }),
    );
    expect(events.map((event) => event.type)).toEqual([
      'start',
      'text-start',
      'text-delta',
      'text-delta',
      'text-delta',
      'text-end',
      'usage',
      'done',
    ]);
    const message = doneMessage(events);
    expect(message.content).toEqual([{ type: 'text', text: 'Hello, world!' }]);
    expect(message.stopReason).toBe('stop');
    expect(message.provider).toBe('google');
    // prompt 14 of which 10 cached; output = candidates 4 + thoughts 6.
    expect(message.usage).toMatchObject({
      input: 4,
      output: 10,
      cacheRead: 10,
      cacheWrite: 0,
      totalTokens: 24,
    });
    // Gemini 2.5 Flash: $0.30 in, $2.50 out, $0.03 cached per million.
    expect(message.usage.cost?.total).toBeCloseTo((4 * 0.3 + 10 * 2.5 + 10 * 0.03) / 1e6, 12);

    const request = server.requests[0];
    expect(request?.url).toBe('/v1/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
    expect(request?.headers['x-goog-api-key']).toBe('g-key');
    expect(request?.headers['x-custom']).toBe('yes');
    expect(body()).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'Say hello' }] }],
      systemInstruction: { parts: [{ text: 'Be brief.' }], role: 'user' },
      generationConfig: { maxOutputTokens: 100, temperature: 0.3 },
    });
  });

  it('generates ids for calls without one and keeps ids the model sent', async () => {
    server = await startWireServer([
      { headers: SSE_HEADERS, body: fixture('thinking-tools.sse') },
      { headers: SSE_HEADERS, body: fixture('call-with-id.sse') },
      { headers: SSE_HEADERS, body: fixture('final-text.sse') },
    ]);
    const provider = createGeminiProvider({ apiKey: 'k', baseURL: server.url });
    const request = { model: 'gemini-2.5-flash', messages: [userMessage('go')] as Message[] };
    const first = doneMessage(await collectEvents(provider.stream(request)));
    const calls = first.content.filter((block) => block.type === 'toolCall');
    expect(calls).toHaveLength(2);
    expect(calls[0]?.id).toMatch(/^call_/);
    expect(calls[1]?.id).toMatch(/^call_/);
    expect(calls[0]?.id).not.toBe(calls[1]?.id);
    expect(calls[0]?.providerMetadata).toEqual({
      thoughtSignature: 'CiQB0e2Kb7Xw1sigParis',
      generatedId: true,
    });
    expect(first.stopReason).toBe('toolUse');

    const second = doneMessage(await collectEvents(provider.stream(request)));
    expect(second.content).toEqual([
      { type: 'toolCall', id: 'fc-7b1e', name: 'get_weather', arguments: '{"city":"Lima"}' },
    ]);

    // Replay: the model's id goes back on both the call and the response; generated ones do not.
    const history: Message[] = [
      userMessage('go'),
      second,
      {
        role: 'toolResult',
        toolCallId: 'fc-7b1e',
        toolName: 'get_weather',
        content: [
          { type: 'text', text: 'cloudy' },
          { type: 'image', data: 'AAAA', mimeType: 'image/png' },
        ],
        isError: false,
        timestamp: 1,
      },
    ];
    await collectEvents(provider.stream({ model: 'gemini-2.5-flash', messages: history }));
    expect((body(2).contents as unknown[]).slice(1)).toEqual([
      {
        role: 'model',
        parts: [{ functionCall: { id: 'fc-7b1e', name: 'get_weather', args: { city: 'Lima' } } }],
      },
      {
        role: 'user',
        parts: [
          {
            functionResponse: {
              id: 'fc-7b1e',
              name: 'get_weather',
              response: { output: 'cloudy' },
            },
          },
          { inlineData: { mimeType: 'image/png', data: 'AAAA' } },
        ],
      },
    ]);
  });

  it('maps thinking levels, tool choice and the schema dialect into the request', async () => {
    server = await startWireServer([{ headers: SSE_HEADERS, body: fixture('text.sse') }]);
    const warnings: string[] = [];
    const provider = createGeminiProvider({
      apiKey: 'k',
      baseURL: server.url,
      thinkingBudgets: { high: 9000 },
      onWarning: (message) => warnings.push(message),
    });
    const tools = [
      {
        name: 'lookup',
        description: 'Look up',
        parameters: {
          type: 'object' as const,
          $schema: 'https://json-schema.org/draft/2020-12/schema',
          properties: { id: { type: 'string', pattern: '^[a-z]+$' } },
          required: ['id'],
          additionalProperties: false,
        },
      },
    ];
    await collectEvents(
      provider.stream({
        model: 'gemini-2.5-flash',
        messages: [userMessage('x')],
        tools,
        toolChoice: { type: 'tool', name: 'lookup' },
        thinkingLevel: 'high',
      }),
    );
    await collectEvents(
      provider.stream({
        model: 'gemini-3-pro-preview',
        messages: [userMessage('x')],
        thinkingLevel: 'low',
      }),
    );
    expect(body(0)).toMatchObject({
      generationConfig: { thinkingConfig: { thinkingBudget: 9000, includeThoughts: true } },
      toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['lookup'] } },
      tools: [
        {
          functionDeclarations: [
            {
              name: 'lookup',
              description: 'Look up',
              parametersJsonSchema: {
                type: 'object',
                properties: { id: { type: 'string' } },
                required: ['id'],
                additionalProperties: false,
              },
            },
          ],
        },
      ],
    });
    expect(body(1)).toMatchObject({
      generationConfig: { thinkingConfig: { thinkingLevel: 'LOW', includeThoughts: true } },
    });
    expect(warnings).toEqual([
      'Gemini tool "lookup": pattern at "id" dropped (still enforced when validating arguments)',
    ]);
  });

  it('ends with an error event for a SAFETY finish reason', async () => {
    const chunk = `data: ${JSON.stringify({
      candidates: [{ content: { parts: [{ text: 'I' }], role: 'model' }, finishReason: 'SAFETY' }],
    })}\n\n`;
    server = await startWireServer([{ headers: SSE_HEADERS, body: [chunk] }]);
    const provider = createGeminiProvider({ apiKey: 'k', baseURL: server.url });
    const events = await collectEvents(
      provider.stream({ model: 'gemini-2.5-flash', messages: [userMessage('x')] }),
    );
    expect(events.at(-1)).toMatchObject({
      type: 'error',
      reason: 'error',
      error: { message: 'Gemini stopped with finish reason SAFETY', isRetryable: false },
      message: { content: [{ type: 'text', text: 'I' }], stopReason: 'error' },
    });
  });

  it('turns a malformed chunk into one error event', async () => {
    const chunks = fixture('text.sse');
    chunks.splice(1, 0, 'data: {"candidates":[{"content":\n\n');
    server = await startWireServer([{ headers: SSE_HEADERS, body: chunks }]);
    const provider = createGeminiProvider({ apiKey: 'k', baseURL: server.url });
    const events = await collectEvents(
      provider.stream({ model: 'gemini-2.5-flash', messages: [userMessage('x')] }),
    );
    expect(terminalEvent(events)).toMatchObject({ type: 'error', error: { isRetryable: false } });
    expect(server.requests).toHaveLength(1);
  });

  it('ends with an error event, without throwing, when no API key is configured', async () => {
    const saved = { gemini: process.env.GEMINI_API_KEY, google: process.env.GOOGLE_API_KEY };
    delete process.env.GEMINI_API_KEY;
    delete process.env.GOOGLE_API_KEY;
    try {
      const provider = createGeminiProvider({ baseURL: 'http://127.0.0.1:9' });
      const events = await collectEvents(
        provider.stream({ model: 'gemini-2.5-flash', messages: [userMessage('x')] }),
      );
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({
        type: 'error',
        error: { statusCode: 401, message: expect.stringContaining('GEMINI_API_KEY') },
      });
    } finally {
      if (saved.gemini !== undefined) process.env.GEMINI_API_KEY = saved.gemini;
      if (saved.google !== undefined) process.env.GOOGLE_API_KEY = saved.google;
    }
  });
});
