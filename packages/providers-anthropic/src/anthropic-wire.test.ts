// The wire cases every provider shares (tooling/wire-server's provider suite), against the
// Messages API's stream: silence, a 200 that is not a stream, odd usage, a key a header refuses.
import { fixtureReader, type RecordedRequest } from '@agent/tooling-wire-server';
import { describeProviderWire, type UsageCase } from '@agent/tooling-wire-server/provider-suite';
import { createAnthropicProvider } from './anthropic-provider.js';

const fixture = fixtureReader(new URL('./__fixtures__/', import.meta.url));
const usageObject = /"usage":\{[^}]*\}/g;

function usageText(usage: UsageCase): string {
  if (usage === null) return '"usage":null';
  if (usage === 'empty') return '"usage":{}';
  return `"usage":${JSON.stringify({ input_tokens: usage.input, output_tokens: usage.output })}`;
}

describeProviderWire({
  name: 'Anthropic',
  providerId: 'anthropic',
  model: 'claude-haiku-4-5',
  create: ({ url, apiKey, ...options }) =>
    createAnthropicProvider({
      baseURL: url,
      ...options,
      ...(apiKey === undefined ? {} : { apiKey }),
    }),
  answer: () => fixture('text-cache.sse'),
  text: 'Hello, world!',
  // message_start, content_block_start, ping.
  beforeContent: 3,
  firstText: 'Hello',
  wholeAnswer: { type: 'message', content: [{ type: 'text', text: 'hi' }] },
  jsonError: (message, code) =>
    code === undefined
      ? { type: 'error', error: { type: 'api_error', message } }
      : { error: { message, code } },
  busyCode: 529,
  withUsage: (chunks, usage) => chunks.map((chunk) => chunk.replace(usageObject, usageText(usage))),
  // This SDK version sends the key as a bearer token.
  sentKey: (request: RecordedRequest) =>
    (request.headers['x-api-key'] as string | undefined) ??
    request.headers.authorization?.replace(/^Bearer /, ''),
  keyVariable: 'ANTHROPIC_API_KEY',
});
