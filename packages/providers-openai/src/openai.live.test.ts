import { describe, expect, it } from 'vitest';
import { createOpenAIProvider } from './openai-provider.js';
import { collect } from './test-helpers.js';

const apiKey = process.env.OPENAI_API_KEY;
const model = process.env.OPENAI_LIVE_MODEL ?? 'gpt-4.1-nano';

// Talks to the real OpenAI API; skipped (visibly) without OPENAI_API_KEY.
describe('live OpenAI', () => {
  for (const api of ['chat', 'responses'] as const) {
    it.skipIf(!apiKey)(
      `streams a short answer over ${api}`,
      async () => {
        const provider = createOpenAIProvider({ api, ...(apiKey === undefined ? {} : { apiKey }) });
        const events = await collect(
          provider.stream({
            model,
            maxOutputTokens: 20,
            messages: [
              { role: 'user', content: 'Reply with the single word: pong', timestamp: Date.now() },
            ],
          }),
        );
        const last = events.at(-1);
        expect(last?.type).toBe('done');
        if (last?.type !== 'done') return;
        expect(JSON.stringify(last.message.content).toLowerCase()).toContain('pong');
        expect(last.message.usage.totalTokens).toBeGreaterThan(0);
      },
      60_000,
    );
  }
});
