import { Agent, defineTool } from '@agent/core';
import {
  closeWireServers,
  fixtureReader,
  SSE_HEADERS,
  startWireServer,
} from '@agent/tooling-wire-server';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { createGeminiProvider } from './gemini-provider.js';

const fixture = fixtureReader(new URL('./__fixtures__/', import.meta.url));
afterEach(closeWireServers);

// Gemini's function response is a JSON object: a result that is only JSON goes as the value
// itself; mixed with text, as text.
describe('JSON tool-result content (Gemini)', () => {
  it('sends a JSON-only result natively and a mixed one as text', async () => {
    const server = await startWireServer([
      { headers: SSE_HEADERS, body: fixture('thinking-tools.sse') },
      { headers: SSE_HEADERS, body: fixture('final-text.sse') },
    ]);
    let calls = 0;
    const getWeather = defineTool({
      name: 'get_weather',
      description: 'Current weather of a city',
      input: z.object({ city: z.string(), unit: z.string().optional() }),
      execute: async ({ city }) => ({
        content:
          calls++ === 0
            ? [{ type: 'json', value: { city, celsius: 18, tags: ['sunny'], note: null } }]
            : [
                { type: 'text', text: 'Measured now:' },
                { type: 'json', value: { city } },
              ],
      }),
    });
    const agent = new Agent({
      provider: createGeminiProvider({ apiKey: 'k', baseURL: server.url }),
      model: 'gemini-2.5-flash',
      tools: [getWeather],
      toolExecution: { type: 'sequential' },
    });
    const result = await agent.run('Weather?').result;
    expect(result.stopReason).toBe('completed');
    const second = server.requests[1]?.json as {
      contents: { role: string; parts: { functionResponse?: { response: unknown } }[] }[];
    };
    const responses = second.contents
      .flatMap((content) => content.parts)
      .flatMap((part) => (part.functionResponse === undefined ? [] : [part.functionResponse]));
    // The fixture calls get_weather for Paris, then Oslo; they run in that order (sequential).
    expect(responses.map((response) => response.response)).toEqual([
      { output: { city: 'Paris', celsius: 18, tags: ['sunny'], note: null } },
      { output: 'Measured now:\n{\n  "city": "Oslo"\n}' },
    ]);
  });
});
