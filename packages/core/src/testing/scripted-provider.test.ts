import { describe, expect, it } from 'vitest';
import { applyStreamEvent } from '../assistant-stream.js';
import { type AssistantMessage, emptyUsage } from '../messages.js';
import type { StreamEvent } from '../provider.js';
import { createScriptedProvider } from './scripted-provider.js';

async function collect(iterable: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of iterable) events.push(event);
  return events;
}

describe('createScriptedProvider', () => {
  it('streams thinking, text and raw tool-call arguments as deltas that rebuild the final message', async () => {
    const provider = createScriptedProvider(
      [
        {
          thinking: { text: 'let me think about it', signature: 'sig' },
          text: 'Here you go.',
          toolCalls: [{ name: 'read', arguments: '{"path": "a.txt"' }],
          usage: { input: 10, output: 5 },
        },
      ],
      { chunkSize: 4 },
    );
    const events = await collect(
      provider.stream({ model: 'm', messages: [{ role: 'user', content: 'hi', timestamp: 1 }] }),
    );
    expect(events[0]).toEqual({ type: 'start', model: 'm', provider: 'scripted' });
    const done = events.at(-1);
    if (done?.type !== 'done') throw new Error('expected done');
    expect(done.message.stopReason).toBe('toolUse');
    expect(done.message.usage).toMatchObject({ input: 10, output: 5, totalTokens: 15 });
    expect(done.message.content).toEqual([
      { type: 'thinking', thinking: 'let me think about it', signature: 'sig' },
      { type: 'text', text: 'Here you go.' },
      { type: 'toolCall', id: 'call_1_0', name: 'read', arguments: '{"path": "a.txt"' },
    ]);
    const rebuilt: AssistantMessage = {
      role: 'assistant',
      content: [],
      provider: 'scripted',
      model: 'm',
      usage: emptyUsage(),
      stopReason: 'stop',
      timestamp: 0,
    };
    for (const event of events) applyStreamEvent(rebuilt, event);
    expect(rebuilt.content).toEqual(done.message.content);
    expect(events.filter((e) => e.type === 'tool-call-delta').length).toBe(4);
    expect(provider.requests).toHaveLength(1);
    expect(provider.requests[0]?.messages[0]).toMatchObject({ content: 'hi' });
  });

  it('ends with an error event after the given number of deltas, and when the script runs out', async () => {
    const provider = createScriptedProvider(
      [
        {
          text: 'abcdefghijkl',
          error: { message: 'connection reset', afterDeltas: 2, isRetryable: true },
        },
      ],
      { chunkSize: 2 },
    );
    const events = await collect(provider.stream({ model: 'm', messages: [] }));
    const last = events.at(-1);
    expect(last).toMatchObject({
      type: 'error',
      reason: 'error',
      error: { message: 'connection reset', isRetryable: true },
    });
    expect(events.filter((e) => e.type === 'text-delta')).toHaveLength(2);
    if (last?.type === 'error')
      expect(last.message.content).toEqual([{ type: 'text', text: 'abcd' }]);
    const exhausted = await collect(provider.stream({ model: 'm', messages: [] }));
    expect(exhausted).toHaveLength(1);
    expect(exhausted[0]).toMatchObject({
      type: 'error',
      error: { message: 'Scripted provider has no step for turn 2 (script has 1)' },
    });
  });

  it('stops with an aborted error event when the signal fires', async () => {
    const provider = createScriptedProvider([{ text: 'x'.repeat(100), delayMs: 5 }], {
      chunkSize: 1,
    });
    const controller = new AbortController();
    const events: StreamEvent[] = [];
    for await (const event of provider.stream(
      { model: 'm', messages: [] },
      { signal: controller.signal },
    )) {
      events.push(event);
      if (event.type === 'text-delta') controller.abort();
    }
    expect(events.at(-1)).toMatchObject({ type: 'error', reason: 'aborted' });
    expect(events.filter((e) => e.type === 'text-delta')).toHaveLength(1);
  });

  it('lets a step function answer from the request', async () => {
    const provider = createScriptedProvider([
      (request) => ({ text: `you said ${request.messages.length} thing(s)` }),
    ]);
    const events = await collect(
      provider.stream({ model: 'm', messages: [{ role: 'user', content: 'a', timestamp: 0 }] }),
    );
    const done = events.at(-1);
    expect(done?.type === 'done' && done.message.content[0]).toEqual({
      type: 'text',
      text: 'you said 1 thing(s)',
    });
  });
});
