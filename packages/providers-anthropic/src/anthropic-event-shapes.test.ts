// Stream events that are valid JSON of the wrong shape (Anthropic's own event kinds; the usage
// cases every provider shares are in anthropic-wire.test.ts).
import { userMessage } from '@agent/core';
import {
  closeWireServers,
  collectEvents,
  fixtureReader,
  SSE_HEADERS,
  startWireServer,
  terminalEvent,
} from '@agent/tooling-wire-server';
import { afterEach, describe, expect, it } from 'vitest';
import { createAnthropicProvider } from './anthropic-provider.js';

const fixture = fixtureReader(new URL('./__fixtures__/', import.meta.url));
afterEach(closeWireServers);

const request = { model: 'claude-haiku-4-5', messages: [userMessage('hi')] };

describe('Anthropic events that are valid JSON of the wrong shape', () => {
  const streamWith = async (data: string) => {
    const chunks = fixture('text-cache.sse');
    chunks.splice(3, 0, `event: content_block_delta\ndata: ${data}\n\n`);
    const server = await startWireServer([{ headers: SSE_HEADERS, body: chunks }]);
    const provider = createAnthropicProvider({ apiKey: 'k', baseURL: server.url, maxRetries: 0 });
    return terminalEvent(await collectEvents(provider.stream(request)), { requireLast: true });
  };

  it.each(['null', '42', '"text"', '[]', '{"no":"type"}', '{"type":7}'])(
    'data: %s ends in one error event saying the chunk is malformed',
    async (data) => {
      const end = await streamWith(data);
      if (end.type !== 'error') throw new Error(`expected an error event, got ${end.type}`);
      expect(end.error.message).toMatch(
        /^Anthropic sent a malformed stream chunk: expected an event object with a "type"/,
      );
    },
  );

  it.each([
    '{"type":"content_block_delta"}',
    '{"type":"content_block_delta","index":0,"delta":null}',
    '{"type":"content_block_start","index":1}',
    '{"type":"message_delta"}',
    '{"type":"message_start"}',
  ])('data: %s is ignored or said to be malformed, never a bare TypeError', async (data) => {
    const end = await streamWith(data);
    if (end.type === 'done')
      expect(end.message.content).toEqual([{ type: 'text', text: 'Hello, world!' }]);
    else
      expect(end.error.message).toMatch(
        new RegExp(
          `^Anthropic sent a malformed stream chunk: a ${JSON.parse(data).type} event of an unexpected shape`,
        ),
      );
  });
});
