import { Agent, defineTool, type ToolResultMessage } from '@agent/core';
import {
  closeWireServers,
  fixtureReader,
  SSE_HEADERS,
  sseEvents,
  startWireServer,
  type WireServer,
} from '@agent/tooling-wire-server';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { createAnthropicProvider } from './anthropic-provider.js';

const fixture = fixtureReader(new URL('./__fixtures__/', import.meta.url));

let server: WireServer | undefined;
afterEach(closeWireServers);

describe('Anthropic provider in the agent loop', () => {
  it('round-trips text, thinking and parallel tool calls into a final answer', async () => {
    server = await startWireServer([
      { headers: SSE_HEADERS, body: fixture('thinking-tools.sse') },
      { headers: SSE_HEADERS, body: fixture('final-text.sse') },
    ]);
    let osloDone: () => void = () => {};
    const osloFinished = new Promise<void>((resolve) => {
      osloDone = resolve;
    });
    const executed: string[] = [];
    const getWeather = defineTool({
      name: 'get_weather',
      description: 'Current weather of a city',
      input: z.object({ city: z.string(), unit: z.enum(['celsius', 'fahrenheit']).optional() }),
      execute: async ({ city, unit }) => {
        // Paris finishes after Oslo: results must still reach the model in call order.
        if (city === 'Paris') await osloFinished;
        executed.push(city);
        if (city === 'Oslo') osloDone();
        return city === 'Paris' ? `18 ${unit ?? 'celsius'}, sunny` : '4 celsius, rain';
      },
    });
    const agent = new Agent({
      provider: createAnthropicProvider({ apiKey: 'k', baseURL: server.url }),
      model: 'claude-haiku-4-5',
      systemPrompt: 'You report the weather.',
      tools: [getWeather],
      thinkingLevel: 'low',
    });
    const result = await agent.run('Weather in Paris and Oslo?').result;

    expect(result.stopReason).toBe('completed');
    expect(result.turns).toBe(2);
    expect(executed).toEqual(['Oslo', 'Paris']);
    expect(result.finalMessage?.content).toEqual([
      { type: 'text', text: 'Paris is 18°C and sunny; Oslo is 4°C and raining.' },
    ]);
    const results = result.messages.filter(
      (message): message is ToolResultMessage => message.role === 'toolResult',
    );
    expect(results.map((message) => message.toolCallId)).toEqual(['toolu_01Paris', 'toolu_02Oslo']);

    expect(server.requests).toHaveLength(2);
    const first = server.requests[0]?.json as Record<string, unknown>;
    expect(first.thinking).toEqual({ type: 'enabled', budget_tokens: 4096 });
    expect(first.tools).toEqual([
      {
        name: 'get_weather',
        description: 'Current weather of a city',
        input_schema: getWeather.parameters,
      },
    ]);
    const second = server.requests[1]?.json as { messages: unknown[] };
    expect(second.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris and Oslo?' }] },
      {
        role: 'assistant',
        content: [
          {
            type: 'thinking',
            thinking: 'The user wants weather for two cities. I will call get_weather twice.',
            signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds',
          },
          { type: 'text', text: 'Let me check both cities.' },
          {
            type: 'tool_use',
            id: 'toolu_01Paris',
            name: 'get_weather',
            input: { city: 'Paris', unit: 'celsius' },
          },
          { type: 'tool_use', id: 'toolu_02Oslo', name: 'get_weather', input: { city: 'Oslo' } },
        ],
      },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'toolu_01Paris',
            content: [{ type: 'text', text: '18 celsius, sunny' }],
          },
          {
            type: 'tool_result',
            tool_use_id: 'toolu_02Oslo',
            content: [{ type: 'text', text: '4 celsius, rain' }],
          },
        ],
      },
    ]);
  });

  it('sends a rich zod schema as is and validates the arguments that come back', async () => {
    const input = z.object({
      query: z.string().describe('what to look for'),
      limit: z.number().int().min(1).max(50).optional(),
      filter: z
        .object({
          kind: z.enum(['file', 'dir']),
          tags: z.array(z.string()).optional(),
          range: z.object({ from: z.number(), to: z.number() }).optional(),
        })
        .optional(),
      target: z.union([z.string(), z.object({ path: z.string(), line: z.number() })]),
      sort: z.enum(['asc', 'desc']).default('asc'),
    });
    const received: unknown[] = [];
    const search = defineTool({
      name: 'search',
      description: 'Search the workspace',
      input,
      execute: async (args) => {
        received.push(args);
        return 'found 2';
      },
    });
    const args = {
      query: 'TODO',
      filter: { kind: 'file', tags: ['ts'], range: { from: 1, to: 9 } },
      target: { path: 'src/a.ts', line: 3 },
    };
    const json = JSON.stringify(args);
    const call = sseEvents([
      {
        event: 'message_start',
        data: {
          type: 'message_start',
          message: {
            id: 'msg_s',
            type: 'message',
            role: 'assistant',
            content: [],
            model: 'claude-haiku-4-5',
            stop_reason: null,
            stop_sequence: null,
            usage: { input_tokens: 5, output_tokens: 1 },
          },
        },
      },
      {
        event: 'content_block_start',
        data: {
          type: 'content_block_start',
          index: 0,
          content_block: { type: 'tool_use', id: 'toolu_s', name: 'search', input: {} },
        },
      },
      ...[json.slice(0, 17), json.slice(17, 40), json.slice(40)].map((part) => ({
        event: 'content_block_delta',
        data: {
          type: 'content_block_delta',
          index: 0,
          delta: { type: 'input_json_delta', partial_json: part },
        },
      })),
      { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
      {
        event: 'message_delta',
        data: {
          type: 'message_delta',
          delta: { stop_reason: 'tool_use', stop_sequence: null },
          usage: { output_tokens: 30 },
        },
      },
      { event: 'message_stop', data: { type: 'message_stop' } },
    ]);
    server = await startWireServer([
      { headers: SSE_HEADERS, body: call },
      { headers: SSE_HEADERS, body: fixture('final-text.sse') },
    ]);
    const agent = new Agent({
      provider: createAnthropicProvider({ apiKey: 'k', baseURL: server.url }),
      model: 'claude-haiku-4-5',
      tools: [search],
    });
    const result = await agent.run('find todos').result;
    expect(result.stopReason).toBe('completed');

    const sentBody = server.requests[0]?.json as { tools: Array<{ input_schema: unknown }> };
    const sentSchema = sentBody.tools[0]?.input_schema as Record<string, unknown>;
    expect(sentSchema).toEqual(search.parameters);
    expect(JSON.stringify(sentSchema)).not.toContain('$ref');
    expect(sentSchema).toMatchObject({
      type: 'object',
      required: expect.arrayContaining(['query', 'target']),
      properties: {
        target: { anyOf: expect.any(Array) },
        filter: { properties: { kind: { enum: ['file', 'dir'] } } },
      },
    });
    expect(received).toEqual([{ ...args, sort: 'asc' }]);
    expect(input.safeParse(received[0]).success).toBe(true);
  });
});
