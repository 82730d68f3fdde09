// The Responses API's own web search (hostedTools), against a real local server.
import { userMessage } from '@agent/core';
import {
  closeWireServers,
  SSE_HEADERS,
  sseEvents,
  startWireServer,
} from '@agent/tooling-wire-server';
import { afterEach, describe, expect, it } from 'vitest';
import { collect, openaiAt } from './test-helpers.js';

afterEach(closeWireServers);

const responses = (type: string, data: Record<string, unknown>) => ({
  event: type,
  data: { type, ...data },
});
const text = 'Node.js 24 was released on May 6, 2025 (nodejs.org).';
const annotations = [
  {
    type: 'url_citation',
    start_index: 0,
    end_index: 38,
    url: 'https://nodejs.org/en/blog/release/v24.0.0',
    title: 'Node.js 24 released',
  },
  {
    type: 'url_citation',
    start_index: 40,
    end_index: 50,
    url: 'https://nodejs.org/en/blog/release/v24.0.0',
    title: 'Node.js 24 released',
  },
];
const message = {
  id: 'msg_1',
  type: 'message',
  status: 'completed',
  role: 'assistant',
  content: [{ type: 'output_text', annotations, logprobs: [], text }],
};
const response = (status: string, output: unknown[]) => ({
  id: 'resp_ws',
  object: 'response',
  created_at: 1,
  status,
  model: 'gpt-5',
  output,
  usage: {
    input_tokens: 30,
    output_tokens: 20,
    total_tokens: 50,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens_details: { reasoning_tokens: 0 },
  },
});
const searchCall = {
  id: 'ws_1',
  type: 'web_search_call',
  status: 'completed',
  action: { type: 'search', query: 'node 24 release date' },
};

describe('OpenAI Responses web search (hostedTools)', () => {
  it('declares the web_search tool and maps url_citation annotations onto the text', async () => {
    const server = await startWireServer([
      {
        headers: SSE_HEADERS,
        body: sseEvents([
          responses('response.created', { response: response('in_progress', []) }),
          responses('response.output_item.added', {
            output_index: 0,
            item: { ...searchCall, status: 'in_progress' },
          }),
          responses('response.web_search_call.in_progress', { output_index: 0, item_id: 'ws_1' }),
          responses('response.web_search_call.completed', { output_index: 0, item_id: 'ws_1' }),
          responses('response.output_item.done', { output_index: 0, item: searchCall }),
          responses('response.output_item.added', {
            output_index: 1,
            item: { ...message, status: 'in_progress', content: [] },
          }),
          responses('response.output_text.delta', {
            item_id: 'msg_1',
            output_index: 1,
            content_index: 0,
            delta: text,
          }),
          responses('response.output_text.annotation.added', {
            item_id: 'msg_1',
            output_index: 1,
            content_index: 0,
            annotation_index: 0,
            annotation: annotations[0],
          }),
          responses('response.output_item.done', { output_index: 1, item: message }),
          responses('response.completed', {
            response: response('completed', [searchCall, message]),
          }),
        ]),
      },
    ]);
    const events = await collect(
      openaiAt(server.url, { api: 'responses' }).stream({
        model: 'gpt-5',
        messages: [userMessage('When was Node 24 released?')],
        hostedTools: [{ type: 'web_search', allowedDomains: ['nodejs.org'] }],
      }),
    );
    const sent = server.requests[0]?.json as { tools?: unknown[] };
    expect(sent.tools).toEqual([
      { type: 'web_search', filters: { allowed_domains: ['nodejs.org'] } },
    ]);
    expect(events.some((event) => event.type.startsWith('tool-call'))).toBe(false);
    const done = events.at(-1);
    if (done?.type !== 'done') throw new Error(`expected done, got ${JSON.stringify(done)}`);
    expect(done.message.content).toEqual([
      // The search call itself, kept for the next request (see responses-server-items.ts).
      { type: 'opaque', provider: 'openai', data: searchCall },
      {
        type: 'text',
        text,
        citations: [
          { url: 'https://nodejs.org/en/blog/release/v24.0.0', title: 'Node.js 24 released' },
        ],
      },
    ]);
    expect(done.message.stopReason).toBe('stop');
  });
});
