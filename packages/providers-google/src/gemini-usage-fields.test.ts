// usageMetadata as servers send it when it is not quite the documented shape: fields left out,
// null, numbers as strings, negative or fractional counts. A string count was kept as it came, and
// a string candidates count plus the thoughts count became "46" for 4 + 6.
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
import { createGeminiProvider } from './gemini-provider.js';

const fixture = fixtureReader(new URL('./__fixtures__/', import.meta.url));
afterEach(closeWireServers);

const request = { model: 'gemini-2.5-flash', messages: [userMessage('hi')] };
const usageObject = /"usageMetadata":\{[^}]*\}/g;

describe('Gemini usageMetadata fields that are missing or malformed', () => {
  it.each([
    ['every field left out', '"usageMetadata":{}'],
    ['usageMetadata null', '"usageMetadata":null'],
    [
      'counts as strings',
      '"usageMetadata":{"promptTokenCount":"14","candidatesTokenCount":"4","thoughtsTokenCount":"6","totalTokenCount":"24"}',
    ],
    [
      'negative counts',
      '"usageMetadata":{"promptTokenCount":-14,"candidatesTokenCount":-4,"totalTokenCount":-1}',
    ],
    ['fractional counts', '"usageMetadata":{"promptTokenCount":14.5,"candidatesTokenCount":4.2}'],
    [
      'counts of another type',
      '"usageMetadata":{"promptTokenCount":true,"candidatesTokenCount":{"n":1}}',
    ],
    [
      'more cached tokens than prompt',
      '"usageMetadata":{"promptTokenCount":5,"cachedContentTokenCount":50,"candidatesTokenCount":1}',
    ],
  ])('%s: the answer arrives, every count a whole number ≥ 0', async (_name, usage) => {
    const body = fixture('text.sse').map((chunk) => chunk.replace(usageObject, usage));
    const server = await startWireServer([{ headers: SSE_HEADERS, body }]);
    const provider = createGeminiProvider({ apiKey: 'k', baseURL: server.url, maxRetries: 0 });
    const end = terminalEvent(await collectEvents(provider.stream(request)), { requireLast: true });
    expect(end.type).toBe('done');
    const { cost, ...counts } = end.message.usage;
    for (const count of Object.values(counts)) {
      expect(Number.isInteger(count)).toBe(true);
      expect(count).toBeGreaterThanOrEqual(0);
    }
    for (const amount of Object.values(cost ?? {})) expect(Number.isFinite(amount)).toBe(true);
  });

  it('counts as strings are read as numbers', async () => {
    const body = fixture('text.sse').map((chunk) =>
      chunk.replace(
        usageObject,
        '"usageMetadata":{"promptTokenCount":"14","candidatesTokenCount":"4","thoughtsTokenCount":"6","totalTokenCount":"24"}',
      ),
    );
    const server = await startWireServer([{ headers: SSE_HEADERS, body }]);
    const provider = createGeminiProvider({ apiKey: 'k', baseURL: server.url, maxRetries: 0 });
    const end = terminalEvent(await collectEvents(provider.stream(request)));
    expect(end.message.usage).toMatchObject({ input: 14, output: 10, totalTokens: 24 });
  });
});
