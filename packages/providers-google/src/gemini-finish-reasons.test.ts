// Gemini's finish reasons other than STOP and MAX_TOKENS. A function call the model got wrong
// (MALFORMED_FUNCTION_CALL, UNEXPECTED_TOOL_CALL: sampled, often with no content at all) ended the
// run; now it is asked again while nothing has streamed. The others (safety, recitation, …) stay
// errors that name the reason and are not retried.
import { userMessage } from '@agent/core';
import {
  closeWireServers,
  collectEvents,
  fixtureReader,
  SSE_HEADERS,
  sseEvents,
  startWireServer,
  terminalEvent,
} from '@agent/tooling-wire-server';
import { afterEach, describe, expect, it } from 'vitest';
import { createGeminiProvider } from './gemini-provider.js';

const fixture = fixtureReader(new URL('./__fixtures__/', import.meta.url));
afterEach(closeWireServers);

const request = { model: 'gemini-2.5-flash', messages: [userMessage('hi')] };
const retry = { initialDelayMs: 5, maxBackoffMs: 20 };

/** A response that ends with `finishReason`, after `text` if given. */
function finishing(finishReason: string, text?: string) {
  const parts = text === undefined ? [] : [{ text }];
  return {
    headers: SSE_HEADERS,
    body: sseEvents([
      {
        data: {
          candidates: [
            {
              content: { parts, role: 'model' },
              finishReason,
              finishMessage: `Malformed function call: print(default_api.lookup(`,
              index: 0,
            },
          ],
          usageMetadata: { promptTokenCount: 10, totalTokenCount: 10 },
        },
      },
    ]),
  };
}

describe('Gemini finish reasons', () => {
  it.each(['MALFORMED_FUNCTION_CALL', 'UNEXPECTED_TOOL_CALL'])(
    '%s before any content is asked again, and the retry answers (before: the run ended)',
    async (reason) => {
      const server = await startWireServer([
        finishing(reason),
        { headers: SSE_HEADERS, body: fixture('text.sse') },
      ]);
      const provider = createGeminiProvider({ apiKey: 'k', baseURL: server.url, retry });
      const end = terminalEvent(await collectEvents(provider.stream(request)));
      expect(end.type).toBe('done');
      expect(server.requests).toHaveLength(2);
    },
  );

  it.each(['constructor', 'toString', '__proto__'])(
    'a finish reason named like an Object.prototype property (%s) is an unknown reason, not a stop',
    async (reason) => {
      const server = await startWireServer([finishing(reason, 'partial')]);
      const provider = createGeminiProvider({ apiKey: 'k', baseURL: server.url, retry });
      const end = terminalEvent(await collectEvents(provider.stream(request)));
      expect(end.type).toBe('error');
      expect(JSON.stringify(end)).toContain(`finish reason ${reason}`);
    },
  );

  it('MALFORMED_FUNCTION_CALL every time: an error naming it after the retries', async () => {
    const server = await startWireServer([finishing('MALFORMED_FUNCTION_CALL')]);
    const provider = createGeminiProvider({
      apiKey: 'k',
      baseURL: server.url,
      retry,
      maxRetries: 2,
    });
    const end = terminalEvent(await collectEvents(provider.stream(request)));
    if (end.type !== 'error') throw new Error('expected an error');
    expect(end.error.message).toContain('finish reason MALFORMED_FUNCTION_CALL');
    expect(server.requests).toHaveLength(3);
  });

  it('after streamed text: an error naming it, the text kept, no retry', async () => {
    const server = await startWireServer([finishing('MALFORMED_FUNCTION_CALL', 'Let me look.')]);
    const provider = createGeminiProvider({ apiKey: 'k', baseURL: server.url, retry });
    const end = terminalEvent(await collectEvents(provider.stream(request)));
    if (end.type !== 'error') throw new Error('expected an error');
    expect(end.message.content).toEqual([{ type: 'text', text: 'Let me look.' }]);
    expect(server.requests).toHaveLength(1);
  });

  it.each(['SAFETY', 'RECITATION', 'PROHIBITED_CONTENT', 'BLOCKLIST', 'SPII', 'OTHER'])(
    '%s: an error naming it, not retried',
    async (reason) => {
      const server = await startWireServer([finishing(reason)]);
      const provider = createGeminiProvider({ apiKey: 'k', baseURL: server.url, retry });
      const end = terminalEvent(await collectEvents(provider.stream(request)));
      if (end.type !== 'error') throw new Error('expected an error');
      expect(end.error.message).toContain(`finish reason ${reason}`);
      expect(end.error.isRetryable).toBe(false);
      expect(server.requests).toHaveLength(1);
    },
  );
});
