import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { Agent } from './agent.js';
import type { AgentOptions } from './agent-options.js';
import { defineTool } from './define-tool.js';
import { createScriptedProvider } from './testing/scripted-provider.js';
import { toolResults } from './testing/test-helpers.js';

const lister = defineTool({
  name: 'items',
  description: 'lists items',
  input: z.object({ action: z.string(), page: z.number().optional() }),
  policy: { identity: ['action'] },
  execute: async ({ action, page }) => `${action} page ${page ?? 0}`,
});
const search = defineTool({
  name: 'search',
  description: 'searches',
  input: z.object({ q: z.string() }),
  execute: async ({ q }) => `nothing for ${q}`,
});

async function run(
  calls: { name: string; arguments: Record<string, unknown> }[],
  options: Partial<AgentOptions> = {},
) {
  const agent = new Agent({
    provider: createScriptedProvider([
      ...calls.map((call) => ({ toolCalls: [call] })),
      { text: 'gave up' },
    ]),
    model: 'm',
    tools: [lister, search],
    ...options,
  });
  const result = await agent.run('go').result;
  const texts = toolResults(result.messages).map((message) =>
    message.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n'),
  );
  return { result, texts };
}

const same = Array.from({ length: 8 }, () => ({ name: 'search', arguments: { q: 'x' } }));

describe('the loop detector', () => {
  it('tells the model it repeats itself from the 3rd identical call, and stops the run at the 6th', async () => {
    const { result, texts } = await run(same);
    expect(result.stopReason).toBe('loop-detected');
    expect(result.error).toContain('search');
    expect(texts).toHaveLength(6);
    expect(texts.slice(0, 2).every((text) => !text.includes('repeating'))).toBe(true);
    expect(texts[2]).toContain('3rd identical search call in a row. You are repeating yourself');
    expect(texts[4]).toContain('or the run will be stopped');
  });

  it('identity names what makes calls the same operation: other pages of one action are a loop', async () => {
    const pages = Array.from({ length: 8 }, (_, page) => ({
      name: 'items',
      arguments: { action: 'list', page },
    }));
    expect((await run(pages)).result.stopReason).toBe('loop-detected');
    const queries = Array.from({ length: 8 }, (_, index) => ({
      name: 'search',
      arguments: { q: `q${index}` },
    }));
    expect((await run(queries)).result.stopReason).toBe('completed');
  });

  it('a different call in between starts the count again; thresholds are configurable; false turns it off', async () => {
    const interleaved = [
      ...same.slice(0, 4),
      { name: 'items', arguments: { action: 'x' } },
      ...same.slice(0, 4),
    ];
    expect((await run(interleaved)).result.stopReason).toBe('completed');
    const early = await run(same.slice(0, 3), { loopDetection: { warnAfter: 2, stopAfter: 3 } });
    expect(early.result.stopReason).toBe('loop-detected');
    expect(early.texts[1]).toContain('repeating yourself');
    const off = await run(same, { loopDetection: false });
    expect(off.result.stopReason).toBe('completed');
    expect(off.texts.some((text) => text.includes('repeating'))).toBe(false);
  });

  it('the same arguments in another key order or nesting order are the same operation; a changed value is not', async () => {
    const reordered = Array.from({ length: 6 }, (_, index) => ({
      name: 'search',
      arguments:
        index % 2 === 0
          ? { q: 'x', filter: { a: 1, b: [1, { c: 2, d: 3 }] } }
          : { filter: { b: [1, { d: 3, c: 2 }], a: 1 }, q: 'x' },
    }));
    expect((await run(reordered)).result.stopReason).toBe('loop-detected');
    const changed = reordered.map((call, index) =>
      index === 3
        ? { ...call, arguments: { q: 'x', filter: { a: 1, b: [1, { c: 2, d: 4 }] } } }
        : call,
    );
    expect((await run(changed)).result.stopReason).toBe('completed');
    const extraKey = reordered.map((call, index) =>
      index === 3 ? { ...call, arguments: { ...call.arguments, more: true } } : call,
    );
    expect((await run(extraKey)).result.stopReason).toBe('completed');
  });
});
