// Tool calls a provider streamed with a repeated, reused or empty id, or without a name: each gets
// exactly one result that answers it alone, and the conversation stays one every provider takes
// back (unique ids, every result right after its call, names that are not empty).
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { Agent } from './agent.js';
import { defineTool } from './define-tool.js';
import type { AssistantMessage, Message, ToolResultMessage } from './messages.js';
import { createScriptedProvider, type ScriptedTurn } from './testing/scripted-provider.js';
import { answerableToolCalls, unnamedToolCall } from './tool-call-ids.js';

const lookup = defineTool({
  name: 'lookup',
  description: 'echoes its key',
  input: z.object({ key: z.string() }),
  execute: async ({ key }) => `value of ${key}`,
});

async function run(turns: ScriptedTurn[], history: Message[] = []) {
  const provider = createScriptedProvider([...turns, { text: 'done' }]);
  const agent = new Agent({ provider, model: 'm', tools: [lookup], messages: history });
  const result = await agent.run('go').result;
  return { result, requests: provider.requests };
}

/** Every property a provider needs of a history: unique call ids, each answered once, in order. */
function expectAnswerable(messages: readonly Message[]): void {
  const seen = new Set<string>();
  let open = new Set<string>();
  for (const message of messages) {
    if (message.role === 'assistant') {
      open = new Set();
      for (const block of message.content) {
        if (block.type !== 'toolCall') continue;
        expect(seen.has(block.id), `id ${block.id} used twice`).toBe(false);
        expect(block.id).not.toBe('');
        expect(block.name.trim()).not.toBe('');
        seen.add(block.id);
        open.add(block.id);
      }
    } else if (message.role === 'toolResult') {
      expect(open.delete(message.toolCallId), `result for ${message.toolCallId}`).toBe(true);
    } else open = new Set();
  }
}

const results = (messages: readonly Message[]) =>
  messages.filter((message): message is ToolResultMessage => message.role === 'toolResult');
const text = (message: ToolResultMessage) =>
  message.content.map((block) => (block.type === 'text' ? block.text : '')).join('');

describe('tool calls made answerable', () => {
  it('two calls with one id in an answer: both run, each with its own result (before: one id twice)', async () => {
    const { result } = await run([
      {
        toolCalls: [
          { id: 'call_1', name: 'lookup', arguments: { key: 'a' } },
          { id: 'call_1', name: 'lookup', arguments: { key: 'b' } },
        ],
      },
    ]);
    expectAnswerable(result.messages);
    expect(results(result.messages).map((message) => [message.toolCallId, text(message)])).toEqual([
      ['call_1', 'value of a'],
      ['call_1_2', 'value of b'],
    ]);
  });

  it.each([
    ['three in one answer', [['x', 'x', 'x']]],
    ['an id of an earlier turn', [['x'], ['x']]],
    [
      'an earlier turn and within the answer',
      [
        ['x', 'x_2'],
        ['x', 'x_2', 'x'],
      ],
    ],
    ['ids that look like fresh ones', [['x_2', 'x', 'x']]],
    ['empty ids', [['', ''], ['']]],
  ])('%s: every call answered once, the history answerable', async (_name, turns) => {
    const { result } = await run(
      turns.map((ids) => ({
        toolCalls: ids.map((id, index) => ({
          id,
          name: 'lookup',
          arguments: { key: `k${index}` },
        })),
      })),
    );
    expectAnswerable(result.messages);
    expect(results(result.messages)).toHaveLength(turns.flat().length);
    expect(results(result.messages).every((message) => !message.isError)).toBe(true);
  });

  it('an id a saved conversation used already is not reused', async () => {
    const history: Message[] = [
      { role: 'user', content: 'before', timestamp: 0 },
      {
        role: 'assistant',
        content: [{ type: 'toolCall', id: 'toolu_1', name: 'lookup', arguments: '{"key":"a"}' }],
        provider: 'scripted',
        model: 'm',
        usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 },
        stopReason: 'toolUse',
        timestamp: 1,
      },
      {
        role: 'toolResult',
        toolCallId: 'toolu_1',
        toolName: 'lookup',
        content: [{ type: 'text', text: 'value of a' }],
        isError: false,
        timestamp: 2,
      },
    ];
    const { result, requests } = await run(
      [{ toolCalls: [{ id: 'toolu_1', name: 'lookup', arguments: { key: 'b' } }] }],
      history,
    );
    expectAnswerable(result.messages);
    // The next request carries the renamed call and its result.
    const sent = requests.at(-1)?.messages ?? [];
    expectAnswerable(sent);
    expect(results(sent).map((message) => message.toolCallId)).toEqual(['toolu_1', 'toolu_1_2']);
  });

  it.each(['', '   '])(
    'a call without a name (%j): a not-found result, the name one a provider takes back',
    async (name) => {
      const { result } = await run([{ toolCalls: [{ id: 'c1', name, arguments: {} }] }]);
      expectAnswerable(result.messages);
      const [answer] = results(result.messages);
      expect(answer).toMatchObject({ isError: true, errorKind: 'not-found' });
      expect(text(answer as ToolResultMessage)).toMatch(/^Tool not found: unnamed_tool_call/);
      expect(result.stopReason).toBe('completed');
    },
  );

  it.each([
    ['repeated in one answer', [['call_1', 'call_1', 'call_1']]],
    ['reused from an earlier turn', [['x'], ['x', 'x_2']]],
    ['empty', [['', '']]],
  ])(
    'renamed ids (%s): tool-call-start and tool-call-end events carry the id the call keeps (before: the original)',
    async (_name, turns) => {
      const provider = createScriptedProvider([
        ...turns.map((ids) => ({
          toolCalls: ids.map((id, index) => ({
            id,
            name: 'lookup',
            arguments: { key: `k${index}` },
          })),
        })),
        { text: 'done' },
      ]);
      const agent = new Agent({ provider, model: 'm', tools: [lookup] });
      const run = agent.run('go');
      const started: string[] = [];
      const ended: string[] = [];
      const executed: string[] = [];
      const partial: string[] = [];
      for await (const event of run) {
        if (event.type === 'message-update' && event.event.type === 'tool-call-start') {
          started.push(event.event.id);
          const block = event.message.content[event.event.index];
          if (block?.type === 'toolCall') partial.push(block.id);
        }
        if (event.type === 'message-update' && event.event.type === 'tool-call-end')
          ended.push(event.event.toolCall.id);
        if (event.type === 'tool-execution-start') executed.push(event.toolCallId);
      }
      const result = await run.result;
      expectAnswerable(result.messages);
      const final = result.messages.flatMap((message) =>
        message.role === 'assistant'
          ? message.content.flatMap((block) => (block.type === 'toolCall' ? [block.id] : []))
          : [],
      );
      expect(final).toHaveLength(turns.flat().length);
      expect(started).toEqual(final);
      expect(partial).toEqual(final);
      expect(ended).toEqual(final);
      expect(executed).toEqual(final);
    },
  );

  it('a message that needs nothing is returned as it is', () => {
    const message: AssistantMessage = {
      role: 'assistant',
      content: [{ type: 'toolCall', id: 'a', name: 'lookup', arguments: '{}' }],
      provider: 'p',
      model: 'm',
      usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 },
      stopReason: 'toolUse',
      timestamp: 0,
    };
    expect(answerableToolCalls(message, [])).toBe(message);
    const renamed = answerableToolCalls(
      { ...message, content: [{ ...message.content[0], name: '' } as never] },
      [],
    );
    expect(renamed.content[0]).toMatchObject({ name: unnamedToolCall });
  });
});
