// Usage as servers send it when it is not quite the documented shape: fields left out, null, the
// whole object null, numbers as strings, negative or fractional counts. A missing count became
// NaN (then every sum, cost and context estimate after it was NaN too) or the whole answer was
// lost to "Cannot read properties of null".
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
const usageObject = /"usage":\{[^}]*\}/g;

describe('Anthropic usage fields that are missing or malformed', () => {
  it.each([
    ['every field left out', '"usage":{}'],
    ['usage null', '"usage":null'],
    ['counts null', '"usage":{"input_tokens":null,"output_tokens":null}'],
    ['counts as strings', '"usage":{"input_tokens":"12","output_tokens":"6"}'],
    ['negative counts', '"usage":{"input_tokens":-5,"output_tokens":-1}'],
    ['fractional counts', '"usage":{"input_tokens":12.5,"output_tokens":6.9}'],
    ['counts of another type', '"usage":{"input_tokens":true,"output_tokens":{"n":1}}'],
  ])('%s: the answer arrives, every count a whole number ≥ 0', async (_name, usage) => {
    const body = fixture('text-cache.sse').map((chunk) => chunk.replace(usageObject, usage));
    const server = await startWireServer([{ headers: SSE_HEADERS, body }]);
    const provider = createAnthropicProvider({ apiKey: 'k', baseURL: server.url, maxRetries: 0 });
    const end = terminalEvent(await collectEvents(provider.stream(request)), { requireLast: true });
    expect(end.type).toBe('done');
    expect(end.message.content).toEqual([{ type: 'text', text: 'Hello, world!' }]);
    const { cost, ...counts } = end.message.usage;
    for (const count of Object.values(counts)) {
      expect(Number.isInteger(count)).toBe(true);
      expect(count).toBeGreaterThanOrEqual(0);
    }
    for (const amount of Object.values(cost ?? {})) expect(Number.isFinite(amount)).toBe(true);
  });

  it('counts as strings are read as numbers', async () => {
    const body = fixture('text-cache.sse').map((chunk) =>
      chunk.replace(/"(input_tokens|output_tokens)":(\d+)/g, '"$1":"$2"'),
    );
    const server = await startWireServer([{ headers: SSE_HEADERS, body }]);
    const provider = createAnthropicProvider({ apiKey: 'k', baseURL: server.url, maxRetries: 0 });
    const end = terminalEvent(await collectEvents(provider.stream(request)));
    expect(end.message.usage).toMatchObject({ input: 12, output: 6, totalTokens: 3018 });
  });
});

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
