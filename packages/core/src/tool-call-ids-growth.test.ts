// The ids a conversation holds are read once as it grows, not again for every model call (and for
// every assistant message of a session being loaded): that made a long session quadratic.
import { describe, expect, it } from 'vitest';
import type { AssistantMessage, Message, ToolResultMessage } from './messages.js';
import { answerableToolCalls } from './tool-call-ids.js';

const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 };
const call = (id: string): AssistantMessage => ({
  role: 'assistant',
  content: [{ type: 'toolCall', id, name: 'read_file', arguments: '{}' }],
  provider: 'p',
  model: 'm',
  usage,
  stopReason: 'toolUse',
  timestamp: 0,
});
const result = (id: string): ToolResultMessage => ({
  role: 'toolResult',
  toolCallId: id,
  toolName: 'read_file',
  content: [{ type: 'text', text: 'ok' }],
  isError: false,
  timestamp: 0,
});

/** A conversation that counts how many of its messages were read. */
function counted(): { messages: Message[]; reads: () => number } {
  let reads = 0;
  const target: Message[] = [{ role: 'user', content: 'go', timestamp: 0 }];
  const messages = new Proxy(target, {
    get(array, key, receiver) {
      if (typeof key === 'string' && /^\d+$/.test(key)) reads++;
      return Reflect.get(array, key, receiver);
    },
  });
  return { messages, reads: () => reads };
}

describe('tool call ids over a growing conversation', () => {
  it('reads each message about once, however many turns', () => {
    const { messages, reads } = counted();
    const turns = 2_000;
    for (let turn = 0; turn < turns; turn++) {
      // Every turn reuses an id of an earlier one: it must still be renamed.
      const answer = answerableToolCalls(
        call(turn === 0 ? 'call_a' : `call_${turn % 7}`),
        messages,
      );
      const id = (answer.content[0] as { id: string }).id;
      messages.push(answer, result(id));
    }
    // Before: every call read the whole conversation again (~4 million reads for 2,000 turns).
    expect(reads()).toBeLessThan(messages.length * 4);
    const ids = messages.flatMap((message) =>
      message.role === 'assistant'
        ? message.content.flatMap((block) => (block.type === 'toolCall' ? [block.id] : []))
        : [],
    );
    expect(new Set(ids).size).toBe(turns);
  });

  it('sees a conversation that was replaced or cut, not only one that grew', () => {
    const messages: Message[] = [{ role: 'user', content: 'go', timestamp: 0 }];
    messages.push(call('x'), result('x'));
    expect((answerableToolCalls(call('x'), messages).content[0] as { id: string }).id).toBe('x_2');
    // Cut back (a rewind of the same array): `x` is free again.
    messages.length = 1;
    expect((answerableToolCalls(call('x'), messages).content[0] as { id: string }).id).toBe('x');
    // Cut and grown back to the same length with other messages.
    messages.push(call('y'), result('y'));
    expect((answerableToolCalls(call('x'), messages).content[0] as { id: string }).id).toBe('x');
    expect((answerableToolCalls(call('y'), messages).content[0] as { id: string }).id).toBe('y_2');
    // An id given out to one answer is not taken for the conversation's next answer.
    const twice = call('z');
    expect(answerableToolCalls(twice, messages)).toBe(twice);
    expect(answerableToolCalls(twice, messages)).toBe(twice);
  });
});
