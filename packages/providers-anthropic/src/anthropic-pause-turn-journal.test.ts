// A turn the API paused (pause_turn) in a journaled run whose process dies while the provider
// continues it: the paused turn was recorded before the continuation was sent, so the resumed run
// sends it back (the API resumes the turn) instead of paying for the whole turn — its server
// searches — again. Local wire servers speak the Messages API's documented stream.
import { Agent, type AssistantMessage } from '@agent/core';
import { CrashableRunJournal } from '@agent/core/testing';
import {
  closeWireServers,
  SSE_HEADERS,
  sseEvents,
  startWireServer,
  type WireResponse,
} from '@agent/tooling-wire-server';
import { afterEach, describe, expect, it } from 'vitest';
import { createAnthropicProvider } from './anthropic-provider.js';

afterEach(closeWireServers);

type Block = Record<string, unknown> & { type: string };

/** One response: the blocks (text streamed as a delta, server_tool_use input as JSON deltas). */
function response(
  blocks: readonly Block[],
  stopReason: string,
  usage = { input: 100, output: 10 },
): WireResponse {
  const events: Array<{ event: string; data: unknown }> = [
    {
      event: 'message_start',
      data: {
        type: 'message_start',
        message: {
          id: 'msg_pause',
          type: 'message',
          role: 'assistant',
          content: [],
          model: 'claude-sonnet-4-6',
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: usage.input, output_tokens: 1 },
        },
      },
    },
  ];
  blocks.forEach((block, index) => {
    const start =
      block.type === 'text'
        ? { type: 'text', text: '' }
        : block.type === 'server_tool_use' || block.type === 'tool_use'
          ? { ...block, input: {} }
          : block;
    events.push({
      event: 'content_block_start',
      data: { type: 'content_block_start', index, content_block: start },
    });
    if (block.type === 'text')
      events.push({
        event: 'content_block_delta',
        data: {
          type: 'content_block_delta',
          index,
          delta: { type: 'text_delta', text: block.text },
        },
      });
    if (block.type === 'server_tool_use' || block.type === 'tool_use')
      events.push({
        event: 'content_block_delta',
        data: {
          type: 'content_block_delta',
          index,
          delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) },
        },
      });
    events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
  });
  events.push(
    {
      event: 'message_delta',
      data: {
        type: 'message_delta',
        delta: { stop_reason: stopReason, stop_sequence: null },
        usage: { output_tokens: usage.output },
      },
    },
    { event: 'message_stop', data: { type: 'message_stop' } },
  );
  return { headers: SSE_HEADERS, body: sseEvents(events) };
}

const search = (id: string, query: string): Block => ({
  type: 'server_tool_use',
  id,
  name: 'web_search',
  input: { query },
});
const searchResult = (id: string, url: string): Block => ({
  type: 'web_search_tool_result',
  tool_use_id: id,
  content: [
    {
      type: 'web_search_result',
      title: url,
      url,
      encrypted_content: `enc-${id}`,
      page_age: null,
    },
  ],
});
const text = (value: string): Block => ({ type: 'text', text: value });

const pausedBlocks = [
  text('Let me search.'),
  search('srvtoolu_01', 'node 24 release'),
  searchResult('srvtoolu_01', 'https://nodejs.org/en/blog'),
];
const morePausedBlocks = [
  search('srvtoolu_02', 'node 24 release date'),
  searchResult('srvtoolu_02', 'https://nodejs.org/en/about/previous-releases'),
];
const answer = text('Node 24 came out in May 2025.');
type SentMessages = { messages: Array<{ role: string; content: Block[] }> };
const hang: WireResponse = { headers: SSE_HEADERS, body: [], hangAfterChunks: 0 };

/**
 * A first process streams `pauses` paused responses and dies while its last continuation waits;
 * a second one resumes the run against a server that answers it.
 */
async function crashMidContinuation(pauses: Block[][]) {
  const first = await startWireServer([
    ...pauses.map((blocks) => response(blocks, 'pause_turn', { input: 100, output: 10 })),
    hang,
  ]);
  const journal = new CrashableRunJournal();
  const options = { model: 'claude-sonnet-4-6', hostedTools: [{ type: 'web_search' as const }] };
  const crashed = new Agent({
    ...options,
    provider: createAnthropicProvider({ apiKey: 'k', baseURL: first.url, maxRetries: 0 }),
    journal,
  });
  const run = crashed.run('When was Node 24 released?');
  // The last continuation is sent only once its paused turn is recorded (awaited, not polled
  // for a second: run104 under load 20 polled past it).
  await first.requestsReceived(pauses.length + 1);
  expect(first.requests).toHaveLength(pauses.length + 1);
  journal.crash();

  const second = await startWireServer([
    response([answer], 'end_turn', { input: 150, output: 20 }),
  ]);
  const resumed = new Agent({
    ...options,
    provider: createAnthropicProvider({ apiKey: 'k', baseURL: second.url, maxRetries: 0 }),
    journal: journal.inner,
  });
  const result = await resumed.run(undefined, { runId: run.runId }).result;
  return { first, second, result };
}

describe('a paused turn in a journaled run, the process dead mid-continuation', () => {
  it.each([
    ['one pause', [pausedBlocks]],
    ['two pauses', [pausedBlocks, morePausedBlocks]],
  ])(
    '%s: resumed from the recorded pause, not asked again from the start (before: whole turn repeated)',
    async (_label, pauses) => {
      const { first, second, result } = await crashMidContinuation(pauses);
      expect(result.stopReason).toBe('completed');
      // The resumed run sent one request: the paused turn back as the last message.
      expect(second.requests).toHaveLength(1);
      const sent = second.requests[0]?.json as SentMessages;
      expect(sent.messages).toEqual([
        { role: 'user', content: [{ type: 'text', text: 'When was Node 24 released?' }] },
        { role: 'assistant', content: pauses.flat() },
      ]);
      // One assistant message: what the paused responses streamed, then the answer; usage of all.
      const final = result.finalMessage as AssistantMessage;
      expect(final.content).toEqual([
        ...pauses
          .flat()
          .map((block) =>
            block.type === 'text'
              ? { type: 'text', text: block.text }
              : { type: 'opaque', provider: 'anthropic', data: block },
          ),
        { type: 'text', text: answer.text },
      ]);
      expect(final.usage).toMatchObject({
        input: 100 * pauses.length + 150,
        output: 10 * pauses.length + 20,
      });
      expect(first.requests).toHaveLength(pauses.length + 1);
    },
  );
});
