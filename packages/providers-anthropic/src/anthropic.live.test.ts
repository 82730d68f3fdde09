import { userMessage } from '@agent/core';
import { collectEvents } from '@agent/tooling-wire-server';
import { describe, expect, it } from 'vitest';
import { createAnthropicProvider } from './anthropic-provider.js';

// Talks to the real API; runs only when a key is set (visibly skipped otherwise).
const apiKey = process.env.ANTHROPIC_API_KEY;

describe('Anthropic live API', () => {
  it.skipIf(apiKey === undefined || apiKey === '')('streams a short answer', async () => {
    const provider = createAnthropicProvider();
    const events = await collectEvents(
      provider.stream({
        model: process.env.ANTHROPIC_MODEL ?? 'claude-haiku-4-5',
        messages: [userMessage('Reply with the single word: pong')],
        maxOutputTokens: 20,
      }),
    );
    const end = events.at(-1);
    if (end?.type !== 'done') throw new Error(`expected done, got ${JSON.stringify(end)}`);
    expect(end.message.content.some((block) => block.type === 'text')).toBe(true);
    expect(end.message.usage.output).toBeGreaterThan(0);
  });
});
