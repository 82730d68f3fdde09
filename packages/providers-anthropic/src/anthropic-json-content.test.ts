import { Agent, defineTool } from '@agent/core';
import {
  closeWireServers,
  fixtureReader,
  SSE_HEADERS,
  startWireServer,
} from '@agent/tooling-wire-server';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { createAnthropicProvider } from './anthropic-provider.js';

const fixture = fixtureReader(new URL('./__fixtures__/', import.meta.url));
afterEach(closeWireServers);

// Anthropic's tool_result takes text and images, not JSON: a JSON block goes as its text.
describe('JSON tool-result content (Anthropic)', () => {
  it('sends a JSON block as its text, beside the result’s other text', async () => {
    const server = await startWireServer([
      { headers: SSE_HEADERS, body: fixture('thinking-tools.sse') },
      { headers: SSE_HEADERS, body: fixture('final-text.sse') },
    ]);
    const getWeather = defineTool({
      name: 'get_weather',
      description: 'Current weather of a city',
      input: z.object({ city: z.string(), unit: z.string().optional() }),
      execute: async ({ city }) => ({
        content:
          city === 'Paris'
            ? [{ type: 'json', value: { city, celsius: 18, sky: 'sunny' } }]
            : [
                { type: 'text', text: 'Measured now:' },
                { type: 'json', value: [4, 'rain'] },
              ],
      }),
    });
    const agent = new Agent({
      provider: createAnthropicProvider({ apiKey: 'k', baseURL: server.url }),
      model: 'claude-haiku-4-5',
      tools: [getWeather],
      thinkingLevel: 'low',
    });
    const result = await agent.run('Weather in Paris and Oslo?').result;
    expect(result.stopReason).toBe('completed');
    const second = server.requests[1]?.json as {
      messages: { role: string; content: { type: string; content?: unknown }[] }[];
    };
    const toolResults = second.messages
      .flatMap((message) => message.content)
      .filter((block) => block.type === 'tool_result');
    expect(toolResults.map((block) => block.content)).toEqual([
      [{ type: 'text', text: '{\n  "city": "Paris",\n  "celsius": 18,\n  "sky": "sunny"\n}' }],
      [
        { type: 'text', text: 'Measured now:' },
        { type: 'text', text: '[\n  4,\n  "rain"\n]' },
      ],
    ]);
    // Stored history keeps the JSON block itself.
    const stored = result.messages.find((message) => message.role === 'toolResult');
    expect(stored?.content).toEqual([
      { type: 'json', value: { city: 'Paris', celsius: 18, sky: 'sunny' } },
    ]);
  });
});
