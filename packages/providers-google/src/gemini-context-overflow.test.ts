import { Agent, type Message, userMessage } from '@agent/core';
import {
  closeWireServers,
  collectEvents,
  fixtureReader,
  JSON_HEADERS,
  SSE_HEADERS,
  startWireServer,
  terminalEvent,
  type WireResponse,
} from '@agent/tooling-wire-server';
import { afterEach, describe, expect, it } from 'vitest';
import { createGeminiProvider } from './gemini-provider.js';

const fixture = fixtureReader(new URL('./__fixtures__/', import.meta.url));
afterEach(closeWireServers);

const googleError = (code: number, status: string, message: string): WireResponse => ({
  status: code,
  headers: JSON_HEADERS,
  body: JSON.stringify({ error: { code, message, status } }),
});

/** Gemini's refusal of a request larger than the window, as it sends it. */
const overflow = googleError(
  400,
  'INVALID_ARGUMENT',
  'The input token count (1196265) exceeds the maximum number of tokens allowed (1048576).',
);

const earlier: Message[] = [
  userMessage('What is in src/a.ts?'),
  {
    role: 'assistant',
    content: [{ type: 'text', text: 'It exports the function a().' }],
    provider: 'google',
    model: 'gemini-2.5-flash',
    usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15 },
    stopReason: 'stop',
    timestamp: 1,
  },
];

describe('Gemini context overflow', () => {
  it('400 INVALID_ARGUMENT "input token count exceeds": the agent compacts and sends the turn again', async () => {
    const server = await startWireServer([
      overflow,
      { headers: SSE_HEADERS, body: fixture('final-text.sse') },
      { headers: SSE_HEADERS, body: fixture('final-text.sse') },
    ]);
    const agent = new Agent({
      provider: createGeminiProvider({ apiKey: 'k', baseURL: server.url, maxRetries: 0 }),
      model: 'gemini-2.5-flash',
      systemPrompt: 'You answer questions about code.',
      messages: earlier,
      compaction: { keepRecentTokens: 0 },
    });
    const result = await agent.run('And src/b.ts?').result;

    expect(result.stopReason).toBe('completed');
    expect(server.requests).toHaveLength(3);
    const summary = server.requests[1]?.json as Record<string, unknown>;
    expect(JSON.stringify(summary.systemInstruction)).toContain('working memory of an AI agent');
    expect(summary.tools).toBeUndefined();
    expect(JSON.stringify(summary.contents)).toContain('User: What is in src/a.ts?');
    const retried = server.requests[2]?.json as {
      contents: { role: string; parts: { text: string }[] }[];
    };
    const texts = retried.contents.flatMap((content) => content.parts.map((part) => part.text));
    expect(texts[0]).toContain(
      '<summary>\nParis is 18°C and sunny; Oslo is 4°C and raining.\n</summary>',
    );
    expect(texts.at(-1)).toBe('And src/b.ts?');
    expect(texts.join('\n')).not.toContain('It exports the function a().');
    expect(agent.messages).toHaveLength(4);
    expect(agent.compactions).toHaveLength(1);
  });

  it('the refusal is a typed context overflow; other errors are not', async () => {
    const server = await startWireServer([
      overflow,
      googleError(400, 'INVALID_ARGUMENT', 'Function calling config is invalid.'),
      googleError(
        429,
        'RESOURCE_EXHAUSTED',
        'Quota exceeded for metric: generate_content_paid_tier_input_token_count, limit: 1000000',
      ),
    ]);
    const provider = createGeminiProvider({ apiKey: 'k', baseURL: server.url, maxRetries: 0 });
    const overflowOf = async () => {
      const end = terminalEvent(
        await collectEvents(
          provider.stream({ model: 'gemini-2.5-flash', messages: [userMessage('hi')] }),
        ),
      );
      return end.type === 'error' && end.error.contextOverflow;
    };
    expect(await overflowOf()).toBe(true);
    expect(await overflowOf()).toBe(false);
    expect(await overflowOf()).toBe(false);
  });

  it('knows the window of its models', () => {
    const provider = createGeminiProvider({ apiKey: 'k' });
    expect(provider.modelInfo?.('gemini-2.5-flash')?.contextWindow).toBeGreaterThan(1_000_000);
  });
});
