import { Agent, type AssistantMessage, messageText } from '@agent/core';
import { closeWireServers, startWireServer, type WireServer } from '@agent/tooling-wire-server';
import { afterEach, describe, expect, it } from 'vitest';
import { collect, fixtureResponse, openaiAt, weatherTools } from '../test-helpers.js';

let server: WireServer | undefined;
afterEach(closeWireServers);

type ResponsesBody = {
  model: string;
  instructions?: string;
  input: unknown[];
  tools?: Array<{ type: string; name: string; strict: boolean; parameters: unknown }>;
  reasoning?: unknown;
  include?: string[];
  store?: boolean;
  max_output_tokens?: number;
};

describe('Responses API', () => {
  it('round-trips a two-turn parallel tool-use conversation and replays the reasoning item', async () => {
    server = await startWireServer([
      fixtureResponse('responses-tool-calls.sse'),
      fixtureResponse('responses-final-text.sse'),
    ]);
    const { tools, executed } = weatherTools();
    const provider = openaiAt(server.url, { api: 'responses' });
    const agent = new Agent({
      provider,
      model: 'o4-mini',
      systemPrompt: 'You are a helpful assistant.',
      tools,
      thinkingLevel: 'low',
      maxOutputTokens: 800,
    });
    const result = await agent.run('Weather and time in Paris?').result;

    expect(result.stopReason).toBe('completed');
    expect(executed).toEqual(['get_time:Europe/Paris', 'get_weather:Paris:default']);
    expect(result.finalMessage && messageText(result.finalMessage)).toBe(
      'In Paris it is 18°C and sunny; the local time is 14:05.',
    );
    const first = result.messages[1] as AssistantMessage;
    expect(first.content.map((block) => block.type)).toEqual([
      'thinking',
      'text',
      'toolCall',
      'toolCall',
    ]);
    expect(first.content[0]).toMatchObject({
      type: 'thinking',
      thinking: 'The user wants weather and time; call both tools.',
    });
    expect(first.usage).toMatchObject({ input: 82, cacheRead: 128, output: 95, totalTokens: 305 });
    expect(first.usage.cost?.total).toBeCloseTo((82 * 1.1 + 128 * 0.275 + 95 * 4.4) / 1e6, 12);

    expect(server.requests[0]?.url).toBe('/v1/responses');
    const [turn1, turn2] = server.requests.map((request) => request.json) as ResponsesBody[];
    expect(turn1).toMatchObject({
      model: 'o4-mini',
      instructions: 'You are a helpful assistant.',
      reasoning: { effort: 'low', summary: 'auto' },
      include: ['reasoning.encrypted_content'],
      store: false,
      max_output_tokens: 800,
    });
    expect(turn1?.tools?.map((tool) => [tool.type, tool.name, tool.strict])).toEqual([
      ['function', 'get_weather', true],
      ['function', 'get_time', true],
    ]);
    expect(turn2?.input).toEqual([
      { role: 'user', content: [{ type: 'input_text', text: 'Weather and time in Paris?' }] },
      {
        type: 'reasoning',
        id: 'rs_68a1f0c3d4e5819095b2a1c0f9e8d7c6',
        summary: [
          { type: 'summary_text', text: 'The user wants weather and time; call both tools.' },
        ],
        encrypted_content: 'gAAAAABoofDDk3Zx-ENCRYPTED-REASONING-PAYLOAD-1',
      },
      { role: 'assistant', content: 'Let me check the weather and the time.' },
      {
        type: 'function_call',
        call_id: 'call_Rw41kQz8PdYe2bTn',
        name: 'get_weather',
        arguments: '{"city":"Paris","unit":null}',
        id: 'fc_68a1f0c6a1b28190c4d5e6f7a8b9c0d1',
      },
      {
        type: 'function_call',
        call_id: 'call_Hp52mRa9QeZf3cUo',
        name: 'get_time',
        arguments: '{"timezone":"Europe/Paris"}',
        id: 'fc_68a1f0c7b2c38190d5e6f7a8b9c0d1e2',
      },
      // Results in call order although get_time finished first.
      {
        type: 'function_call_output',
        call_id: 'call_Rw41kQz8PdYe2bTn',
        output: 'Paris: 18°C, sunny',
      },
      {
        type: 'function_call_output',
        call_id: 'call_Hp52mRa9QeZf3cUo',
        output: 'Europe/Paris: 14:05',
      },
    ]);
  });

  it('does not replay reasoning items to another model (and then sends no item ids)', async () => {
    server = await startWireServer([fixtureResponse('responses-final-text.sse')]);
    const provider = openaiAt(server.url, { api: 'responses' });
    const events = await collect(
      provider.stream({
        model: 'gpt-5',
        messages: [
          { role: 'user', content: 'q', timestamp: 0 },
          {
            role: 'assistant',
            provider: 'openai',
            model: 'o4-mini',
            stopReason: 'toolUse',
            timestamp: 0,
            usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 },
            content: [
              {
                type: 'thinking',
                thinking: 's',
                signature: JSON.stringify({
                  type: 'reasoning',
                  id: 'rs_1',
                  summary: [],
                  encrypted_content: 'e',
                }),
              },
              {
                type: 'toolCall',
                id: 'call_1',
                name: 'get_time',
                arguments: '{}',
                providerMetadata: { openai: { itemId: 'fc_1' } },
              },
            ],
          },
          {
            role: 'toolResult',
            toolCallId: 'call_1',
            toolName: 'get_time',
            isError: false,
            timestamp: 0,
            content: [
              { type: 'text', text: 'see' },
              { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' },
            ],
          },
        ],
      }),
    );
    expect(events.at(-1)?.type).toBe('done');
    const body = server.requests[0]?.json as ResponsesBody;
    expect(body.input).toEqual([
      { role: 'user', content: [{ type: 'input_text', text: 'q' }] },
      { type: 'function_call', call_id: 'call_1', name: 'get_time', arguments: '{}' },
      {
        type: 'function_call_output',
        call_id: 'call_1',
        output: [
          { type: 'input_text', text: 'see' },
          { type: 'input_image', detail: 'auto', image_url: 'data:image/png;base64,iVBORw0KGgo=' },
        ],
      },
    ]);
  });
});

describe('Responses API: reasoning kept when no level is set', () => {
  it.each([
    ['a reasoning model, no level', 'o4-mini', undefined, true],
    ['a reasoning model, level off', 'o4-mini', 'off' as const, true],
    ['a reasoning model, level low', 'o4-mini', 'low' as const, true],
    ['a model that does not reason', 'gpt-4o', undefined, false],
  ])(
    '%s: encrypted reasoning asked for (before: only with a level)',
    async (_label, model, thinkingLevel, included) => {
      server = await startWireServer([fixtureResponse('responses-final-text.sse')]);
      await collect(
        openaiAt(server.url, { api: 'responses' }).stream({
          model,
          messages: [{ role: 'user', content: 'hi', timestamp: 0 }],
          ...(thinkingLevel === undefined ? {} : { thinkingLevel }),
        }),
      );
      const body = server.requests[0]?.json as ResponsesBody;
      expect(body.store).toBe(false);
      if (included) expect(body.include).toEqual(['reasoning.encrypted_content']);
      else expect(body.include).toBeUndefined();
    },
  );
});
