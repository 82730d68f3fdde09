// Test-only helpers shared by this package's test files (not exported from the package).
import { defineTool, type StreamEvent } from '@agent/core';
import {
  collectEvents,
  JSON_HEADERS,
  readSseFixture,
  SSE_HEADERS,
  type WireResponse,
} from '@agent/tooling-wire-server';
import * as z from 'zod';
import { compatPresets } from './compat.js';
import { createOpenAIProvider, type OpenAIProviderOptions } from './openai-provider.js';

/** A streamed 200 answer replaying a fixture from `__fixtures__/`. */
export function fixtureResponse(name: string, extra: Partial<WireResponse> = {}): WireResponse {
  return {
    status: 200,
    headers: SSE_HEADERS,
    body: readSseFixture(new URL(`./__fixtures__/${name}`, import.meta.url)),
    ...extra,
  };
}

/** A JSON error answer as OpenAI sends it. */
export function errorResponse(
  status: number,
  message: string,
  headers: Record<string, string> = {},
): WireResponse {
  return {
    status,
    headers: { ...JSON_HEADERS, ...headers },
    body: JSON.stringify({
      error: { message, type: 'invalid_request_error', param: null, code: null },
    }),
  };
}

/** An OpenAI provider pointed at a local wire server, with OpenAI's own compat settings. */
export function openaiAt(url: string, options: OpenAIProviderOptions = {}) {
  return createOpenAIProvider({
    baseURL: `${url}/v1`,
    apiKey: 'sk-test',
    id: 'openai',
    compat: { ...compatPresets.openai },
    retry: { initialDelayMs: 20, maxBackoffMs: 50 },
    clientOptions: { logLevel: 'off' },
    env: {},
    ...options,
  });
}

/** Every event of a stream. */
export const collect: (stream: AsyncIterable<StreamEvent>) => Promise<StreamEvent[]> =
  collectEvents;

/** The weather and time tools of the fixtures, counting their executions. */
export function weatherTools() {
  const executed: string[] = [];
  // get_weather finishes only after get_time, so completion order differs from call order.
  let timeDone: () => void = () => {};
  const timeFinished = new Promise<void>((resolve) => {
    timeDone = resolve;
  });
  const weather = defineTool({
    name: 'get_weather',
    description: 'Current weather for a city',
    input: z.object({
      city: z.string().describe('City name'),
      unit: z.enum(['celsius', 'fahrenheit']).optional(),
    }),
    execute: async ({ city, unit }) => {
      await Promise.race([timeFinished, new Promise((resolve) => setTimeout(resolve, 1000))]);
      executed.push(`get_weather:${city}:${unit ?? 'default'}`);
      return `${city}: 18°C, sunny`;
    },
  });
  const time = defineTool({
    name: 'get_time',
    description: 'Local time in a time zone',
    input: z.object({ timezone: z.string() }),
    execute: async ({ timezone }) => {
      executed.push(`get_time:${timezone}`);
      timeDone();
      return `${timezone}: 14:05`;
    },
  });
  return { tools: [weather, time], executed };
}
