import {
  type AssistantMessage,
  ProviderError,
  type ProviderRequest,
  type StreamEvent,
  userMessage,
} from '@agent/core';
import { APICallError, type LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { convertArrayToReadableStream, MockLanguageModelV4 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { fromAiSdkModel } from './ai-sdk-provider.js';
import { mockUsage, streamParts } from './test-helpers.js';

const request: ProviderRequest = { model: 'mock-model', messages: [userMessage('hi')] };

async function collect(stream: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

function modelOf(...attempts: Array<LanguageModelV4StreamPart[] | (() => never)>) {
  let index = 0;
  return new MockLanguageModelV4({
    provider: 'mock.chat',
    modelId: 'mock-model',
    doStream: async () => {
      const attempt = attempts[Math.min(index++, attempts.length - 1)];
      if (attempt === undefined) throw new Error('no attempt scripted');
      if (typeof attempt === 'function') attempt();
      return { stream: convertArrayToReadableStream(attempt as LanguageModelV4StreamPart[]) };
    },
  });
}

const finish = (unified: 'stop' | 'tool-calls' | 'length' | 'content-filter' | 'other') =>
  ({ type: 'finish', usage: mockUsage, finishReason: { unified, raw: unified } }) as const;

describe('fromAiSdkModel: stream parts as our events', () => {
  it('text, reasoning with its signature, a streamed call and a whole call, usage, done', async () => {
    const model = modelOf([
      { type: 'stream-start', warnings: [] },
      { type: 'response-metadata', modelId: 'mock-model-2026' },
      { type: 'reasoning-start', id: 'r' },
      { type: 'reasoning-delta', id: 'r', delta: 'Think.' },
      {
        type: 'reasoning-delta',
        id: 'r',
        delta: '',
        providerMetadata: { anthropic: { signature: 'sig' } },
      },
      { type: 'reasoning-end', id: 'r' },
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: 'Hi ' },
      { type: 'text-delta', id: 't', delta: 'there' },
      { type: 'text-end', id: 't' },
      { type: 'tool-input-start', id: 'c1', toolName: 'read' },
      { type: 'tool-input-delta', id: 'c1', delta: '{"path":' },
      { type: 'tool-input-delta', id: 'c1', delta: '"a"}' },
      { type: 'tool-input-end', id: 'c1' },
      { type: 'tool-call', toolCallId: 'c1', toolName: 'read', input: '{"path":"a"}' },
      {
        type: 'tool-call',
        toolCallId: 'c2',
        toolName: 'list',
        input: '{}',
        providerMetadata: { google: { thoughtSignature: 'x' } },
      },
      finish('tool-calls'),
    ]);
    const events = await collect(fromAiSdkModel(model).stream(request));
    const signature = 'ai-sdk:{"anthropic":{"signature":"sig"}}';
    expect(events.slice(0, -1)).toEqual([
      { type: 'start', model: 'mock-model', provider: 'mock.chat' },
      { type: 'thinking-start', index: 0 },
      { type: 'thinking-delta', index: 0, delta: 'Think.' },
      { type: 'thinking-end', index: 0, thinking: 'Think.', signature },
      { type: 'text-start', index: 1 },
      { type: 'text-delta', index: 1, delta: 'Hi ' },
      { type: 'text-delta', index: 1, delta: 'there' },
      { type: 'text-end', index: 1, text: 'Hi there' },
      { type: 'tool-call-start', index: 2, id: 'c1', name: 'read' },
      { type: 'tool-call-delta', index: 2, delta: '{"path":' },
      { type: 'tool-call-delta', index: 2, delta: '"a"}' },
      {
        type: 'tool-call-end',
        index: 2,
        toolCall: { type: 'toolCall', id: 'c1', name: 'read', arguments: '{"path":"a"}' },
      },
      { type: 'tool-call-start', index: 3, id: 'c2', name: 'list' },
      { type: 'tool-call-delta', index: 3, delta: '{}' },
      {
        type: 'tool-call-end',
        index: 3,
        toolCall: {
          type: 'toolCall',
          id: 'c2',
          name: 'list',
          arguments: '{}',
          providerMetadata: { google: { thoughtSignature: 'x' } },
        },
      },
      {
        type: 'usage',
        usage: { input: 10, output: 5, cacheRead: 2, cacheWrite: 0, totalTokens: 17 },
      },
    ]);
    const done = events.at(-1);
    expect(done?.type).toBe('done');
    const message = (done as { message: AssistantMessage }).message;
    expect(message).toMatchObject({
      role: 'assistant',
      provider: 'mock.chat',
      model: 'mock-model-2026',
      stopReason: 'toolUse',
      content: [
        { type: 'thinking', thinking: 'Think.', signature },
        { type: 'text', text: 'Hi there' },
        { type: 'toolCall', id: 'c1' },
        { type: 'toolCall', id: 'c2' },
      ],
    });
  });

  it.each([
    ['stop', 'stop'],
    ['length', 'length'],
    ['other', 'stop'],
  ] as const)('finish reason %s ends as %s', async (unified, stopReason) => {
    const model = modelOf([{ type: 'text-delta', id: 't', delta: 'x' }, finish(unified)]);
    const events = await collect(fromAiSdkModel(model).stream(request));
    expect(events.at(-1)).toMatchObject({ type: 'done', message: { stopReason } });
  });

  it('a call the provider ran itself is not ours to run', async () => {
    const model = modelOf([
      { type: 'tool-input-start', id: 'ws', toolName: 'web_search', providerExecuted: true },
      { type: 'tool-input-delta', id: 'ws', delta: '{}' },
      {
        type: 'tool-call',
        toolCallId: 'ws',
        toolName: 'web_search',
        input: '{}',
        providerExecuted: true,
      },
      { type: 'tool-result', toolCallId: 'ws', toolName: 'web_search', result: { ok: true } },
      { type: 'text-delta', id: 't', delta: 'Found it.' },
      finish('stop'),
    ]);
    const events = await collect(fromAiSdkModel(model).stream(request));
    expect(events.map((event) => event.type)).toEqual([
      'start',
      'text-start',
      'text-delta',
      'usage',
      'done',
    ]);
  });

  it('passes warnings to onWarning', async () => {
    const warnings: unknown[] = [];
    const model = modelOf([
      { type: 'stream-start', warnings: [{ type: 'unsupported', feature: 'temperature' }] },
      finish('stop'),
    ]);
    await collect(
      fromAiSdkModel(model, { onWarning: (warning) => warnings.push(warning) }).stream(request),
    );
    expect(warnings).toEqual([{ type: 'unsupported', feature: 'temperature' }]);
  });
});

describe('fromAiSdkModel: failures are the error event, never a throw', () => {
  const apiError = (statusCode: number, headers: Record<string, string> = {}) =>
    new APICallError({
      message: `HTTP ${statusCode}`,
      url: 'http://127.0.0.1/v1/chat',
      requestBodyValues: {},
      statusCode,
      responseHeaders: headers,
      responseBody: '{"error":"x"}',
      isRetryable: statusCode === 429 || statusCode >= 500,
    });

  it.each([401, 400, 404])(
    'HTTP %i thrown by doStream: one attempt, an error event with the status',
    async (status) => {
      const model = modelOf(() => {
        throw apiError(status);
      });
      const events = await collect(fromAiSdkModel(model).stream(request));
      expect(model.doStreamCalls).toHaveLength(1);
      const last = events.at(-1);
      expect(last).toMatchObject({
        type: 'error',
        reason: 'error',
        message: { stopReason: 'error' },
      });
      const error = (last as { error: ProviderError }).error;
      expect(ProviderError.isInstance(error)).toBe(true);
      expect(error.statusCode).toBe(status);
      expect(error.responseBody).toBe('{"error":"x"}');
    },
  );

  it('a 429 before any token is retried (honouring retry-after-ms), then the answer streams', async () => {
    const delays: number[] = [];
    const model = modelOf(() => {
      throw apiError(429, { 'retry-after-ms': '5' });
    }, [{ type: 'text-delta', id: 't', delta: 'ok' }, finish('stop')]);
    const events = await collect(
      fromAiSdkModel(model, { retry: { onRetry: ({ delayMs }) => delays.push(delayMs) } }).stream(
        request,
      ),
    );
    expect(model.doStreamCalls).toHaveLength(2);
    expect(delays).toEqual([5]);
    expect(events.at(-1)).toMatchObject({
      type: 'done',
      message: { content: [{ type: 'text', text: 'ok' }] },
    });
  });

  it('an error part before any token is retried like a thrown one', async () => {
    const model = modelOf(
      [
        { type: 'stream-start', warnings: [] },
        { type: 'error', error: apiError(503) },
      ],
      [{ type: 'text-delta', id: 't', delta: 'ok' }, finish('stop')],
    );
    const events = await collect(
      fromAiSdkModel(model, { retry: { initialDelayMs: 1 } }).stream(request),
    );
    expect(model.doStreamCalls).toHaveLength(2);
    expect(events.filter((event) => event.type === 'start')).toHaveLength(1);
    expect(events.at(-1)?.type).toBe('done');
  });

  it('an error part after text is not retried: the error event keeps what arrived', async () => {
    const model = modelOf([
      { type: 'text-delta', id: 't', delta: 'half' },
      { type: 'error', error: apiError(500) },
    ]);
    const events = await collect(fromAiSdkModel(model).stream(request));
    expect(model.doStreamCalls).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({
      type: 'error',
      reason: 'error',
      message: {
        stopReason: 'error',
        content: [{ type: 'text', text: 'half' }],
        errorMessage: 'HTTP 500',
      },
    });
  });

  it('a non-error value thrown is wrapped', async () => {
    const model = modelOf(() => {
      throw 'boom';
    });
    const events = await collect(fromAiSdkModel(model, { maxRetries: 0 }).stream(request));
    expect(events.at(-1)).toMatchObject({
      type: 'error',
      reason: 'error',
      error: { message: 'boom' },
    });
  });

  it.each([
    ['content-filter', "The provider's content filter stopped the response (content-filter)"],
  ] as const)('finish reason %s is an error event', async (unified, message) => {
    const model = modelOf([finish(unified)]);
    const events = await collect(fromAiSdkModel(model).stream(request));
    expect(events.at(-1)).toMatchObject({ type: 'error', reason: 'error', error: { message } });
  });

  it('a stream that ends without a finish part is an error', async () => {
    const model = modelOf([{ type: 'text-delta', id: 't', delta: 'x' }]);
    const events = await collect(fromAiSdkModel(model).stream(request));
    expect(events.at(-1)).toMatchObject({
      type: 'error',
      error: { message: 'The model stream ended without a finish part' },
    });
  });
});

describe('fromAiSdkModel: abort', () => {
  it('aborting mid-stream ends with an aborted error event, even if the model ignores its signal', async () => {
    let pull: (() => void) | undefined;
    let cancelled = false;
    const model = new MockLanguageModelV4({
      doStream: async () => ({
        stream: new ReadableStream<LanguageModelV4StreamPart>({
          start(controller) {
            controller.enqueue({ type: 'text-delta', id: 't', delta: 'partial' });
            pull?.();
          },
          cancel() {
            cancelled = true;
          },
        }),
      }),
    });
    const controller = new AbortController();
    const events: StreamEvent[] = [];
    for await (const event of fromAiSdkModel(model).stream(request, {
      signal: controller.signal,
    })) {
      events.push(event);
      if (event.type === 'text-delta') controller.abort();
    }
    expect(cancelled).toBe(true);
    expect(events.at(-1)).toMatchObject({
      type: 'error',
      reason: 'aborted',
      message: { stopReason: 'aborted', content: [{ type: 'text', text: 'partial' }] },
    });
    expect(model.doStreamCalls[0]?.abortSignal?.aborted).toBe(true);
  });

  it('a signal aborted before the call never opens the stream', async () => {
    const model = modelOf([finish('stop')]);
    const controller = new AbortController();
    controller.abort();
    const events = await collect(
      fromAiSdkModel(model).stream(request, { signal: controller.signal }),
    );
    expect(events).toMatchObject([{ type: 'error', reason: 'aborted' }]);
    expect(model.doStreamCalls).toHaveLength(0);
  });
});

describe('fromAiSdkModel: the request', () => {
  it('converts our conversation, tools and settings to the v4 call options', async () => {
    const model = modelOf(streamParts({ text: 'ok' }));
    const assistant: AssistantMessage = {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'hmm', signature: 'ai-sdk:{"anthropic":{"signature":"s1"}}' },
        {
          type: 'thinking',
          thinking: '',
          signature: 'opaque-from-another-provider',
          redacted: true,
        },
        { type: 'text', text: 'Reading.' },
        { type: 'toolCall', id: 'c1', name: 'read', arguments: '{"path":"a"}' },
        { type: 'toolCall', id: 'c2', name: 'read', arguments: '{"path":' },
      ],
      provider: 'mock.chat',
      model: 'mock-model',
      usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 },
      stopReason: 'toolUse',
      timestamp: 0,
    };
    await collect(
      fromAiSdkModel(model, { providerOptions: { mock: { flag: true } } }).stream({
        model: 'mock-model',
        systemPrompt: 'Be brief.',
        messages: [
          userMessage([
            { type: 'text', text: 'Look:' },
            { type: 'image', data: 'iVBOR', mimeType: 'image/png' },
          ]),
          assistant,
          {
            role: 'toolResult',
            toolCallId: 'c1',
            toolName: 'read',
            content: [{ type: 'text', text: 'A' }],
            isError: false,
            timestamp: 0,
          },
          {
            role: 'toolResult',
            toolCallId: 'c2',
            toolName: 'read',
            content: [{ type: 'text', text: 'bad json' }],
            isError: true,
            timestamp: 0,
          },
        ],
        tools: [
          { name: 'read', description: 'Reads', parameters: { type: 'object', properties: {} } },
        ],
        toolChoice: { type: 'tool', name: 'read' },
        thinkingLevel: 'off',
        maxOutputTokens: 100,
        temperature: 0.2,
      }),
    );
    const options = model.doStreamCalls[0];
    expect(options?.prompt).toEqual([
      { role: 'system', content: 'Be brief.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Look:' },
          { type: 'file', mediaType: 'image/png', data: { type: 'data', data: 'iVBOR' } },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'hmm', providerOptions: { anthropic: { signature: 's1' } } },
          { type: 'text', text: 'Reading.' },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'read', input: { path: 'a' } },
          { type: 'tool-call', toolCallId: 'c2', toolName: 'read', input: {} },
        ],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'c1',
            toolName: 'read',
            output: { type: 'text', value: 'A' },
          },
          {
            type: 'tool-result',
            toolCallId: 'c2',
            toolName: 'read',
            output: { type: 'error-text', value: 'bad json' },
          },
        ],
      },
    ]);
    expect(options).toMatchObject({
      tools: [
        {
          type: 'function',
          name: 'read',
          description: 'Reads',
          inputSchema: { type: 'object', properties: {} },
        },
      ],
      toolChoice: { type: 'tool', toolName: 'read' },
      reasoning: 'none',
      maxOutputTokens: 100,
      temperature: 0.2,
      providerOptions: { mock: { flag: true } },
    });
  });
});
