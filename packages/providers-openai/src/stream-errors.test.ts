// Errors an OpenAI-compatible server sends inside a Chat Completions stream, in the shapes they
// come in: an error chunk whose code is the HTTP status (OpenRouter, LiteLLM), vLLM's
// `{"object": "error"}` chunk, and `finish_reason: "error"`. Before: an overloaded 529 before any
// token was not retried, vLLM's error (a context overflow too) was "a malformed chunk", and a
// `finish_reason: "error"` fragment came out as a finished answer.
import type { ProviderRequest } from '@agent/core';
import {
  closeWireServers,
  readSseFixture,
  SSE_HEADERS,
  startWireServer,
  terminalEvent,
  type WireResponse,
} from '@agent/tooling-wire-server';
import { afterEach, describe, expect, it } from 'vitest';
import { collect, fixtureResponse, openaiAt } from './test-helpers.js';

afterEach(closeWireServers);

const request: ProviderRequest = {
  model: 'gpt-4o',
  messages: [{ role: 'user', content: 'hi', timestamp: 0 }],
};
const chunks = readSseFixture(new URL('./__fixtures__/chat-final-text.sse', import.meta.url));
// The role chunk, then "In Paris it is ".
const [roleChunk = '', firstText = ''] = chunks;
const data = (value: unknown) => `data: ${JSON.stringify(value)}\n\n`;
const streamOf = (...body: string[]): WireResponse => ({ headers: SSE_HEADERS, body });
const chunk = (choice: unknown) =>
  data({ id: 'x', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [choice] });

describe('an error chunk before any token', () => {
  it.each([
    ['an error whose code is 529', { error: { message: 'Overloaded', code: 529 } }],
    ['an error whose code is "503"', { error: { message: 'Unavailable', code: '503' } }],
    ['an overloaded_error type', { error: { message: 'Overloaded', type: 'overloaded_error' } }],
    [
      "vLLM's error object, code 503",
      { object: 'error', message: 'busy', type: 'ServiceUnavailableError', code: 503 },
    ],
    ["vLLM's error object, code 429", { object: 'error', message: 'slow down', code: 429 }],
  ])('%s: retried, and the retry answers', async (_name, error) => {
    const server = await startWireServer([
      streamOf(roleChunk, data(error)),
      fixtureResponse('chat-final-text.sse'),
    ]);
    const events = await collect(openaiAt(server.url, { api: 'chat' }).stream(request));
    expect(terminalEvent(events, { requireLast: true }).type).toBe('done');
    expect(server.requests).toHaveLength(2);
  });

  it.each([
    ['an error whose code is 400', { error: { message: 'Bad request', code: 400 } }],
    ["vLLM's error object, code 400", { object: 'error', message: 'bad', code: 400 }],
  ])('%s: not retried; the status and message are kept', async (_name, error) => {
    const server = await startWireServer([streamOf(roleChunk, data(error))]);
    const end = terminalEvent(await collect(openaiAt(server.url, { api: 'chat' }).stream(request)));
    if (end.type !== 'error') throw new Error('expected error');
    expect(end.error).toMatchObject({ statusCode: 400, isRetryable: false });
    expect(end.error.message).toMatch(/Bad request|bad/);
    expect(server.requests).toHaveLength(1);
  });
});

describe("vLLM's error chunk saying the context is too long", () => {
  it('is a context overflow with the server message, so the agent compacts', async () => {
    const message =
      "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.";
    const server = await startWireServer([
      streamOf(roleChunk, data({ object: 'error', message, type: 'BadRequestError', code: 400 })),
    ]);
    const end = terminalEvent(await collect(openaiAt(server.url, { api: 'chat' }).stream(request)));
    if (end.type !== 'error') throw new Error('expected error');
    expect(end.error).toMatchObject({ contextOverflow: true, statusCode: 400 });
    expect(end.error.message).toContain(message);
    expect(end.error.message).not.toMatch(/Malformed/);
  });
});

describe('finish_reason "error" mid-answer', () => {
  it.each([
    ['alone', chunk({ index: 0, delta: {}, finish_reason: 'error' })],
    ['with an empty delta', chunk({ index: 0, delta: { content: '' }, finish_reason: 'error' })],
  ])('%s: an error event keeping the fragment, not a finished answer', async (_name, last) => {
    const server = await startWireServer([streamOf(roleChunk, firstText, last)]);
    const events = await collect(openaiAt(server.url, { api: 'chat' }).stream(request));
    const end = terminalEvent(events, { requireLast: true });
    if (end.type !== 'error') throw new Error(`expected error, got ${end.type}`);
    expect(end.error.message).toMatch(/finish_reason "error"/);
    expect(end.message.content).toEqual([{ type: 'text', text: 'In Paris it is ' }]);
    expect(end.message.stopReason).toBe('error');
  });
});

describe('a chunk with neither choices, usage nor an error', () => {
  it.each([
    ['an empty object (a keep-alive)', '{}'],
    ['a metadata chunk', '{"id":"x","object":"chat.completion.chunk","created":1,"model":"m"}'],
    ['an event of a kind this client does not know', '{"type":"server.heartbeat","n":1}'],
  ])('%s is skipped: the answer arrives whole', async (_name, unknown) => {
    const server = await startWireServer([
      streamOf(
        roleChunk,
        `data: ${unknown}\n\n`,
        firstText,
        `data: ${unknown}\n\n`,
        ...chunks.slice(2),
      ),
    ]);
    const events = await collect(openaiAt(server.url, { api: 'chat' }).stream(request));
    const end = terminalEvent(events, { requireLast: true });
    expect(end.type).toBe('done');
    expect(end.message.content).toEqual([
      { type: 'text', text: 'In Paris it is 18°C and sunny; the local time is 14:05.' },
    ]);
  });
});
