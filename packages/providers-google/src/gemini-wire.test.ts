// The wire cases every provider shares (tooling/wire-server's provider suite), against Gemini's
// streamGenerateContent: silence, a 200 that is not a stream, odd usage, a key a header refuses.
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
import { createGeminiProvider } from './gemini-provider.js';

const fixture = fixtureReader(new URL('./__fixtures__/', import.meta.url));
const usageObject = /"usageMetadata":\{[^}]*\}/g;

function usageText(usage: UsageCase): string {
  if (usage === null) return '"usageMetadata":null';
  if (usage === 'empty') return '"usageMetadata":{}';
  return `"usageMetadata":${JSON.stringify({ promptTokenCount: usage.input, candidatesTokenCount: usage.output })}`;
}

/**
 * Function calls as Gemini streams them: each whole in a chunk of its own (a call cut half-way
 * cannot arrive, so a cut answer ends after the calls whose arguments are whole JSON).
 */
function toolCalls(calls: StreamedCall[], options: { ending: CallsEnding }): string[] {
  const whole = calls.flatMap((call) => {
    try {
      return [{ ...call, args: JSON.parse(call.pieces.join('')) as unknown }];
    } catch {
      return [];
    }
  });
  const chunk = (parts: unknown[], finishReason?: string) => ({
    data: {
      candidates: [
        { content: { parts, role: 'model' }, index: 0, ...(finishReason ? { finishReason } : {}) },
      ],
      usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
      modelVersion: 'gemini-2.5-flash',
    },
  });
  const events = whole.map((call) =>
    chunk([{ functionCall: { id: call.id, name: call.name, args: call.args } }]),
  );
  if (options.ending !== 'cut')
    events.push(chunk([], options.ending === 'refused' ? 'SAFETY' : 'STOP'));
  return sseEvents(events);
}

/** The turns of a generateContent request: functionCall parts, and the functionResponse parts. */
function replayedTurns(body: unknown): ReplayedTurn[] {
  type Named = { id?: string; name: string };
  const { contents } = body as {
    contents: Array<{
      role: string;
      parts: Array<{ functionCall?: Named; functionResponse?: Named }>;
    }>;
  };
  return contents.map(({ role, parts }) => ({
    role: role === 'model' ? 'assistant' : 'user',
    calls: parts.flatMap(({ functionCall: call }) =>
      call === undefined ? [] : [{ id: call.id ?? call.name, name: call.name }],
    ),
    results: parts.flatMap(({ functionResponse: response }) =>
      response === undefined ? [] : [response.id ?? response.name],
    ),
  }));
}

/** Google's status name for an HTTP status. */
const statusNames: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
};

describeProviderWire({
  httpError: (status, message, headers = {}) => ({
    status,
    headers: { ...JSON_HEADERS, ...headers },
    body: JSON.stringify({
      error: { code: status, message, status: statusNames[status] ?? 'UNKNOWN' },
    }),
  }),
  errorChunk: (kind, message) =>
    `data: ${JSON.stringify({ error: kind === 'overloaded' ? { code: 503, message, status: 'UNAVAILABLE' } : { code: 400, message, status: 'INVALID_ARGUMENT' } })}\n\n`,
  toolCalls,
  replayedTurns,
  streamsArguments: false,
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
