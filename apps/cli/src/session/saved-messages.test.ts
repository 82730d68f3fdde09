import { describe, expect, it } from 'vitest';
import { checkSavedMessages } from './saved-messages.js';

const user = { role: 'user', content: 'hi', timestamp: 1 };
const assistant = {
  role: 'assistant',
  content: [
    { type: 'thinking', thinking: 'hm', signature: 's' },
    { type: 'text', text: 'ok' },
    // A provider's own block (Anthropic's server search), kept to go back to it.
    { type: 'opaque', provider: 'p', data: { type: 'server_tool_use', id: 'srvtoolu_1' } },
    { type: 'toolCall', id: 'c1', name: 'read_file', arguments: '{"path":"a"}' },
  ],
  provider: 'p',
  model: 'm',
  usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 },
  stopReason: 'toolUse',
  timestamp: 2,
};
const result = {
  role: 'toolResult',
  toolCallId: 'c1',
  toolName: 'read_file',
  content: [
    { type: 'text', text: 'x' },
    { type: 'json', value: { a: 1 } },
  ],
  isError: false,
  timestamp: 3,
};

describe('checkSavedMessages', () => {
  it('takes the messages a session writes, with fields of their own kept', () => {
    const messages = [
      user,
      assistant,
      result,
      { ...user, content: [{ type: 'image', data: 'AA==', mimeType: 'image/png' }], extra: 1 },
    ];
    expect(checkSavedMessages(messages)).toEqual({ messages });
  });

  it.each([
    [
      { role: 'bogus' },
      'message 2: "role" is "bogus" (user, assistant or toolResult) — a file from a newer version of agent?',
    ],
    [{ content: 'x' }, 'message 2: "role" is missing (user, assistant or toolResult)'],
    [null, 'message 2: Invalid input: expected object, received null'],
    [{ role: 'user' }, 'message 2: content is missing'],
    [
      { ...assistant, content: 'hi' },
      'message 2: Invalid input: expected array, received string at content',
    ],
    [
      { ...assistant, content: [{ type: 'toolCall', id: 'a', name: 'x', arguments: {} }] },
      'message 2: Invalid input: expected string, received object at content.0.arguments',
    ],
    [{ ...result, toolName: undefined }, 'message 2: toolName is missing'],
    [
      { ...assistant, content: [{ type: 'opaque', provider: 'p', data: 'x' }] },
      'message 2: Invalid input: expected object, received string at content.0.data',
    ],
    // Before: "Invalid input at content", "Invalid discriminator value…" — no word of which block
    // or why; a file from a newer version (a kind of content this one does not know) is named so.
    [
      { ...user, content: [{ type: 'text', text: 'x' }, { type: 'video' }] },
      'message 2: content.1.type is "video", a kind of content this version does not know (text, image) — a file from a newer version of agent?',
    ],
    [
      { ...assistant, content: [{ type: 'hologram', data: 'x' }] },
      'message 2: content.0.type is "hologram", a kind of content this version does not know (text, thinking, toolCall, opaque) — a file from a newer version of agent?',
    ],
    [
      { ...result, content: [{ type: 'audio' }] },
      'message 2: content.0.type is "audio", a kind of content this version does not know (text, image, json) — a file from a newer version of agent?',
    ],
  ])('names the first problem: %j', (bad, problem) => {
    expect(checkSavedMessages([user, bad, user])).toEqual({ problem });
  });

  // Every provider refuses a tool result whose call is not right before it: such a session
  // failed on each run, mid-run, with the provider's 400.
  it.each([
    ['a result with no call at all', [user, result]],
    ['a result after a user message cut it from its call', [user, assistant, user, result]],
    ['a result for another call', [user, assistant, { ...result, toolCallId: 'other' }]],
    ['a call answered twice', [user, assistant, result, result]],
    [
      'a result after a later answer',
      [user, assistant, { ...assistant, content: [{ type: 'text', text: 'x' }] }, result],
    ],
  ])('refuses %s, naming the message', (_name, messages) => {
    const checked = checkSavedMessages(messages);
    expect(checked).toMatchObject({
      problem: expect.stringMatching(
        /^message \d+: a tool result for the call "(c1|other)", which the assistant message before it did not make/,
      ),
    });
  });

  it('takes calls left unanswered (the next run answers them) and results between other results', () => {
    const twoCalls = {
      ...assistant,
      content: [
        { type: 'toolCall', id: 'c1', name: 'read_file', arguments: '{}' },
        { type: 'toolCall', id: 'c2', name: 'read_file', arguments: '{}' },
      ],
    };
    const second = { ...result, toolCallId: 'c2' };
    expect(checkSavedMessages([user, twoCalls, second, result, user])).toHaveProperty('messages');
    expect(checkSavedMessages([user, twoCalls, user])).toHaveProperty('messages');
  });
});

describe('checkSavedMessages: tool call ids an older version left repeated', () => {
  const call = (id: string, key: string) => ({
    type: 'toolCall',
    id,
    name: 'read_file',
    arguments: JSON.stringify({ path: key }),
  });
  const answer = (id: string, text: string) => ({
    ...result,
    toolCallId: id,
    content: [{ type: 'text', text }],
  });
  const turn = (...calls: object[]) => ({ ...assistant, content: calls });

  it.each([
    [
      'one id twice in an answer',
      [user, turn(call('c1', 'a'), call('c1', 'b')), answer('c1', 'A'), answer('c1', 'B')],
      [
        ['c1', 'c1_2'],
        ['c1:A', 'c1_2:B'],
      ],
    ],
    [
      'an id of an earlier turn',
      [user, turn(call('c1', 'a')), answer('c1', 'A'), turn(call('c1', 'b')), answer('c1', 'B')],
      [
        ['c1', 'c1_2'],
        ['c1:A', 'c1_2:B'],
      ],
    ],
  ])(
    '%s: loaded with unique ids, each result after its call (before: refused)',
    (_name, messages, [calls, results]) => {
      const before = JSON.stringify(messages);
      const checked = checkSavedMessages(messages);
      if ('problem' in checked) throw new Error(checked.problem);
      const loaded = checked.messages;
      expect(
        loaded.flatMap((message) =>
          message.role === 'assistant'
            ? message.content.flatMap((block) => (block.type === 'toolCall' ? [block.id] : []))
            : [],
        ),
      ).toEqual(calls);
      expect(
        loaded.flatMap((message) =>
          message.role === 'toolResult'
            ? [
                `${message.toolCallId}:${message.content[0]?.type === 'text' ? message.content[0].text : ''}`,
              ]
            : [],
        ),
      ).toEqual(results);
      // The file's own objects are left as they were.
      expect(JSON.stringify(messages)).toBe(before);
    },
  );

  it('a third result for an id called twice is still refused', () => {
    const checked = checkSavedMessages([
      user,
      turn(call('c1', 'a'), call('c1', 'b')),
      answer('c1', 'A'),
      answer('c1', 'B'),
      answer('c1', 'C'),
    ]);
    expect(checked).toEqual({
      problem:
        'message 5: a tool result for the call "c1", which the assistant message before it did not make (or which was answered already)',
    });
  });
});
