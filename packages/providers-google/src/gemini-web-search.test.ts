import { userMessage } from '@agent/core';
import {
  closeWireServers,
  collectEvents,
  SSE_HEADERS,
  startWireServer,
} from '@agent/tooling-wire-server';
import { afterEach, describe, expect, it } from 'vitest';
import { createGeminiProvider } from './gemini-provider.js';

afterEach(closeWireServers);

// Two chunks in the documented streamGenerateContent shape; grounding arrives with the last.
const chunks = [
  {
    candidates: [
      { content: { parts: [{ text: 'Node.js 24 was released ' }], role: 'model' }, index: 0 },
    ],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
  },
  {
    candidates: [
      {
        content: { parts: [{ text: 'on May 6, 2025.' }], role: 'model' },
        finishReason: 'STOP',
        index: 0,
        groundingMetadata: {
          webSearchQueries: ['node 24 release date'],
          groundingChunks: [
            {
              web: {
                uri: 'https://vertexaisearch.cloud.google.com/grounding-api-redirect/abc',
                title: 'nodejs.org',
              },
            },
            {
              web: {
                uri: 'https://vertexaisearch.cloud.google.com/grounding-api-redirect/abc',
                title: 'nodejs.org',
              },
            },
            {
              web: {
                uri: 'https://vertexaisearch.cloud.google.com/grounding-api-redirect/def',
                title: 'wikipedia.org',
              },
            },
          ],
          groundingSupports: [
            { segment: { startIndex: 0, endIndex: 39 }, groundingChunkIndices: [0, 1] },
          ],
        },
      },
    ],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 12, totalTokenCount: 22 },
  },
];

describe('Gemini grounding with Google Search (hostedTools)', () => {
  it('declares googleSearch and maps groundingChunks onto the answer as citations', async () => {
    const server = await startWireServer([
      {
        headers: SSE_HEADERS,
        body: chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join(''),
      },
    ]);
    const warnings: string[] = [];
    const provider = createGeminiProvider({
      apiKey: 'g',
      baseURL: server.url,
      onWarning: (message) => warnings.push(message),
    });
    const events = await collectEvents(
      provider.stream({
        model: 'gemini-2.5-flash',
        messages: [userMessage('When was Node 24 released?')],
        hostedTools: [{ type: 'web_search', blockedDomains: ['example.com'] }],
      }),
    );
    const sent = server.requests[0]?.json as { tools?: unknown[] };
    expect(sent.tools).toEqual([{ googleSearch: {} }]);
    expect(warnings).toEqual([
      'Gemini search grounding takes no domain lists; allowedDomains/blockedDomains ignored',
    ]);
    const done = events.at(-1);
    if (done?.type !== 'done') throw new Error(`expected done, got ${JSON.stringify(done)}`);
    expect(done.message.content).toEqual([
      {
        type: 'text',
        text: 'Node.js 24 was released on May 6, 2025.',
        citations: [
          {
            url: 'https://vertexaisearch.cloud.google.com/grounding-api-redirect/abc',
            title: 'nodejs.org',
          },
          {
            url: 'https://vertexaisearch.cloud.google.com/grounding-api-redirect/def',
            title: 'wikipedia.org',
          },
        ],
      },
    ]);
  });
});
