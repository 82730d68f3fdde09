import { Agent, defineTool, type ToolResultMessage } from '@agent/core';
import {
  closeWireServers,
  fixtureReader,
  SSE_HEADERS,
  startWireServer,
  type WireServer,
} from '@agent/tooling-wire-server';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { createGeminiProvider } from './gemini-provider.js';

const fixture = fixtureReader(new URL('./__fixtures__/', import.meta.url));

let server: WireServer | undefined;
afterEach(closeWireServers);

describe('Gemini provider in the agent loop', () => {
  it('round-trips thoughts and parallel function calls into a final answer', async () => {
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
        // Paris finishes after Oslo: responses must still reach the model in call order.
        if (city === 'Paris') await osloFinished;
        executed.push(city);
        if (city === 'Oslo') osloDone();
        return city === 'Paris' ? `18 ${unit ?? 'celsius'}, sunny` : '4 celsius, rain';
      },
    });
    const agent = new Agent({
      provider: createGeminiProvider({ apiKey: 'k', baseURL: server.url }),
      model: 'gemini-2.5-flash',
      systemPrompt: 'You report the weather.',
      tools: [getWeather],
      thinkingLevel: 'medium',
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
    expect(results.map((message) => message.content)).toEqual([
      [{ type: 'text', text: '18 celsius, sunny' }],
      [{ type: 'text', text: '4 celsius, rain' }],
    ]);

    expect(server.requests).toHaveLength(2);
    const first = server.requests[0]?.json as Record<string, unknown>;
    expect(first.generationConfig).toEqual({
      thinkingConfig: { thinkingBudget: 8192, includeThoughts: true },
    });
    const second = server.requests[1]?.json as { contents: unknown[] };
    expect(second.contents).toEqual([
      { role: 'user', parts: [{ text: 'Weather in Paris and Oslo?' }] },
      {
        role: 'model',
        parts: [
          { text: 'The user wants two cities. I will call get_weather twice.', thought: true },
          { text: 'Let me check both cities.' },
          {
            // Generated ids are not sent back; the thought signature is.
            functionCall: { name: 'get_weather', args: { city: 'Paris', unit: 'celsius' } },
            thoughtSignature: 'CiQB0e2Kb7Xw1sigParis',
          },
          { functionCall: { name: 'get_weather', args: { city: 'Oslo' } } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'get_weather', response: { output: '18 celsius, sunny' } } },
          { functionResponse: { name: 'get_weather', response: { output: '4 celsius, rain' } } },
        ],
      },
    ]);
  });

  it.each(['json-schema', 'openapi'] as const)(
    'accepts a rich zod schema in the %s dialect and validates the arguments',
    async (dialect) => {
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
      // Gemini fills an absent optional field with null now and then; that means "absent".
      const args = {
        query: 'TODO',
        limit: null,
        filter: { kind: 'file', tags: ['ts'], range: { from: 1, to: 9 } },
        target: { path: 'src/a.ts', line: 3 },
      };
      const call = `data: ${JSON.stringify({
        candidates: [
          {
            content: { role: 'model', parts: [{ functionCall: { name: 'search', args } }] },
            finishReason: 'STOP',
          },
        ],
      })}\n\n`;
      server = await startWireServer([
        { headers: SSE_HEADERS, body: [call] },
        { headers: SSE_HEADERS, body: fixture('final-text.sse') },
      ]);
      const warnings: string[] = [];
      const agent = new Agent({
        provider: createGeminiProvider({
          apiKey: 'k',
          baseURL: server.url,
          schemaDialect: dialect,
          onWarning: (message) => warnings.push(message),
        }),
        model: 'gemini-2.5-flash',
        tools: [search],
      });
      const result = await agent.run('find todos').result;
      expect(result.stopReason).toBe('completed');

      const sentBody = server.requests[0]?.json as {
        tools: Array<{ functionDeclarations: Array<Record<string, unknown>> }>;
      };
      const declaration = sentBody.tools[0]?.functionDeclarations[0];
      const sent = JSON.stringify(declaration);
      for (const banned of ['$schema', '$ref', '$defs', 'oneOf', 'const', 'exclusiveMinimum'])
        expect(sent).not.toContain(banned);
      if (dialect === 'openapi') {
        expect(sent).not.toContain('additionalProperties');
        expect(declaration?.parameters).toMatchObject({
          type: 'OBJECT',
          required: ['query', 'target'],
          properties: {
            query: { type: 'STRING', description: 'what to look for' },
            limit: { type: 'INTEGER', minimum: 1, maximum: 50 },
            filter: {
              type: 'OBJECT',
              properties: {
                kind: { type: 'STRING', enum: ['file', 'dir'] },
                tags: { type: 'ARRAY', items: { type: 'STRING' } },
              },
            },
            target: { anyOf: [{ type: 'STRING' }, { type: 'OBJECT' }] },
            sort: { type: 'STRING', enum: ['asc', 'desc'] },
          },
        });
      } else {
        expect(declaration?.parametersJsonSchema).toMatchObject({
          type: 'object',
          required: ['query', 'target'],
          properties: {
            limit: { type: 'integer', minimum: 1, maximum: 50 },
            filter: { properties: { kind: { enum: ['file', 'dir'] } } },
            target: { anyOf: [{ type: 'string' }, { type: 'object' }] },
          },
        });
      }
      expect(warnings).toEqual([]);
      const { limit: _absent, ...expected } = args;
      expect(received).toEqual([{ ...expected, sort: 'asc' }]);
      expect(input.safeParse(received[0]).success).toBe(true);
    },
  );
});
