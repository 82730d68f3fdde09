// Compaction of text denser in tokens than the estimate (about 4 characters a token) assumes —
// CJK, base64, minified code, where a character can be a token: the summary call itself is
// refused as too long. The compactor then sends less at once, instead of failing every run of
// the session from then on (each one overflowed, compacted, and overflowed again).
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { Agent } from './agent.js';
import { compactionSummaryPreamble, compactionSystemPrompt } from './compaction.js';
import { defineTool } from './define-tool.js';
import { type Message, messageText } from './messages.js';
import type { ProviderRequest } from './provider.js';
import { createScriptedProvider, type ScriptedTurn } from './testing/scripted-provider.js';
import { runToEnd } from './testing/test-helpers.js';

/** The model's real window, in its own tokens: one a character here. */
const window = 10_000;

/** 3,000 characters of CJK text (about 750 tokens by the estimate, 3,000 in truth). */
const page = (n: number) => `page ${n}\n${'字'.repeat(3_000)}`;

const readPage = defineTool({
  name: 'read_page',
  description: 'Reads a page',
  input: z.object({ n: z.number() }),
  policy: { permission: 'read-only' },
  execute: async ({ n }) => page(n),
});

const requestCharacters = (request: ProviderRequest) =>
  (request.systemPrompt?.length ?? 0) +
  request.messages.reduce((sum, message) => sum + JSON.stringify(message.content).length, 0);

describe('compaction of token-dense text', () => {
  it('a summary call refused as too long is sent again in smaller pieces; the run goes on', async () => {
    const summaries: number[] = [];
    let pagesRead = 0;
    let lastAnswered: ProviderRequest | undefined;
    const step = (request: ProviderRequest): ScriptedTurn => {
      const tooLong = requestCharacters(request) > window;
      if (tooLong)
        return {
          error: {
            message: `prompt is too long: ${requestCharacters(request)} tokens > ${window} maximum`,
            statusCode: 400,
            contextOverflow: true,
          },
        };
      if (request.systemPrompt === compactionSystemPrompt) {
        summaries.push(requestCharacters(request));
        return { text: `Summary ${summaries.length}: pages read so far.` };
      }
      lastAnswered = request;
      if (pagesRead < 6) {
        pagesRead++;
        return {
          toolCalls: [{ id: `p${pagesRead}`, name: 'read_page', arguments: { n: pagesRead } }],
        };
      }
      return { text: 'All six pages read.' };
    };
    const provider = createScriptedProvider([step], { whenExhausted: 'repeat-last' });
    const agent = new Agent({
      provider,
      model: 'm',
      tools: [readPage],
      compaction: { contextWindow: window, summaryMaxOutputTokens: 500 },
    });
    const { result } = await runToEnd(agent, 'Read six pages.');
    expect(result.error).toBeUndefined();
    expect(result.stopReason).toBe('completed');
    expect(agent.compactions.length).toBeGreaterThan(0);
    // Every summary call that was answered fit the window.
    expect(summaries.length).toBeGreaterThan(0);
    for (const size of summaries) expect(size).toBeLessThanOrEqual(window);
    const last = agent.compactions.at(-1);
    expect(last?.summary).toMatch(/^Summary \d+: pages read so far\.$/);
    // The last call the model answered started with the summary, and fit.
    expect(messageText(lastAnswered?.messages[0] as Message)).toContain(compactionSummaryPreamble);
    // The stored conversation stays whole.
    expect(agent.messages.filter((message) => message.role === 'toolResult')).toHaveLength(6);
  });
});
