// Edge cases of the wire protocols and of retries, each against a real local server (~700 lines:
// both APIs' chunk builders and the one server are shared by every describe, one kind of failure each).
import {
  Agent,
  type AssistantMessage,
  defineTool,
  type ProviderRequest,
  type RetryAttempt,
  retryDelayMs,
  type StreamEvent,
} from '@agent/core';
import {
  closeWireServers,
  requestGapMs,
  SSE_HEADERS,
  sseEvents,
  startWireServer,
  terminalEvent,
  type WireServer,
} from '@agent/tooling-wire-server';
import { RateLimitError } from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { errorHeaders } from './openai-errors.js';
import { collect, errorResponse, fixtureResponse, openaiAt, weatherTools } from './test-helpers.js';

let server: WireServer | undefined;
afterEach(closeWireServers);

const request: ProviderRequest = {
  model: 'gpt-4o',
  messages: [{ role: 'user', content: 'hi', timestamp: 0 }],
};

function doneMessage(events: StreamEvent[]): AssistantMessage {
  const last = terminalEvent(events, { requireLast: true });
  if (last.type !== 'done') throw new Error(`expected done, got error: ${last.error.message}`);
  return last.message;
}

/** A get_weather tool that answers "sunny" and records each city it ran for. */
function cityRecordingWeather() {
  const executed: string[] = [];
  const weather = defineTool({
    name: 'get_weather',
    description: 'w',
    input: z.object({ city: z.string() }),
    execute: async ({ city }) => {
      executed.push(city);
      return 'sunny';
    },
  });
  return { weather, executed };
}

/** A Chat Completions chunk event. */
function chat(delta: Record<string, unknown>, finish: string | null = null, usage?: unknown) {
  return {
    data: {
      id: 'chatcmpl-edge',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'gpt-4o',
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      ...(usage === undefined ? {} : { usage }),
    },
  };
}

function chatUsage(usage: unknown) {
  return {
    data: {
      id: 'chatcmpl-edge',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'gpt-4o',
      choices: [],
      usage,
    },
  };
}

/** A Responses API event (the `type` doubles as the SSE event name). */
function responses(type: string, data: Record<string, unknown>) {
  return { event: type, data: { type, ...data } };
}

function responseObject(status: string, extra: Record<string, unknown> = {}) {
  return {
    id: 'resp_edge',
    object: 'response',
    created_at: 1,
    status,
    model: 'gpt-4o',
    output: [],
    ...extra,
  };
}

describe('retry hints', () => {
  // Backoff without a usable hint is exactly 200 ms here (random() = 1), so a hint that is
  // ignored shows as 200 ms, a hint read as "now" as 0 and one read as a date as the cap.
  // The delay chosen is asserted exactly (through onRetry); the server's clock only bounds it
  // from below, since a loaded machine can only make the gap longer.
  const retry = { initialDelayMs: 200, maxBackoffMs: 200, maxRetryAfterMs: 800, random: () => 1 };
  const cases: Array<[string, Record<string, string>, number]> = [
    ['retry-after: 0 retries at once', { 'retry-after': '0' }, 0],
    ['retry-after-ms wins over retry-after', { 'retry-after-ms': '350', 'retry-after': '30' }, 350],
    ['a huge retry-after is capped', { 'retry-after': '86400' }, 800],
    ['a negative retry-after is ignored (backoff)', { 'retry-after': '-1' }, 200],
    ['a garbage retry-after is ignored (backoff)', { 'retry-after': 'soon' }, 200],
    ['a garbage retry-after with a year in it is ignored', { 'retry-after': 'try 2031' }, 200],
    ['a garbage retry-after-ms is ignored', { 'retry-after-ms': '12abc' }, 200],
  ];
  it.each(cases)(
    '%s',
    async (_name, headers, expectedDelay) => {
      server = await startWireServer([
        errorResponse(429, 'slow down', headers),
        fixtureResponse('chat-final-text.sse'),
      ]);
      const retries: Array<{ attempt: number; delayMs: number; status: number | undefined }> = [];
      const onRetry = ({ attempt, delayMs, error }: RetryAttempt) =>
        retries.push({ attempt, delayMs, status: error.statusCode });
      const events = await collect(
        openaiAt(server.url, { api: 'chat', retry: { ...retry, onRetry } }).stream(request),
      );
      doneMessage(events);
      expect(server.requests).toHaveLength(2);
      expect(retries).toEqual([{ attempt: 1, delayMs: expectedDelay, status: 429 }]);
      expect(requestGapMs(server)).toBeGreaterThanOrEqual(expectedDelay - 20);
    },
    10_000,
  );

  it('an HTTP-date retry-after waits until that date', async () => {
    const date = 'Wed, 21 Oct 2015 07:28:01 GMT';
    // The clock says 300 ms before that date.
    const now = () => Date.parse(date) - 300;
    server = await startWireServer([
      errorResponse(503, 'busy', { 'retry-after': date }),
      fixtureResponse('chat-final-text.sse'),
    ]);
    const delays: number[] = [];
    const onRetry = ({ delayMs }: RetryAttempt) => delays.push(delayMs);
    const events = await collect(
      openaiAt(server.url, { api: 'chat', retry: { ...retry, now, onRetry } }).stream(request),
    );
    doneMessage(events);
    expect(delays).toEqual([300]);
    expect(requestGapMs(server)).toBeGreaterThanOrEqual(280);
  });

  it('by default a server-requested delay is capped at 60 s; malformed hints fall back to backoff', () => {
    const rateLimited = (headers: Record<string, string>) =>
      new RateLimitError(429, undefined, 'slow down', new Headers(headers));
    const noJitter = { random: () => 0 };
    expect(retryDelayMs(0, errorHeaders(rateLimited({ 'retry-after': '86400' })))).toBe(60_000);
    expect(
      retryDelayMs(
        0,
        errorHeaders(rateLimited({ 'retry-after': 'Wed, 21 Oct 2015 07:28:00 GMT' })),
        noJitter,
      ),
    ).toBe(0);
    expect(
      retryDelayMs(
        0,
        errorHeaders(rateLimited({ 'retry-after': '-1', 'retry-after-ms': '1e3' })),
        noJitter,
      ),
    ).toBe(250);
    expect(errorHeaders(new Error('not HTTP'))).toBeUndefined();
  });

  it('529 is retried like 503', async () => {
    server = await startWireServer([
      errorResponse(529, 'Overloaded'),
      fixtureResponse('chat-final-text.sse'),
    ]);
    doneMessage(await collect(openaiAt(server.url, { api: 'chat' }).stream(request)));
    expect(server.requests).toHaveLength(2);
  });
});

describe('abort', () => {
  it('an already-aborted signal sends no request', async () => {
    server = await startWireServer([fixtureResponse('chat-final-text.sse')]);
    const controller = new AbortController();
    controller.abort();
    const event = terminalEvent(
      await collect(
        openaiAt(server.url, { api: 'chat' }).stream(request, { signal: controller.signal }),
      ),
      { requireLast: true },
    );
    expect(event.type === 'error' && event.reason).toBe('aborted');
    expect(server.requests).toHaveLength(0);
  });

  it('abort while the request is in flight (no byte yet) ends aborted and closes the connection', async () => {
    server = await startWireServer([{ headers: SSE_HEADERS, body: [], hangAfterChunks: 0 }]);
    const controller = new AbortController();
    const closed = server.nextConnectionClose();
    const pending = collect(
      openaiAt(server.url, { api: 'responses' }).stream(request, { signal: controller.signal }),
    );
    while (server.requests.length === 0) await new Promise((resolve) => setImmediate(resolve));
    const abortedAt = performance.now();
    controller.abort();
    const event = terminalEvent(await pending, { requireLast: true });
    expect(performance.now() - abortedAt).toBeLessThan(2500);
    expect(event.type === 'error' && event.reason).toBe('aborted');
    await closed;
    expect(server.requests).toHaveLength(1);
  });

  it('a consumer that stops early cancels the request', async () => {
    const chunks = fixtureResponse('chat-final-text.sse').body as string[];
    server = await startWireServer([{ headers: SSE_HEADERS, body: chunks, hangAfterChunks: 3 }]);
    const closed = server.nextConnectionClose();
    for await (const event of openaiAt(server.url, { api: 'chat' }).stream(request)) {
      if (event.type === 'text-delta') break;
    }
    await closed;
    expect(server.closedConnections).toBeGreaterThanOrEqual(1);
  });
});

describe('empty and premature streams', () => {
  it('a 200 whose stream is empty is retried like a reset', async () => {
    server = await startWireServer([
      { headers: SSE_HEADERS, body: [] },
      fixtureResponse('chat-final-text.sse'),
    ]);
    const message = doneMessage(
      await collect(openaiAt(server.url, { api: 'chat' }).stream(request)),
    );
    expect(message.content).toEqual([
      { type: 'text', text: 'In Paris it is 18°C and sunny; the local time is 14:05.' },
    ]);
    expect(server.requests).toHaveLength(2);
  });

  it('a Responses 200 with only [DONE], every time, ends in one retryable error', async () => {
    server = await startWireServer([{ headers: SSE_HEADERS, body: ['data: [DONE]\n\n'] }]);
    const event = terminalEvent(
      await collect(openaiAt(server.url, { api: 'responses', maxRetries: 1 }).stream(request)),
      { requireLast: true },
    );
    expect(event.type === 'error' && event.error.message).toMatch(/ended before/);
    expect(event.type === 'error' && event.error.provider).toBe('openai');
    expect(server.requests).toHaveLength(2);
  });

  it('a retryable response.failed before any content is retried', async () => {
    server = await startWireServer([
      {
        headers: SSE_HEADERS,
        body: sseEvents([
          responses('response.created', { response: responseObject('in_progress') }),
          responses('response.failed', {
            response: responseObject('failed', {
              error: { code: 'server_error', message: 'The server had an error' },
            }),
          }),
        ]),
      },
      fixtureResponse('responses-final-text.sse'),
    ]);
    const message = doneMessage(
      await collect(openaiAt(server.url, { api: 'responses' }).stream(request)),
    );
    expect(message.stopReason).toBe('stop');
    expect(server.requests).toHaveLength(2);
  });

  it('a Responses stream cut mid tool call is an error and the call never runs', async () => {
    const chunks = fixtureResponse('responses-tool-calls.sse').body as string[];
    // Everything up to the second argument delta of get_weather, then the socket is destroyed.
    const cut = chunks.findIndex((chunk) => chunk.includes('"delta":"ty'));
    expect(cut).toBeGreaterThan(0);
    server = await startWireServer([
      {
        headers: SSE_HEADERS,
        body: [...chunks.slice(0, cut + 1), ': ping\n\n', 'x'],
        // The delay lets each event reach the client before the socket is destroyed.
        chunkDelayMs: 2,
        cutAfterChunks: cut + 2,
      },
    ]);
    const { weather, executed } = cityRecordingWeather();
    const result = await new Agent({
      provider: openaiAt(server.url, { api: 'responses' }),
      model: 'o4-mini',
      tools: [weather],
    }).run('Weather?').result;
    expect(result.stopReason).toBe('error');
    expect(result.error).toMatch(/connection lost mid-stream/);
    expect(executed).toEqual([]);
    expect(server.requests).toHaveLength(1); // content had arrived: no retry
  });
});

describe('Chat Completions tool calls', () => {
  it('a stream cut after one complete call (valid JSON) keeps and runs neither call', async () => {
    const chunks = fixtureResponse('chat-tool-calls.sse').body as string[];
    // Up to get_time's start: get_weather's arguments are complete JSON by then.
    const cut = chunks.findIndex((chunk) => chunk.includes('"name":"get_time"'));
    expect(cut).toBeGreaterThan(0);
    server = await startWireServer([
      {
        headers: SSE_HEADERS,
        body: [...chunks.slice(0, cut + 1), ': ping\n\n', 'x'],
        chunkDelayMs: 2,
        cutAfterChunks: cut + 2,
      },
    ]);
    const { tools, executed } = weatherTools();
    const result = await new Agent({
      provider: openaiAt(server.url, { api: 'chat' }),
      model: 'gpt-4o',
      tools,
    }).run('Weather?').result;
    expect(result.stopReason).toBe('error');
    const first = result.messages[1] as AssistantMessage;
    // No call of a cut answer ended (Chat Completions ends them at finish_reason): none is kept,
    // none runs, and nothing half-written goes back next turn (as on every provider).
    expect(first.content.some((block) => block.type === 'toolCall')).toBe(false);
    expect(executed).toEqual([]);
    expect(result.messages.filter((message) => message.role === 'toolResult')).toEqual([]);
  });

  it('parallel tool calls interleaved by index stay apart', async () => {
    server = await startWireServer([
      {
        headers: SSE_HEADERS,
        body: sseEvents([
          chat({ role: 'assistant', content: null }),
          chat({
            tool_calls: [
              {
                index: 0,
                id: 'call_a',
                type: 'function',
                function: { name: 'get_time', arguments: '' },
              },
            ],
          }),
          chat({
            tool_calls: [
              {
                index: 1,
                id: 'call_b',
                type: 'function',
                function: { name: 'get_time', arguments: '{"time' },
              },
            ],
          }),
          chat({ tool_calls: [{ index: 0, function: { arguments: '{"timezone":' } }] }),
          chat({ tool_calls: [{ index: 1, function: { arguments: 'zone":"UTC"}' } }] }),
          chat({ tool_calls: [{ index: 0, function: { arguments: '"Europe/Paris"}' } }] }),
          chat({}, 'tool_calls'),
          { data: '[DONE]' },
        ]),
      },
    ]);
    const message = doneMessage(
      await collect(openaiAt(server.url, { api: 'chat' }).stream(request)),
    );
    expect(message.stopReason).toBe('toolUse');
    expect(message.content).toEqual([
      {
        type: 'toolCall',
        id: 'call_a',
        name: 'get_time',
        arguments: '{"timezone":"Europe/Paris"}',
      },
      { type: 'toolCall', id: 'call_b', name: 'get_time', arguments: '{"timezone":"UTC"}' },
    ]);
  });

  it('argument deltas for an index that was never started (no name) are a clear error', async () => {
    server = await startWireServer([
      {
        headers: SSE_HEADERS,
        body: sseEvents([
          chat({ role: 'assistant', content: 'Checking.' }),
          chat({ tool_calls: [{ index: 3, function: { arguments: '{"timezone":"UTC"}' } }] }),
          chat({}, 'tool_calls'),
          { data: '[DONE]' },
        ]),
      },
    ]);
    const event = terminalEvent(
      await collect(openaiAt(server.url, { api: 'chat' }).stream(request)),
      { requireLast: true },
    );
    expect(event.type).toBe('error');
    if (event.type !== 'error') return;
    expect(event.error.message).toMatch(/Malformed Chat Completions chunk: .*no name/);
    expect(event.error.isRetryable).toBe(false);
    // What arrived is kept.
    expect(event.message.content[0]).toEqual({ type: 'text', text: 'Checking.' });
  });

  it('a length finish mid tool call reaches the loop as invalid-args and is not executed', async () => {
    server = await startWireServer([
      {
        headers: SSE_HEADERS,
        body: sseEvents([
          chat({
            role: 'assistant',
            tool_calls: [
              {
                index: 0,
                id: 'call_cut',
                type: 'function',
                function: { name: 'get_weather', arguments: '{"city":"Par' },
              },
            ],
          }),
          chat({}, 'length'),
          { data: '[DONE]' },
        ]),
      },
      {
        headers: SSE_HEADERS,
        body: sseEvents([chat({ content: 'Sorry.' }), chat({}, 'stop'), { data: '[DONE]' }]),
      },
    ]);
    const { weather, executed } = cityRecordingWeather();
    const result = await new Agent({
      provider: openaiAt(server.url, { api: 'chat' }),
      model: 'gpt-4o',
      tools: [weather],
    }).run('Weather?').result;
    expect(executed).toEqual([]);
    const first = result.messages[1] as AssistantMessage;
    expect(first.stopReason).toBe('length');
    const toolResult = result.messages[2];
    expect(toolResult?.role).toBe('toolResult');
    if (toolResult?.role !== 'toolResult') return;
    expect(toolResult.isError).toBe(true);
    expect(JSON.stringify(toolResult.content)).toMatch(/Invalid arguments.*cut off/);
  });
});

describe('Responses API edge cases', () => {
  const functionCall = (id: string | undefined, args: string) => ({
    ...(id === undefined ? {} : { id }),
    type: 'function_call',
    status: 'in_progress',
    arguments: args,
    call_id: 'call_r1',
    name: 'get_weather',
  });

  it('an incomplete response (max_output_tokens) mid function call ends the call and reaches the loop as invalid-args', async () => {
    server = await startWireServer([
      {
        headers: SSE_HEADERS,
        body: sseEvents([
          responses('response.created', { response: responseObject('in_progress') }),
          responses('response.output_item.added', {
            output_index: 0,
            item: functionCall('fc_1', ''),
          }),
          responses('response.function_call_arguments.delta', {
            item_id: 'fc_1',
            output_index: 0,
            delta: '{"city":"Par',
          }),
          responses('response.incomplete', {
            response: responseObject('incomplete', {
              incomplete_details: { reason: 'max_output_tokens' },
              usage: {
                input_tokens: 10,
                input_tokens_details: { cached_tokens: 0 },
                output_tokens: 5,
                output_tokens_details: { reasoning_tokens: 0 },
                total_tokens: 15,
              },
            }),
          }),
        ]),
      },
      fixtureResponse('responses-final-text.sse'),
    ]);
    const { weather, executed } = cityRecordingWeather();
    const seen: StreamEvent[] = [];
    const agent = new Agent({
      provider: openaiAt(server.url, { api: 'responses' }),
      model: 'gpt-4o',
      tools: [weather],
    });
    agent.subscribe((event) => {
      if (event.type === 'message-update') seen.push(event.event);
    });
    const result = await agent.run('Weather?').result;
    expect(executed).toEqual([]);
    // The call was closed with a tool-call-end, like every started call.
    expect(seen.filter((event) => event.type === 'tool-call-end')).toHaveLength(1);
    const first = result.messages[1] as AssistantMessage;
    expect(first.stopReason).toBe('length');
    const toolResult = result.messages[2];
    expect(toolResult?.role === 'toolResult' && toolResult.isError).toBe(true);
    expect(JSON.stringify(toolResult)).toMatch(/Invalid arguments.*cut off/);
  });

  it('function calls without item ids still stream and end', async () => {
    server = await startWireServer([
      {
        headers: SSE_HEADERS,
        body: sseEvents([
          responses('response.output_item.added', {
            output_index: 0,
            item: functionCall(undefined, ''),
          }),
          responses('response.function_call_arguments.delta', {
            output_index: 0,
            delta: '{"city":"Paris"}',
          }),
          responses('response.output_item.done', {
            output_index: 0,
            item: { ...functionCall(undefined, '{"city":"Paris"}'), status: 'completed' },
          }),
          responses('response.completed', { response: responseObject('completed') }),
        ]),
      },
    ]);
    const message = doneMessage(
      await collect(openaiAt(server.url, { api: 'responses' }).stream(request)),
    );
    expect(message.stopReason).toBe('toolUse');
    expect(message.content).toEqual([
      { type: 'toolCall', id: 'call_r1', name: 'get_weather', arguments: '{"city":"Paris"}' },
    ]);
  });
});

describe('usage', () => {
  it('Chat Completions: cached and cache-write tokens are split out, reasoning tokens count as output', async () => {
    server = await startWireServer([
      {
        headers: SSE_HEADERS,
        body: sseEvents([
          chat({ role: 'assistant', content: 'ok' }),
          chat({}, 'stop'),
          chatUsage({
            prompt_tokens: 1000,
            completion_tokens: 300,
            total_tokens: 1300,
            prompt_tokens_details: { cached_tokens: 600, cache_write_tokens: 100 },
            completion_tokens_details: { reasoning_tokens: 250 },
          }),
          { data: '[DONE]' },
        ]),
      },
    ]);
    const message = doneMessage(
      await collect(openaiAt(server.url, { api: 'chat' }).stream({ ...request, model: 'gpt-4o' })),
    );
    expect(message.usage).toMatchObject({
      input: 300,
      cacheRead: 600,
      cacheWrite: 100,
      output: 300,
      totalTokens: 1300,
    });
    expect(message.usage.cost?.total).toBeCloseTo(
      (300 * 2.5 + 600 * 1.25 + 100 * 2.5 + 300 * 10) / 1e6,
      12,
    );
  });

  it('Responses API: cached, cache-write and reasoning tokens', async () => {
    server = await startWireServer([
      {
        headers: SSE_HEADERS,
        body: sseEvents([
          responses('response.output_text.delta', {
            item_id: 'msg_1',
            output_index: 0,
            content_index: 0,
            delta: 'ok',
          }),
          responses('response.completed', {
            response: responseObject('completed', {
              usage: {
                input_tokens: 1000,
                input_tokens_details: { cached_tokens: 600, cache_write_tokens: 100 },
                output_tokens: 300,
                output_tokens_details: { reasoning_tokens: 250 },
                total_tokens: 1300,
              },
            }),
          }),
        ]),
      },
    ]);
    const message = doneMessage(
      await collect(openaiAt(server.url, { api: 'responses' }).stream(request)),
    );
    expect(message.usage).toMatchObject({
      input: 300,
      cacheRead: 600,
      cacheWrite: 100,
      output: 300,
      totalTokens: 1300,
    });
  });
});

describe('images in tool results', () => {
  const withImage: ProviderRequest = {
    model: 'gpt-4o',
    messages: [
      { role: 'user', content: 'Screenshot?', timestamp: 0 },
      {
        role: 'assistant',
        provider: 'openai',
        model: 'gpt-4o',
        stopReason: 'toolUse',
        timestamp: 0,
        usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 },
        content: [
          { type: 'toolCall', id: 'call_1', name: 'screenshot', arguments: '{}' },
          { type: 'toolCall', id: 'call_2', name: 'screenshot', arguments: '{}' },
        ],
      },
      {
        role: 'toolResult',
        toolCallId: 'call_1',
        toolName: 'screenshot',
        isError: false,
        timestamp: 0,
        content: [{ type: 'image', data: 'AAAA', mimeType: 'image/png' }],
      },
      {
        role: 'toolResult',
        toolCallId: 'call_2',
        toolName: 'screenshot',
        isError: false,
        timestamp: 0,
        content: [
          { type: 'text', text: 'second' },
          { type: 'image', data: 'BBBB', mimeType: 'image/jpeg' },
        ],
      },
    ],
  };

  it('Chat Completions: tool messages carry text only; the images follow in one user message, labelled by call', async () => {
    server = await startWireServer([fixtureResponse('chat-final-text.sse')]);
    doneMessage(await collect(openaiAt(server.url, { api: 'chat' }).stream(withImage)));
    const messages =
      (server.requests[0]?.json as { messages: unknown[] } | undefined)?.messages ?? [];
    expect(messages.slice(2)).toEqual([
      { role: 'tool', tool_call_id: 'call_1', content: '(see the attached image)' },
      { role: 'tool', tool_call_id: 'call_2', content: 'second' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Image from the result of tool call call_1 (screenshot):' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
          { type: 'text', text: 'Image from the result of tool call call_2 (screenshot):' },
          { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,BBBB' } },
        ],
      },
    ]);
  });

  it('Responses API: images go inside function_call_output', async () => {
    server = await startWireServer([fixtureResponse('responses-final-text.sse')]);
    doneMessage(await collect(openaiAt(server.url, { api: 'responses' }).stream(withImage)));
    const input = (server.requests[0]?.json as { input: unknown[] } | undefined)?.input ?? [];
    expect(input.slice(3)).toEqual([
      {
        type: 'function_call_output',
        call_id: 'call_1',
        output: [{ type: 'input_image', detail: 'auto', image_url: 'data:image/png;base64,AAAA' }],
      },
      {
        type: 'function_call_output',
        call_id: 'call_2',
        output: [
          { type: 'input_text', text: 'second' },
          { type: 'input_image', detail: 'auto', image_url: 'data:image/jpeg;base64,BBBB' },
        ],
      },
    ]);
  });
});
