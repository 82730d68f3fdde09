import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { defineTool } from './define-tool.js';
import { executeTool } from './execute-tool.js';
import { clipText } from './result-budget.js';

// A lone surrogate in a request makes an API refuse it (Anthropic: "The request body is not valid
// JSON: no low surrogate in string"), and every request after it, since the result stays in the
// history: one emoji cut in half, or one REPL printing '\ud800', ended the session. Before,
// clipText cut inside surrogate pairs, and tool results kept whatever the tool returned.

const isWellFormed = (text: string) =>
  (text as unknown as { isWellFormed(): boolean }).isWellFormed();

/** Every string inside a value, keys included. */
function strings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(strings);
  if (value !== null && typeof value === 'object')
    return Object.entries(value).flatMap(([key, item]) => [key, ...strings(item)]);
  return [];
}

describe('clipText never cuts a surrogate pair', () => {
  it('for any well-formed text and any limit (property)', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', maxLength: 200 }),
        fc.integer({ min: 0, max: 220 }),
        (text, limit) => {
          expect(isWellFormed(clipText(text, limit))).toBe(true);
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it('cuts beside an emoji, not inside it', () => {
    const text = '😀'.repeat(100);
    for (let limit = 0; limit < 60; limit++) expect(isWellFormed(clipText(text, limit))).toBe(true);
    expect(clipText(text, 9)).toBe('😀😀😀\n[… 192 of 200 characters clipped …]\n😀');
  });
});

describe('a tool result reaches the history well-formed', () => {
  const lone = ['\ud800', '\udfff', 'a\ud83d', '\ude00b', '\ud83d\ud83d\ude00'];
  it.each(lone.map((text) => [JSON.stringify(text), text]))('text %s', async (_shown, text) => {
    const tool = defineTool({
      name: 'emit',
      description: 'returns odd text',
      input: z.object({}),
      policy: { permission: 'read-only' },
      execute: async () => ({
        content: [
          { type: 'text', text: `before ${text} after` },
          { type: 'json', value: { [`key${text}`]: [text, { deep: text }], n: 1 } },
        ],
      }),
    });
    const message = await executeTool(tool, {});
    for (const block of message.content) {
      const found =
        block.type === 'text' ? [block.text] : block.type === 'json' ? strings(block.value) : [];
      for (const each of found) expect(isWellFormed(each)).toBe(true);
    }
    const [first] = message.content;
    expect(first?.type === 'text' && first.text.startsWith('before ')).toBe(true);
  });

  it('leaves a well-formed result as it is (the same blocks)', async () => {
    const content = [
      { type: 'text' as const, text: 'fine 😀' },
      { type: 'json' as const, value: { a: ['b'] } },
    ];
    const tool = defineTool({
      name: 'emit',
      description: 'returns fine text',
      input: z.object({}),
      policy: { permission: 'read-only' },
      execute: async () => ({ content }),
    });
    expect((await executeTool(tool, {})).content).toBe(content);
  });
});
