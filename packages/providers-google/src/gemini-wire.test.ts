// The wire cases every provider shares (tooling/wire-server's provider suite), against Gemini's
// streamGenerateContent: silence, a 200 that is not a stream, odd usage, a key a header refuses.
import { fixtureReader, type RecordedRequest } from '@agent/tooling-wire-server';
import { describeProviderWire, type UsageCase } from '@agent/tooling-wire-server/provider-suite';
import { createGeminiProvider } from './gemini-provider.js';

const fixture = fixtureReader(new URL('./__fixtures__/', import.meta.url));
const usageObject = /"usageMetadata":\{[^}]*\}/g;

function usageText(usage: UsageCase): string {
  if (usage === null) return '"usageMetadata":null';
  if (usage === 'empty') return '"usageMetadata":{}';
  return `"usageMetadata":${JSON.stringify({ promptTokenCount: usage.input, candidatesTokenCount: usage.output })}`;
}

describeProviderWire({
  name: 'Gemini',
  providerId: 'google',
  model: 'gemini-2.5-flash',
  create: ({ url, apiKey, ...options }) =>
    createGeminiProvider({ baseURL: url, ...options, ...(apiKey === undefined ? {} : { apiKey }) }),
  answer: () => fixture('text.sse'),
  text: 'Hello, world!',
  beforeContent: 0,
  firstText: 'Hello',
  wholeAnswer: { candidates: [{ content: { parts: [{ text: 'whole' }] }, finishReason: 'STOP' }] },
  jsonError: (message, code) =>
    code === undefined
      ? { error: { message } }
      : { error: { message, code, status: 'UNAVAILABLE' } },
  busyCode: 503,
  withUsage: (chunks, usage) => chunks.map((chunk) => chunk.replace(usageObject, usageText(usage))),
  withCachedOverInput: (chunks) =>
    chunks.map((chunk) =>
      chunk.replace(
        usageObject,
        '"usageMetadata":{"promptTokenCount":5,"cachedContentTokenCount":50,"candidatesTokenCount":1}',
      ),
    ),
  sentKey: (request: RecordedRequest) => request.headers['x-goog-api-key'] as string | undefined,
  keyVariable: 'GEMINI_API_KEY',
});
