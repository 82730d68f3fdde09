// Real AI SDK provider packages (`@ai-sdk/openai-compatible`, `@ai-sdk/anthropic`) over real HTTP:
// a local server that replays recorded vendor transcripts, on 127.0.0.1 port 0.
import { Agent, defineTool, messageText, type StreamEvent } from '@agent/core';
import {
  closeWireServers,
  JSON_HEADERS,
  readSseFixture,
  SSE_HEADERS,
  startWireServer,
  type WireResponse,
} from '@agent/tooling-wire-server';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { isStepCount, streamText } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { fromAiSdkModel } from './ai-sdk-provider.js';
import { toAiSdkTools } from './ai-sdk-tools.js';

afterEach(closeWireServers);

function fixture(name: string, extra: Partial<WireResponse> = {}): WireResponse {
  return {
    status: 200,
    headers: SSE_HEADERS,
    body: readSseFixture(new URL(`./__fixtures__/${name}`, import.meta.url)),
    ...extra,
  };
}

function weatherTools() {
  const executed: string[] = [];
  const weather = defineTool({
    name: 'get_weather',
    description: 'Current weather for a city',
    // Chat Completions models send `null` for an absent optional field.
    input: z.object({ city: z.string(), unit: z.enum(['celsius', 'fahrenheit']).nullish() }),
    execute: async ({ city }) => {
      executed.push(`get_weather:${city}`);
      return `${city}: 18°C, sunny`;
    },
  });
  const time = defineTool({
    name: 'get_time',
    description: 'Local time in a time zone',
    input: z.object({ timezone: z.string() }),
    execute: async ({ timezone }) => {
      executed.push(`get_time:${timezone}`);
      return `${timezone}: 14:05`;
    },
  });
  return { tools: [weather, time], executed };
}

function compatibleModel(url: string) {
  return createOpenAICompatible({
    name: 'local',
    baseURL: `${url}/v1`,
    apiKey: 'sk-test',
    includeUsage: true,
  }).chatModel('gpt-4o');
}

type Body = { messages: Array<Record<string, unknown>> };

describe('our loop over @ai-sdk/openai-compatible', () => {
  it('streams the calls, runs our tools, sends their results back and ends with the answer', async () => {
    const server = await startWireServer([
      fixture('chat-tool-calls.sse'),
      fixture('chat-final-text.sse'),
    ]);
    const { tools, executed } = weatherTools();
    const agent = new Agent({
      provider: fromAiSdkModel(compatibleModel(server.url)),
      model: 'gpt-4o',
      tools,
    });
    const run = agent.run('Weather and time in Paris?');
    const deltas: string[] = [];
    for await (const event of run) {
      if (event.type === 'message-update' && event.event.type === 'tool-call-delta')
        deltas.push(event.event.delta);
    }
    const result = await run.result;
    expect(result.stopReason).toBe('completed');
    expect(executed.sort()).toEqual(['get_time:Europe/Paris', 'get_weather:Paris']);
    // The arguments arrived as the server streamed them.
    expect(deltas.join('')).toBe('{"city":"Paris","unit":null}{"timezone":"Europe/Paris"}');
    const last = result.messages.at(-1);
    expect(last?.role === 'assistant' && messageText(last)).toBe(
      'In Paris it is 18°C and sunny; the local time is 14:05.',
    );
    expect(last).toMatchObject({ provider: 'local.chat', stopReason: 'stop' });
    const second = server.requests[1]?.json as Body;
    expect(second.messages.filter((message) => message.role === 'tool')).toEqual([
      { role: 'tool', tool_call_id: 'call_Wx81bqPz4KdTe0aN', content: 'Paris: 18°C, sunny' },
      { role: 'tool', tool_call_id: 'call_Tm93cvLa0QsEe2bR', content: 'Europe/Paris: 14:05' },
    ]);
    expect((server.requests[0]?.json as { tools?: unknown[] } | undefined)?.tools).toHaveLength(2);
  });

  it('a 429 before any token is retried; a 401 ends the run with the error, never a throw', async () => {
    const server = await startWireServer([
      {
        status: 429,
        headers: { ...JSON_HEADERS, 'retry-after-ms': '1' },
        body: JSON.stringify({ error: { message: 'Rate limit reached', type: 'rate_limit' } }),
      },
      fixture('chat-final-text.sse'),
    ]);
    const events: StreamEvent[] = [];
    for await (const event of fromAiSdkModel(compatibleModel(server.url)).stream({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'hi', timestamp: 0 }],
    }))
      events.push(event);
    expect(server.requests).toHaveLength(2);
    expect(events.at(-1)?.type).toBe('done');

    const refusing = await startWireServer([
      {
        status: 401,
        headers: JSON_HEADERS,
        body: JSON.stringify({ error: { message: 'Incorrect API key provided' } }),
      },
    ]);
    const agent = new Agent({
      provider: fromAiSdkModel(compatibleModel(refusing.url)),
      model: 'gpt-4o',
    });
    const result = await agent.run('hi').result;
    expect(refusing.requests).toHaveLength(1);
    expect(result.stopReason).toBe('error');
    expect(result.error).toContain('Incorrect API key provided');
    expect(result.providerError?.statusCode).toBe(401);
  });

  it('aborting mid-stream closes the connection and ends with an aborted error event', async () => {
    const server = await startWireServer([fixture('chat-tool-calls.sse', { hangAfterChunks: 3 })]);
    const controller = new AbortController();
    const events: StreamEvent[] = [];
    const closed = server.nextConnectionClose();
    for await (const event of fromAiSdkModel(compatibleModel(server.url)).stream(
      { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi', timestamp: 0 }] },
      { signal: controller.signal },
    )) {
      events.push(event);
      if (event.type === 'text-delta') controller.abort();
    }
    await closed;
    expect(events.at(-1)).toMatchObject({ type: 'error', reason: 'aborted' });
  });
});

describe('our loop over @ai-sdk/anthropic', () => {
  it('replays the thinking block with its signature and the tool results on the next turn', async () => {
    const server = await startWireServer([
      fixture('anthropic-thinking-tools.sse'),
      fixture('anthropic-final-text.sse'),
    ]);
    const { tools, executed } = weatherTools();
    const model = createAnthropic({ baseURL: `${server.url}/v1`, apiKey: 'sk-ant-test' })(
      'claude-haiku-4-5',
    );
    const agent = new Agent({ provider: fromAiSdkModel(model), model: 'claude-haiku-4-5', tools });
    const result = await agent.run('Weather in Paris and Oslo?').result;
    expect(result.stopReason).toBe('completed');
    expect(executed.sort()).toEqual(['get_weather:Oslo', 'get_weather:Paris']);
    const last = result.messages.at(-1);
    expect(last?.role === 'assistant' && messageText(last)).toBe(
      'Paris is 18°C and sunny; Oslo is 4°C and raining.',
    );
    const second = server.requests[1]?.json as {
      messages: Array<{ role: string; content: Array<Record<string, unknown>> }>;
    };
    const assistant = second.messages.find((message) => message.role === 'assistant');
    expect(assistant?.content[0]).toEqual({
      type: 'thinking',
      thinking: 'The user wants weather for two cities. I will call get_weather twice.',
      signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds',
    });
    const results = second.messages
      .flatMap((message) => message.content)
      .filter((block) => block.type === 'tool_result');
    expect(results).toMatchObject([
      { tool_use_id: 'toolu_01Paris', content: 'Paris: 18°C, sunny' },
      { tool_use_id: 'toolu_02Oslo', content: 'Oslo: 18°C, sunny' },
    ]);
  });
});

describe('streamText over our tools, with @ai-sdk/openai-compatible', () => {
  it('the AI SDK loop runs our tools and sends their results on the wire', async () => {
    const server = await startWireServer([
      fixture('chat-tool-calls.sse'),
      fixture('chat-final-text.sse'),
    ]);
    const { tools, executed } = weatherTools();
    const result = streamText({
      model: compatibleModel(server.url),
      tools: toAiSdkTools(tools),
      prompt: 'Weather and time in Paris?',
      stopWhen: isStepCount(3),
    });
    expect(await result.text).toBe('In Paris it is 18°C and sunny; the local time is 14:05.');
    expect(executed.sort()).toEqual(['get_time:Europe/Paris', 'get_weather:Paris']);
    const second = server.requests[1]?.json as Body;
    expect(second.messages.filter((message) => message.role === 'tool')).toMatchObject([
      { tool_call_id: 'call_Wx81bqPz4KdTe0aN', content: 'Paris: 18°C, sunny' },
      { tool_call_id: 'call_Tm93cvLa0QsEe2bR', content: 'Europe/Paris: 14:05' },
    ]);
  });
});
