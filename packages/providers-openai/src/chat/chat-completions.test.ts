import { Agent, type AssistantMessage, messageText } from '@agent/core';
import {
  closeWireServers,
  SSE_HEADERS,
  startWireServer,
  type WireServer,
} from '@agent/tooling-wire-server';
import { afterEach, describe, expect, it } from 'vitest';
import { createOpenAIProvider } from '../openai-provider.js';
import { collect, fixtureResponse, openaiAt, weatherTools } from '../test-helpers.js';

let server: WireServer | undefined;
afterEach(closeWireServers);

type ChatBody = {
  model: string;
  stream: boolean;
  stream_options?: unknown;
  messages: Array<Record<string, unknown>>;
  tools?: Array<{
    type: string;
    function: { name: string; strict?: boolean; parameters: unknown };
  }>;
  max_tokens?: number;
  max_completion_tokens?: number;
  reasoning_effort?: string;
};

describe('Chat Completions', () => {
  it('round-trips a two-turn parallel tool-use conversation through the agent loop', async () => {
    server = await startWireServer([
      fixtureResponse('chat-tool-calls.sse'),
      fixtureResponse('chat-final-text.sse'),
    ]);
    const { tools, executed } = weatherTools();
    const agent = new Agent({
      provider: openaiAt(server.url, { api: 'chat' }),
      model: 'gpt-4o',
      systemPrompt: 'You are a helpful assistant.',
      tools,
      maxOutputTokens: 500,
    });
    const run = agent.run('Weather and time in Paris?');
    const deltas: string[] = [];
    for await (const event of run) {
      if (event.type === 'message-update' && event.event.type === 'tool-call-delta')
        deltas.push(event.event.delta);
    }
    const result = await run.result;

    expect(result.stopReason).toBe('completed');
    expect(result.turns).toBe(2);
    expect(deltas.join('')).toBe('{"city":"Paris","unit":null}{"timezone":"Europe/Paris"}');
    // The absent optional `unit` came back as null (strict mode) and was removed before validation.
    expect(executed).toEqual(['get_time:Europe/Paris', 'get_weather:Paris:default']);
    expect(result.finalMessage && messageText(result.finalMessage)).toBe(
      'In Paris it is 18°C and sunny; the local time is 14:05.',
    );

    const first = result.messages[1] as AssistantMessage;
    expect(first.stopReason).toBe('toolUse');
    expect(first.content.map((block) => block.type)).toEqual(['text', 'toolCall', 'toolCall']);
    expect(first.content[1]).toMatchObject({
      id: 'call_Wx81bqPz4KdTe0aN',
      name: 'get_weather',
      arguments: '{"city":"Paris"}',
      providerMetadata: { openai: { rawArguments: '{"city":"Paris","unit":null}' } },
    });
    expect(first.usage).toMatchObject({ input: 54, cacheRead: 128, output: 61, totalTokens: 243 });
    expect(first.usage.cost?.total).toBeCloseTo((54 * 2.5 + 128 * 1.25 + 61 * 10) / 1e6, 12);

    const [turn1, turn2] = server.requests.map((request) => request.json) as ChatBody[];
    expect(server.requests[0]?.url).toBe('/v1/chat/completions');
    expect(server.requests[0]?.headers.authorization).toBe('Bearer sk-test');
    expect(turn1).toMatchObject({
      model: 'gpt-4o',
      stream: true,
      stream_options: { include_usage: true },
      max_completion_tokens: 500,
    });
    expect(turn1?.tools?.map((tool) => [tool.function.name, tool.function.strict])).toEqual([
      ['get_weather', true],
      ['get_time', true],
    ]);
    expect(turn2?.messages).toEqual([
      { role: 'system', content: 'You are a helpful assistant.' },
      { role: 'user', content: 'Weather and time in Paris?' },
      {
        role: 'assistant',
        content: 'Let me check the weather and the time.',
        tool_calls: [
          {
            id: 'call_Wx81bqPz4KdTe0aN',
            type: 'function',
            // The model's own text goes back verbatim.
            function: { name: 'get_weather', arguments: '{"city":"Paris","unit":null}' },
          },
          {
            id: 'call_Tm93cvLa0QsEe2bR',
            type: 'function',
            function: { name: 'get_time', arguments: '{"timezone":"Europe/Paris"}' },
          },
        ],
      },
      // Results in call order although get_time finished first.
      { role: 'tool', tool_call_id: 'call_Wx81bqPz4KdTe0aN', content: 'Paris: 18°C, sunny' },
      { role: 'tool', tool_call_id: 'call_Tm93cvLa0QsEe2bR', content: 'Europe/Paris: 14:05' },
    ]);
  });

  it('emits start, deltas, one usage and exactly one terminal done, in order', async () => {
    server = await startWireServer([fixtureResponse('chat-final-text.sse')]);
    const events = await collect(
      openaiAt(server.url, { api: 'chat' }).stream({
        model: 'gpt-4o',
        messages: [{ role: 'user', content: 'hi', timestamp: 0 }],
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
    const done = events.at(-1);
    expect(done?.type === 'done' && done.message.stopReason).toBe('stop');
  });

  it('handles an Ollama-style server: no ids, no usage, finish_reason stop, no strict/stream_options', async () => {
    server = await startWireServer([
      fixtureResponse('ollama-tool-calls.sse'),
      fixtureResponse('chat-final-text.sse'),
    ]);
    // Auto-detection sees an unknown local server; the Ollama quirks are the conservative default.
    const provider = createOpenAIProvider({
      baseURL: `${server.url}/v1`,
      clientOptions: { logLevel: 'off' },
      env: {},
    });
    expect(provider.api).toBe('chat');
    expect(provider.compat.strictTools).toBe(false);
    const { tools, executed } = weatherTools();
    const agent = new Agent({ provider, model: 'llama3.2', tools, maxOutputTokens: 100 });
    const result = await agent.run('Weather and time in Paris?').result;

    expect(result.stopReason).toBe('completed');
    expect(executed.sort()).toEqual(['get_time:Europe/Paris', 'get_weather:Paris:default']);
    const first = result.messages[1] as AssistantMessage;
    expect(first.stopReason).toBe('toolUse');
    expect(first.usage.totalTokens).toBe(0);
    const ids = first.content.flatMap((block) => (block.type === 'toolCall' ? [block.id] : []));
    expect(ids).toHaveLength(2);
    expect(new Set(ids).size).toBe(2);
    for (const id of ids) expect(id).toMatch(/^call_[0-9a-f]{24}$/);

    const body = server.requests[0]?.json as ChatBody;
    expect(body.stream_options).toBeUndefined();
    expect(body.max_tokens).toBe(100);
    expect(body.max_completion_tokens).toBeUndefined();
    expect(body.tools?.every((tool) => tool.function.strict === undefined)).toBe(true);
    // Turn 2 refers to the generated ids.
    const turn2 = server.requests[1]?.json as ChatBody;
    const toolMessages = turn2.messages.filter((message) => message.role === 'tool');
    expect(toolMessages.map((message) => message.tool_call_id)).toEqual(ids);
  });

  it('sends the reasoning effort only where the model takes one', async () => {
    server = await startWireServer([fixtureResponse('chat-final-text.sse')]);
    const provider = openaiAt(server.url, { api: 'chat' });
    const request = { messages: [{ role: 'user' as const, content: 'hi', timestamp: 0 }] };
    await collect(provider.stream({ ...request, model: 'o4-mini', thinkingLevel: 'high' }));
    await collect(provider.stream({ ...request, model: 'gpt-4o', thinkingLevel: 'high' }));
    await collect(provider.stream({ ...request, model: 'o4-mini', thinkingLevel: 'off' }));
    const efforts = server.requests.map((entry) => (entry.json as ChatBody).reasoning_effort);
    expect(efforts).toEqual(['high', undefined, undefined]);
  });

  it('reads reasoning deltas of compatible servers as thinking', async () => {
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
      `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 1, model: 'qwen3', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    server = await startWireServer([
      {
        headers: SSE_HEADERS,
        body: [
          chunk({ role: 'assistant', reasoning_content: 'Think ' }),
          chunk({ reasoning_content: 'hard.' }),
          chunk({ content: 'Answer.' }),
          chunk({}, 'stop'),
          'data: [DONE]\n\n',
        ],
      },
    ]);
    const events = await collect(
      createOpenAIProvider({ baseURL: `${server.url}/v1`, env: {} }).stream({
        model: 'qwen3',
        messages: [{ role: 'user', content: 'hi', timestamp: 0 }],
      }),
    );
    const done = events.at(-1);
    expect(done?.type).toBe('done');
    if (done?.type !== 'done') return;
    expect(done.message.content).toEqual([
      { type: 'thinking', thinking: 'Think hard.' },
      { type: 'text', text: 'Answer.' },
    ]);
    expect(done.message.provider).toBe('openai-compatible');
  });
});
