// A model that breaks the AI SDK's stream contract (a third-party provider, a proxy, an older
// package): each part sequence still ends in one well-formed `done` or `error` event, never a
// throw, and the message it carries is one our loop can run and send back.
import { type ProviderRequest, type StreamEvent, userMessage } from '@agent/core';
import type { LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { convertArrayToReadableStream, MockLanguageModelV4 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { fromAiSdkModel } from './ai-sdk-provider.js';
import { mockUsage } from './test-helpers.js';

const request: ProviderRequest = { model: 'mock-model', messages: [userMessage('hi')] };

/** A model streaming exactly these parts; typed loosely on purpose: they break the contract. */
function modelStreaming(parts: readonly unknown[]): MockLanguageModelV4 {
  return new MockLanguageModelV4({
    doStream: async () => ({
      stream: convertArrayToReadableStream(parts as LanguageModelV4StreamPart[]),
    }),
  });
}

async function collect(parts: readonly unknown[]): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  const provider = fromAiSdkModel(modelStreaming(parts), { maxRetries: 0 });
  for await (const event of provider.stream(request)) events.push(event);
  return events;
}

function terminal(events: StreamEvent[]) {
  const last = events.at(-1);
  if (last?.type !== 'done' && last?.type !== 'error') throw new Error('no terminal event');
  return last;
}

const toolCallsFinish = {
  type: 'finish',
  usage: mockUsage,
  finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
};
const zeroUsage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 };

describe('fromAiSdkModel: usage the model leaves out', () => {
  it.each([
    ['no usage', undefined, zeroUsage],
    ['an empty usage', {}, zeroUsage],
    [
      'only input tokens',
      { inputTokens: { total: 7 } },
      { ...zeroUsage, input: 7, totalTokens: 7 },
    ],
    [
      'only output tokens',
      { outputTokens: { total: 3 } },
      { ...zeroUsage, output: 3, totalTokens: 3 },
    ],
    ['null counts', { inputTokens: { total: null, noCache: null }, outputTokens: null }, zeroUsage],
  ])('%s: the answer still arrives, usage counted as given', async (_label, usage, expected) => {
    const events = await collect([
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: 'Hello' },
      { type: 'text-end', id: 't' },
      { type: 'finish', usage, finishReason: { unified: 'stop', raw: 'stop' } },
    ]);
    const last = terminal(events);
    expect(last.type).toBe('done');
    expect(last.message.content).toEqual([{ type: 'text', text: 'Hello' }]);
    expect(last.message.usage).toEqual(expected);
  });
});

describe('fromAiSdkModel: tool calls out of order or twice', () => {
  it('a second tool-call with an id already ended is left out: one call, one end event', async () => {
    const warnings: unknown[] = [];
    const provider = fromAiSdkModel(
      modelStreaming([
        { type: 'tool-call', toolCallId: 'a', toolName: 'read', input: '{"n":1}' },
        { type: 'tool-call', toolCallId: 'a', toolName: 'read', input: '{"n":2}' },
        toolCallsFinish,
      ]),
      { maxRetries: 0, onWarning: (warning) => warnings.push(warning) },
    );
    const events: StreamEvent[] = [];
    for await (const event of provider.stream(request)) events.push(event);
    expect(events.filter((event) => event.type === 'tool-call-end')).toHaveLength(1);
    const last = terminal(events);
    expect(last.message.content).toEqual([
      { type: 'toolCall', id: 'a', name: 'read', arguments: '{"n":1}' },
    ]);
    expect(warnings).toEqual([expect.objectContaining({ type: 'other' })]);
  });

  it('a text and a tool call sharing one id stay two blocks, the call once', async () => {
    const events = await collect([
      { type: 'text-start', id: '0' },
      { type: 'text-delta', id: '0', delta: 'Let me ' },
      { type: 'tool-input-start', id: '0', toolName: 'read' },
      { type: 'tool-input-delta', id: '0', delta: '{}' },
      { type: 'text-delta', id: '0', delta: 'look.' },
      { type: 'text-end', id: '0' },
      { type: 'tool-input-end', id: '0' },
      { type: 'tool-call', toolCallId: '0', toolName: 'read', input: '{}' },
      toolCallsFinish,
    ]);
    const last = terminal(events);
    expect(last.type).toBe('done');
    expect(last.message.content).toEqual([
      { type: 'text', text: 'Let me look.' },
      { type: 'toolCall', id: '0', name: 'read', arguments: '{}' },
    ]);
    expect(events.filter((event) => event.type === 'tool-call-start')).toHaveLength(1);
    expect(events.filter((event) => event.type === 'text-start')).toHaveLength(1);
  });

  it('reasoning and text sharing one id stay two blocks', async () => {
    const events = await collect([
      { type: 'reasoning-start', id: 'x' },
      { type: 'reasoning-delta', id: 'x', delta: 'Think.' },
      { type: 'text-delta', id: 'x', delta: 'Say.' },
      { type: 'reasoning-end', id: 'x' },
      { type: 'text-end', id: 'x' },
      { type: 'finish', usage: mockUsage, finishReason: { unified: 'stop', raw: 'stop' } },
    ]);
    expect(terminal(events).message.content).toEqual([
      { type: 'thinking', thinking: 'Think.' },
      { type: 'text', text: 'Say.' },
    ]);
  });

  it('the arguments of every call are text, even when a model hands an object', async () => {
    const events = await collect([
      { type: 'tool-call', toolCallId: 'a', toolName: 'read', input: { path: 'a' } },
      { type: 'tool-call', toolCallId: 'b', toolName: 'read', input: undefined },
      toolCallsFinish,
    ]);
    const deltas = events.filter((event) => event.type === 'tool-call-delta');
    for (const delta of deltas) expect(typeof delta.delta).toBe('string');
    expect(terminal(events).message.content).toEqual([
      { type: 'toolCall', id: 'a', name: 'read', arguments: '{"path":"a"}' },
      { type: 'toolCall', id: 'b', name: 'read', arguments: '' },
    ]);
  });

  it('a delta that is not text adds nothing', async () => {
    const events = await collect([
      { type: 'text-delta', id: 't', delta: 'a' },
      { type: 'text-delta', id: 't' },
      { type: 'text-delta', id: 't', delta: null },
      { type: 'reasoning-delta', id: 'r', delta: 5 },
      { type: 'tool-input-start', id: 'c', toolName: 'read' },
      { type: 'tool-input-delta', id: 'c', delta: undefined },
      { type: 'tool-input-delta', id: 'c', delta: '{}' },
      { type: 'finish', usage: mockUsage, finishReason: { unified: 'stop', raw: 'stop' } },
    ]);
    const last = terminal(events);
    expect(last.message.content).toEqual([
      { type: 'text', text: 'a' },
      { type: 'thinking', thinking: '' },
      { type: 'toolCall', id: 'c', name: 'read', arguments: '{}' },
    ]);
    for (const event of events) {
      if ('delta' in event) expect(typeof event.delta).toBe('string');
    }
  });
});

describe('fromAiSdkModel: a model that ignores its abort signal', () => {
  /** A model whose doStream settles only when the test says, whatever its abortSignal does. */
  function deafModel() {
    let release: (() => void) | undefined;
    let onCancel: () => void = () => {};
    const cancelled = new Promise<true>((resolve) => {
      onCancel = () => resolve(true);
    });
    const model = new MockLanguageModelV4({
      doStream: () =>
        new Promise((resolve) => {
          release = () =>
            resolve({
              stream: new ReadableStream<LanguageModelV4StreamPart>({
                cancel: () => onCancel(),
              }),
            });
        }),
    });
    return { model, release: () => release?.(), cancelled };
  }

  it('the caller’s abort ends a call whose doStream never settles: one aborted error', async () => {
    const { model, release, cancelled } = deafModel();
    const controller = new AbortController();
    const events: StreamEvent[] = [];
    const stream = fromAiSdkModel(model, { maxRetries: 0 }).stream(request, {
      signal: controller.signal,
    });
    const iterator = stream[Symbol.asyncIterator]();
    const first = iterator.next();
    controller.abort();
    for (let next = await first; next.done !== true; next = await iterator.next()) {
      events.push(next.value);
    }
    expect(events.map((event) => event.type)).toEqual(['error']);
    expect(terminal(events)).toMatchObject({ type: 'error', reason: 'aborted' });
    // The stream the model hands over late is released, not left open.
    release();
    expect(await cancelled).toBe(true);
  });

  it('the idle timeout ends a call whose doStream never settles', async () => {
    const { model } = deafModel();
    const events: StreamEvent[] = [];
    const provider = fromAiSdkModel(model, {
      maxRetries: 0,
      retry: { idleTimeoutMs: 50, initialDelayMs: 1, maxBackoffMs: 2 },
    });
    for await (const event of provider.stream(request)) events.push(event);
    expect(events.map((event) => event.type)).toEqual(['error']);
    expect(terminal(events).message.errorMessage).toContain('idle timeout');
  });
});

describe('fromAiSdkModel: a block used after its end', () => {
  it.each([
    ['text', 'text-start', 'text-delta', 'text-end'],
    ['reasoning', 'reasoning-start', 'reasoning-delta', 'reasoning-end'],
  ])(
    '%s: a delta after the end starts a new block; a second end adds nothing',
    async (_kind, start, delta, end) => {
      const events = await collect([
        { type: start, id: 'x' },
        { type: delta, id: 'x', delta: 'one' },
        { type: end, id: 'x' },
        { type: end, id: 'x' },
        { type: delta, id: 'x', delta: 'two' },
        { type: end, id: 'x' },
        { type: 'finish', usage: mockUsage, finishReason: { unified: 'stop', raw: 'stop' } },
      ]);
      // Every block's events in order: start, deltas, one end — none after it.
      const seen = new Map<number, string[]>();
      for (const event of events) {
        if (!('index' in event)) continue;
        const kinds = seen.get(event.index) ?? [];
        kinds.push(event.type.replace(/^(text|thinking)-/, ''));
        seen.set(event.index, kinds);
      }
      expect([...seen.values()]).toEqual([
        ['start', 'delta', 'end'],
        ['start', 'delta', 'end'],
      ]);
      const content = terminal(events).message.content;
      expect(
        content.map((block) =>
          'text' in block ? block.text : 'thinking' in block ? block.thinking : '',
        ),
      ).toEqual(['one', 'two']);
    },
  );
});
