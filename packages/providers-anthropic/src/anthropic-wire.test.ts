// The wire cases every provider shares (tooling/wire-server's provider suite), against the
// Messages API's stream: silence, a 200 that is not a stream, odd usage, a key a header refuses.
import {
  fixtureReader,
  JSON_HEADERS,
  type RecordedRequest,
  sseEvents,
} from '@agent/tooling-wire-server';
import {
  type CallsEnding,
  describeProviderWire,
  type ReplayedTurn,
  type StreamedCall,
  type UsageCase,
} from '@agent/tooling-wire-server/provider-suite';
import { createAnthropicProvider } from './anthropic-provider.js';

const fixture = fixtureReader(new URL('./__fixtures__/', import.meta.url));
const usageObject = /"usage":\{[^}]*\}/g;

function usageText(usage: UsageCase): string {
  if (usage === null) return '"usage":null';
  if (usage === 'empty') return '"usage":{}';
  return `"usage":${JSON.stringify({ input_tokens: usage.input, output_tokens: usage.output })}`;
}

/** `tool_use` blocks streamed as the Messages API does: start, input_json_delta pieces, stop. */
function toolCalls(
  calls: StreamedCall[],
  options: { interleave: boolean; ending: CallsEnding },
): string[] {
  const event = (data: { type: string } & Record<string, unknown>) => ({ event: data.type, data });
  const start = event({
    type: 'message_start',
    message: {
      id: 'msg_calls',
      type: 'message',
      role: 'assistant',
      content: [],
      model: 'claude-haiku-4-5',
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 1 },
    },
  });
  const begin = (call: StreamedCall, index: number) =>
    event({
      type: 'content_block_start',
      index,
      content_block: { type: 'tool_use', id: call.id, name: call.name, input: {} },
    });
  const piece = (index: number, partial: string) =>
    event({
      type: 'content_block_delta',
      index,
      delta: { type: 'input_json_delta', partial_json: partial },
    });
  const stop = (index: number) => event({ type: 'content_block_stop', index });
  const events = [start];
  if (options.interleave) {
    events.push(...calls.map(begin));
    const rounds = Math.max(...calls.map((call) => call.pieces.length));
    for (let round = 0; round < rounds; round++)
      calls.forEach((call, index) => {
        const partial = call.pieces[round];
        if (partial !== undefined) events.push(piece(index, partial));
      });
    if (options.ending !== 'cut') events.push(...calls.map((_call, index) => stop(index)));
  } else
    calls.forEach((call, index) => {
      events.push(begin(call, index), ...call.pieces.map((partial) => piece(index, partial)));
      // The last call of a cut or refused answer never stops.
      if (options.ending === 'complete' || index < calls.length - 1) events.push(stop(index));
    });
  if (options.ending !== 'cut')
    events.push(
      event({
        type: 'message_delta',
        delta: {
          stop_reason: options.ending === 'refused' ? 'refusal' : 'tool_use',
          stop_sequence: null,
        },
        usage: { output_tokens: 20 },
      }),
      event({ type: 'message_stop' }),
    );
  return sseEvents(events);
}

/** The turns of a Messages API request: tool_use blocks, and the tool_result blocks answering them. */
function replayedTurns(body: unknown): ReplayedTurn[] {
  const { messages } = body as {
    messages: Array<{ role: 'user' | 'assistant'; content: Array<Record<string, string>> }>;
  };
  return messages.map(({ role, content }) => ({
    role,
    calls: content
      .filter((block) => block.type === 'tool_use')
      .map((block) => ({ id: block.id ?? '', name: block.name ?? '' })),
    results: content
      .filter((block) => block.type === 'tool_result')
      .map((block) => block.tool_use_id ?? ''),
  }));
}

/** The Messages API's error type for an HTTP status. */
const errorTypes: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  404: 'not_found_error',
  429: 'rate_limit_error',
  529: 'overloaded_error',
};

describeProviderWire({
  httpError: (status, message, headers = {}) => ({
    status,
    headers: { ...JSON_HEADERS, ...headers },
    body: JSON.stringify({
      type: 'error',
      error: { type: errorTypes[status] ?? 'api_error', message },
    }),
  }),
  errorChunk: (kind, message) =>
    `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: kind === 'overloaded' ? 'overloaded_error' : 'invalid_request_error', message } })}\n\n`,
  toolCalls,
  replayedTurns,
  streamsArguments: true,
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
