import { userMessage } from '@agent/core';
import {
  closeWireServers,
  collectEvents,
  fixtureReader,
  SSE_HEADERS,
  startWireServer,
} from '@agent/tooling-wire-server';
import { afterEach, describe, expect, it } from 'vitest';
import { createAnthropicProvider } from './anthropic-provider.js';

const fixture = fixtureReader(new URL('./__fixtures__/', import.meta.url));
afterEach(closeWireServers);

describe('Anthropic server-side web search (hostedTools)', () => {
  it('declares the web_search tool and maps citations onto the text; server blocks kept opaque', async () => {
    const server = await startWireServer([
      { headers: SSE_HEADERS, body: fixture('web-search.sse') },
    ]);
    const provider = createAnthropicProvider({ apiKey: 'k', baseURL: server.url });
    const events = await collectEvents(
      provider.stream({
        model: 'claude-sonnet-4-5',
        messages: [userMessage('When was Node 24 released?')],
        hostedTools: [{ type: 'web_search', maxUses: 3, allowedDomains: ['nodejs.org'] }],
      }),
    );
    const sent = server.requests[0]?.json as { tools?: unknown[] };
    expect(sent.tools).toEqual([
      {
        type: 'web_search_20250305',
        name: 'web_search',
        max_uses: 3,
        allowed_domains: ['nodejs.org'],
      },
    ]);
    // No tool-call events for the server's own search: the loop must not try to run it.
    expect(events.some((event) => event.type.startsWith('tool-call'))).toBe(false);
    const done = events.at(-1);
    if (done?.type !== 'done') throw new Error('expected done');
    // The server's call and results stay in the message as sent (opaque), to go back to it.
    expect(done.message.content).toEqual([
      {
        type: 'opaque',
        provider: 'anthropic',
        data: {
          type: 'server_tool_use',
          id: 'srvtoolu_01',
          name: 'web_search',
          input: { query: 'node 24 release date' },
        },
      },
      {
        type: 'opaque',
        provider: 'anthropic',
        data: expect.objectContaining({
          type: 'web_search_tool_result',
          tool_use_id: 'srvtoolu_01',
        }),
      },
      {
        type: 'text',
        text: 'Node.js 24 was released on May 6, 2025.',
        citations: [
          {
            url: 'https://nodejs.org/en/blog/release/v24.0.0',
            title: 'Node.js 24 released',
            citedText: 'Node.js 24 is now available!',
          },
        ],
      },
    ]);
    expect(done.message.stopReason).toBe('stop');
  });
});
