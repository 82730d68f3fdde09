import { userMessage } from '@agent/core';
import { collectEvents } from '@agent/tooling-wire-server';
import { describe, expect, it } from 'vitest';
import { createGeminiProvider } from './gemini-provider.js';

// Talks to the real API; runs only when a key is set (visibly skipped otherwise).
const apiKey = process.env.GEMINI_API_KEY;

describe('Gemini live API', () => {
  it.skipIf(apiKey === undefined || apiKey === '')('streams a short answer', async () => {
    const provider = createGeminiProvider();
    const events = await collectEvents(
      provider.stream({
        model: process.env.GEMINI_MODEL ?? 'gemini-2.5-flash',
        messages: [userMessage('Reply with the single word: pong')],
      }),
    );
    const end = events.at(-1);
    if (end?.type !== 'done') throw new Error(`expected done, got ${JSON.stringify(end)}`);
    expect(end.message.content.some((block) => block.type === 'text')).toBe(true);
    expect(end.message.usage.totalTokens).toBeGreaterThan(0);
  });
});
