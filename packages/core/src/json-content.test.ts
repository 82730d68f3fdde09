import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { Agent } from './agent.js';
import { defineTool } from './define-tool.js';
import {
  jsonContentAsText,
  jsonContentText,
  messageText,
  type ToolResultMessage,
  toolResultText,
} from './messages.js';
import { clipToolResultMessage } from './result-budget.js';
import { StaticToolExecutor } from './static-tool-executor.js';
import { createScriptedProvider } from './testing/scripted-provider.js';

function resultWith(content: ToolResultMessage['content']): ToolResultMessage {
  return {
    role: 'toolResult',
    toolCallId: 'c',
    toolName: 't',
    content,
    isError: false,
    timestamp: 0,
  };
}

describe('JSON content blocks', () => {
  it.each([
    [{ a: 1, b: [true, null] }, '{\n  "a": 1,\n  "b": [\n    true,\n    null\n  ]\n}'],
    [[1, 'two'], '[\n  1,\n  "two"\n]'],
    ['text', '"text"'],
    [42, '42'],
    [null, 'null'],
    [undefined, 'null'],
  ])('%j as text: %j', (value, text) => {
    expect(jsonContentText({ type: 'json', value })).toBe(text);
  });

  it('describes a value JSON cannot write instead of throwing', () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(jsonContentText({ type: 'json', value: cycle })).toMatch(
      /^\[JSON value that cannot be written: /,
    );
    expect(jsonContentText({ type: 'json', value: 10n })).toMatch(/BigInt/);
  });

  it('becomes text where only text is taken; other blocks pass through in order', () => {
    const content: ToolResultMessage['content'] = [
      { type: 'text', text: 'before' },
      { type: 'json', value: { n: 1 } },
      { type: 'image', data: 'AA==', mimeType: 'image/png' },
    ];
    expect(jsonContentAsText(content)).toEqual([
      { type: 'text', text: 'before' },
      { type: 'text', text: '{\n  "n": 1\n}' },
      { type: 'image', data: 'AA==', mimeType: 'image/png' },
    ]);
    expect(toolResultText(content)).toBe('before\n{\n  "n": 1\n}\n[image image/png]');
    expect(messageText(resultWith(content))).toBe('before{\n  "n": 1\n}');
  });

  it('counts toward the result budget as its text, and is clipped as text', () => {
    const big = resultWith([
      { type: 'json', value: { rows: Array.from({ length: 50 }, (_, i) => i) } },
    ]);
    expect(clipToolResultMessage(big, 100_000)).toBe(big);
    const clipped = clipToolResultMessage(big, 100);
    expect(clipped.content).toHaveLength(1);
    expect(clipped.content[0]?.type).toBe('text');
    expect(toolResultText(clipped.content)).toMatch(/characters clipped/);
  });

  it('a tool may return it; the loop keeps it in history and StaticToolExecutor renders it', async () => {
    const stats = defineTool({
      name: 'stats',
      description: 'Counts.',
      input: z.object({}),
      execute: async () => ({ content: [{ type: 'json', value: { files: 3 } }] }),
    });
    expect(await new StaticToolExecutor().register(stats).execute('stats')).toBe(
      '{\n  "files": 3\n}',
    );
    const agent = new Agent({
      provider: createScriptedProvider([
        { toolCalls: [{ name: 'stats', arguments: {} }] },
        { text: 'done' },
      ]),
      model: 'm',
      tools: [stats],
    });
    const result = await agent.run('go').result;
    const stored = result.messages.find((message) => message.role === 'toolResult');
    expect(stored?.content).toEqual([{ type: 'json', value: { files: 3 } }]);
    // A conversation is plain JSON: it survives a save and load.
    expect(JSON.parse(JSON.stringify(result.messages))).toEqual(result.messages);
  });
});
