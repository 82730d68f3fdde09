// One clear line per error class, the same for every provider: what the CLI prints for an HTTP
// error names the provider and the status once, then what the server said (the provider's own
// framing — "OpenAI API error 404:", a status the SDK put before the body — is not repeated).

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Provider, ProviderError } from '@agent/core';
import { createAnthropicProvider } from '@agent/providers-anthropic';
import { createGeminiProvider } from '@agent/providers-google';
import { createOpenAIProvider } from '@agent/providers-openai';
import { afterEach, describe, expect, it } from 'vitest';
import { describeFailure } from './failure-line.js';

interface WireResponse {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}
const JSON_HEADERS = { 'content-type': 'application/json' };
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))),
  );
});

/** A real local server giving every request `answer` (the CLI package has no wire-server). */
async function startWireServer(answer: WireResponse): Promise<{ url: string }> {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      response.writeHead(answer.status, answer.headers);
      response.end(answer.body);
    });
  });
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

const providers: [string, (url: string) => Provider][] = [
  [
    'openai',
    (url) =>
      createOpenAIProvider({
        id: 'openai',
        baseURL: `${url}/v1`,
        apiKey: 'k',
        maxRetries: 0,
        env: {},
      }),
  ],
  [
    'openai-compatible',
    (url) =>
      createOpenAIProvider({
        id: 'openai-compatible',
        baseURL: `${url}/v1`,
        apiKey: 'k',
        maxRetries: 0,
        env: {},
      }),
  ],
  ['anthropic', (url) => createAnthropicProvider({ apiKey: 'k', baseURL: url, maxRetries: 0 })],
  ['google', (url) => createGeminiProvider({ apiKey: 'k', baseURL: url, maxRetries: 0 })],
];

/** Error answers of each class, and what the line must say of it. */
const answers: [string, WireResponse, string][] = [
  ['a 404 without a body', { status: 404 }, 'no body'],
  [
    "a 404 in plain text (Ollama's without /v1)",
    { status: 404, headers: { 'content-type': 'text/plain' }, body: '404 page not found' },
    '404 page not found',
  ],
  [
    'a 400 with the vendor JSON error',
    {
      status: 400,
      headers: JSON_HEADERS,
      body: JSON.stringify({
        type: 'error',
        error: { type: 'invalid_request_error', message: 'model: unknown model "m"', code: 400 },
      }),
    },
    'model: unknown model "m"',
  ],
  [
    "a gateway's HTML page",
    {
      status: 502,
      headers: { 'content-type': 'text/html' },
      body: '<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>',
    },
    'an HTML page titled "502 Bad Gateway"',
  ],
  [
    'a 503 with a JSON body that has no message',
    { status: 503, headers: JSON_HEADERS, body: '{"status":"down"}' },
    '{"status":"down"}',
  ],
];

async function failureOf(provider: Provider): Promise<ProviderError> {
  for await (const event of provider.stream({
    model: 'm',
    messages: [{ role: 'user', content: 'hi', timestamp: 0 }],
  }))
    if (event.type === 'error') return event.error;
  throw new Error('the stream did not fail');
}

describe.each(providers)('%s: an HTTP error in one line', (id, create) => {
  it.each(answers)('%s', async (_name, answer, said) => {
    const server = await startWireServer(answer);
    const error = await failureOf(create(server.url));
    const line = describeFailure(error.message, error);
    const status = String(answer.status);
    expect(line.startsWith(`${id} HTTP ${status}: `), line).toBe(true);
    expect(line).toContain(said);
    // The status said once (a page's own title may name it too), the vendor's name once.
    // (A hint after " — " may name the kind of server.)
    const rest = (line.slice(`${id} HTTP ${status}: `.length).split(' — ')[0] ?? '').replace(
      said,
      '',
    );
    expect(rest, line).not.toMatch(new RegExp(`\\b${status}\\b`));
    expect(rest, line).not.toMatch(/API error|OpenAI|Anthropic|Gemini/);
    // The provider's own message stays whole for a library user: vendor, status, what was said.
    expect(error.message).toMatch(new RegExp(`API error ${status}\\b`));
    expect(error.message.match(new RegExp(`\\b${status}\\b`, 'g'))?.length).toBe(
      said.includes(status) ? 2 : 1,
    );
  });
});

/** A local port nothing listens on any more. */
async function closedPort(): Promise<string> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}`;
}

describe.each(providers)('%s: a refused connection in one line', (id, create) => {
  it('names the provider once, then what failed (before: the vendor named twice)', async () => {
    const error = await failureOf(create(await closedPort()));
    const line = describeFailure(error.message, error);
    expect(line.startsWith(`${id}: `), line).toBe(true);
    expect(line).toMatch(/ECONNREFUSED/);
    const rest = line.slice(`${id}: `.length).split(' — ')[0] ?? '';
    expect(rest, line).toMatch(/^connection (failed|lost)/);
    expect(rest, line).not.toMatch(/OpenAI|Anthropic|Gemini/);
    // The provider's own message still names its vendor for a library user.
    expect(error.message).toMatch(/^(OpenAI|Anthropic|Gemini)\b/);
  });
});
