// The wire cases every provider shares (tooling/wire-server's provider suite), against both
// OpenAI APIs: silence, a 200 that is not a stream, odd usage, a key a header refuses.
import type { RecordedRequest } from '@agent/tooling-wire-server';
import { describeProviderWire, type UsageCase } from '@agent/tooling-wire-server/provider-suite';
import { compatPresets } from './compat.js';
import { createOpenAIProvider } from './openai-provider.js';
import { fixtureResponse, openaiAt } from './test-helpers.js';

// A usage object, with the token-detail objects it may hold.
const usageObject = /"usage":\{("[a-z_]+":(-?[\d.]+|null|\{[^}]*\}),?)*\}/g;

for (const { api, fields, beforeContent } of [
  { api: 'chat', fields: ['prompt_tokens', 'completion_tokens'], beforeContent: 1 },
  { api: 'responses', fields: ['input_tokens', 'output_tokens'], beforeContent: 3 },
] as const) {
  const [input, output] = fields;
  const usageText = (usage: UsageCase): string => {
    if (usage === null) return '"usage":null';
    if (usage === 'empty') return '"usage":{}';
    return `"usage":${JSON.stringify({ [input]: usage.input, [output]: usage.output })}`;
  };
  describeProviderWire({
    name: `OpenAI ${api}`,
    providerId: 'openai',
    model: 'gpt-4o',
    create: ({ url, apiKey, ...options }) =>
      apiKey === undefined
        ? // The key from the environment: openaiAt's own key left out.
          createOpenAIProvider({
            baseURL: `${url}/v1`,
            api,
            compat: { ...compatPresets.openai },
            clientOptions: { logLevel: 'off' },
            env: process.env,
            ...options,
          })
        : openaiAt(url, { api, apiKey, ...options }),
    answer: () => fixtureResponse(`${api}-final-text.sse`).body as string[],
    text: 'In Paris it is 18°C and sunny; the local time is 14:05.',
    beforeContent,
    firstText: 'In Paris it is ',
    wholeAnswer: {
      id: 'x',
      object: 'chat.completion',
      choices: [
        { index: 0, message: { role: 'assistant', content: 'whole' }, finish_reason: 'stop' },
      ],
    },
    jsonError: (message, code) => ({ error: code === undefined ? { message } : { message, code } }),
    busyCode: 503,
    withUsage: (chunks, usage) =>
      chunks.map((chunk) => chunk.replace(usageObject, usageText(usage))),
    withCachedOverInput: (chunks) =>
      chunks.map((chunk) =>
        chunk.replace(
          usageObject,
          `"usage":{"${input}":10,"${output}":2,"${input.replace('tokens', 'tokens_details')}":{"cached_tokens":50}}`,
        ),
      ),
    sentKey: (request: RecordedRequest) => request.headers.authorization?.replace(/^Bearer /, ''),
    keyVariable: 'OPENAI_API_KEY',
  });
}
