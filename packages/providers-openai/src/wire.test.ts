// The wire cases every provider shares (tooling/wire-server's provider suite), against both
// OpenAI APIs: silence, a 200 that is not a stream, odd usage, a key a header refuses.
import { type RecordedRequest, sseEvents } from '@agent/tooling-wire-server';
import {
  type CallsEnding,
  describeProviderWire,
  type ReplayedTurn,
  type StreamedCall,
  type UsageCase,
} from '@agent/tooling-wire-server/provider-suite';
import { compatPresets } from './compat.js';
import { createOpenAIProvider } from './openai-provider.js';
import { errorResponse, fixtureResponse, openaiAt } from './test-helpers.js';

type Options = { interleave: boolean; ending: CallsEnding };

/** The argument pieces in the order they are sent: call by call, or all calls taken in turn. */
function pieceOrder(calls: StreamedCall[], interleave: boolean): Array<[number, string]> {
  if (!interleave)
    return calls.flatMap((call, index) =>
      call.pieces.map((piece): [number, string] => [index, piece]),
    );
  const order: Array<[number, string]> = [];
  const rounds = Math.max(...calls.map((call) => call.pieces.length));
  for (let round = 0; round < rounds; round++)
    calls.forEach((call, index) => {
      const piece = call.pieces[round];
      if (piece !== undefined) order.push([index, piece]);
    });
  return order;
}

/** Chat Completions chunks: `delta.tool_calls` by index (id and name first, then the pieces). */
function chatToolCalls(calls: StreamedCall[], options: Options): string[] {
  const chunk = (delta: unknown, finish: string | null = null) => ({
    data: {
      id: 'chatcmpl-calls',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'gpt-4o',
      choices: [{ index: 0, delta, finish_reason: finish }],
    },
  });
  const starts = calls.map((call, index) =>
    chunk({
      tool_calls: [
        { index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } },
      ],
    }),
  );
  const pieces = pieceOrder(calls, options.interleave).map(([index, piece]) =>
    chunk({ tool_calls: [{ index, function: { arguments: piece } }] }),
  );
  const events: Array<{ data: unknown }> = [
    chunk({ role: 'assistant', content: null }),
    ...starts,
    ...pieces,
  ];
  if (options.ending !== 'cut')
    events.push(chunk({}, options.ending === 'refused' ? 'content_filter' : 'tool_calls'), {
      data: '[DONE]',
    });
  return sseEvents(events);
}

/** Responses API events: a function_call item per call, argument deltas, the item's end. */
function responsesToolCalls(calls: StreamedCall[], options: Options): string[] {
  const event = (data: { type: string } & Record<string, unknown>) => ({ event: data.type, data });
  const item = (call: StreamedCall, index: number, done: boolean) => ({
    id: `fc_${index}`,
    type: 'function_call',
    status: done ? 'completed' : 'in_progress',
    call_id: call.id,
    name: call.name,
    arguments: done ? call.pieces.join('') : '',
  });
  const response = (status: string, output: unknown[], extra: Record<string, unknown> = {}) => ({
    id: 'resp_calls',
    object: 'response',
    created_at: 1,
    status,
    model: 'gpt-4o',
    output,
    usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 },
    ...extra,
  });
  const events = [event({ type: 'response.created', response: response('in_progress', []) })];
  for (const [index, call] of calls.entries())
    events.push(
      event({
        type: 'response.output_item.added',
        output_index: index,
        item: item(call, index, false),
      }),
    );
  for (const [index, delta] of pieceOrder(calls, options.interleave))
    events.push(
      event({
        type: 'response.function_call_arguments.delta',
        item_id: `fc_${index}`,
        output_index: index,
        delta,
      }),
    );
  if (options.ending === 'cut') return sseEvents(events);
  const finished = options.ending === 'complete' ? calls : calls.slice(0, -1);
  for (const [index, call] of finished.entries())
    events.push(
      event({
        type: 'response.function_call_arguments.done',
        item_id: `fc_${index}`,
        output_index: index,
        arguments: call.pieces.join(''),
      }),
      event({
        type: 'response.output_item.done',
        output_index: index,
        item: item(call, index, true),
      }),
    );
  const output = finished.map((call, index) => item(call, index, true));
  events.push(
    options.ending === 'refused'
      ? event({
          type: 'response.incomplete',
          response: response('incomplete', output, {
            incomplete_details: { reason: 'content_filter' },
          }),
        })
      : event({ type: 'response.completed', response: response('completed', output) }),
  );
  return sseEvents(events);
}

/** Adds to the last turn when it has `role`, else starts one. */
function turnOf(turns: ReplayedTurn[], role: ReplayedTurn['role']): ReplayedTurn {
  const last = turns.at(-1);
  if (last?.role === role && (role === 'assistant' || last.results.length > 0)) return last;
  const turn: ReplayedTurn = { role, calls: [], results: [] };
  turns.push(turn);
  return turn;
}

/** Chat messages: an assistant's tool_calls; the tool messages after it are one turn of results. */
function chatTurns(body: unknown): ReplayedTurn[] {
  const { messages } = body as {
    messages: Array<{
      role: string;
      tool_call_id?: string;
      tool_calls?: Array<{ id: string; function: { name: string } }>;
    }>;
  };
  const turns: ReplayedTurn[] = [];
  for (const message of messages) {
    if (message.role === 'assistant') {
      const turn: ReplayedTurn = { role: 'assistant', calls: [], results: [] };
      for (const call of message.tool_calls ?? [])
        turn.calls.push({ id: call.id, name: call.function.name });
      turns.push(turn);
    } else if (message.role === 'tool') {
      const last = turns.at(-1);
      const turn =
        last?.role === 'user' && last.results.length > 0
          ? last
          : { role: 'user' as const, calls: [], results: [] };
      if (turn !== last) turns.push(turn);
      turn.results.push(message.tool_call_id ?? '');
    } else if (message.role === 'user') turns.push({ role: 'user', calls: [], results: [] });
  }
  return turns;
}

/** Responses input items: function_call items, and the function_call_output items answering them. */
function responsesTurns(body: unknown): ReplayedTurn[] {
  const { input } = body as {
    input: Array<{ type?: string; role?: string; call_id?: string; name?: string }>;
  };
  const turns: ReplayedTurn[] = [];
  for (const item of input) {
    if (item.type === 'function_call')
      turnOf(turns, 'assistant').calls.push({ id: item.call_id ?? '', name: item.name ?? '' });
    else if (item.type === 'function_call_output') {
      const last = turns.at(-1);
      const turn =
        last?.role === 'user' && last.results.length > 0
          ? last
          : { role: 'user' as const, calls: [], results: [] };
      if (turn !== last) turns.push(turn);
      turn.results.push(item.call_id ?? '');
    } else if (item.role === 'assistant' || item.type === 'reasoning') turnOf(turns, 'assistant');
    else if (item.role === 'user') turns.push({ role: 'user', calls: [], results: [] });
  }
  return turns;
}

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
    httpError: (status, message, headers) => errorResponse(status, message, headers),
    errorChunk: (kind, message) =>
      api === 'chat'
        ? `data: ${JSON.stringify({ error: { message, code: kind === 'overloaded' ? 529 : 400 } })}\n\n`
        : `event: error\ndata: ${JSON.stringify({ type: 'error', code: kind === 'overloaded' ? 'server_error' : 'invalid_prompt', message, param: null, sequence_number: 9 })}\n\n`,
    toolCalls: api === 'chat' ? chatToolCalls : responsesToolCalls,
    replayedTurns: api === 'chat' ? chatTurns : responsesTurns,
    streamsArguments: true,
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
