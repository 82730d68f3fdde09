import { Agent, defineTool } from '@agent/core';
import { closeWireServers, startWireServer } from '@agent/tooling-wire-server';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { fixtureResponse, openaiAt } from './test-helpers.js';

afterEach(closeWireServers);

// OpenAI's tool outputs are text (or text and image parts): a JSON block goes as its text.
function jsonTools() {
  const getWeather = defineTool({
    name: 'get_weather',
    description: 'Current weather of a city',
    input: z.object({ city: z.string(), unit: z.string().optional() }),
    execute: async ({ city }) => ({
      content: [{ type: 'json', value: { city, celsius: 18 } }],
    }),
  });
  const getTime = defineTool({
    name: 'get_time',
    description: 'Current time in a time zone',
    input: z.object({ timezone: z.string() }),
    execute: async ({ timezone }) => ({
      content: [
        { type: 'text', text: 'Now:' },
        { type: 'json', value: [timezone, '14:05'] },
        { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' },
      ],
    }),
  });
  return [getWeather, getTime];
}

describe('JSON tool-result content (OpenAI)', () => {
  it('Chat Completions: the tool message’s content is the JSON text', async () => {
    const server = await startWireServer([
      fixtureResponse('chat-tool-calls.sse'),
      fixtureResponse('chat-final-text.sse'),
    ]);
    const agent = new Agent({
      provider: openaiAt(server.url, { api: 'chat' }),
      model: 'gpt-4o',
      tools: jsonTools(),
    });
    expect((await agent.run('Weather?').result).stopReason).toBe('completed');
    const second = server.requests[1]?.json as { messages: Record<string, unknown>[] };
    const toolMessages = second.messages.filter((message) => message.role === 'tool');
    expect(toolMessages.map((message) => message.content)).toEqual([
      '{\n  "city": "Paris",\n  "celsius": 18\n}',
      'Now:\n[\n  "Europe/Paris",\n  "14:05"\n]',
    ]);
  });

  it('Responses: function_call_output is the JSON text, or text parts beside an image', async () => {
    const server = await startWireServer([
      fixtureResponse('responses-tool-calls.sse'),
      fixtureResponse('responses-final-text.sse'),
    ]);
    const agent = new Agent({
      provider: openaiAt(server.url, { api: 'responses' }),
      model: 'o4-mini',
      tools: jsonTools(),
      thinkingLevel: 'low',
    });
    expect((await agent.run('Weather and time?').result).stopReason).toBe('completed');
    const second = server.requests[1]?.json as { input: Record<string, unknown>[] };
    const outputs = second.input
      .filter((item) => item.type === 'function_call_output')
      .map((item) => item.output);
    expect(outputs).toEqual([
      '{\n  "city": "Paris",\n  "celsius": 18\n}',
      [
        { type: 'input_text', text: 'Now:' },
        { type: 'input_text', text: '[\n  "Europe/Paris",\n  "14:05"\n]' },
        { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'auto' },
      ],
    ]);
  });
});
