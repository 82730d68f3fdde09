// Usage as OpenAI-compatible servers send it when it is not quite the documented shape: fields
// left out, null, numbers as strings, negative or fractional counts. A string count was kept as
// it came ("19"), so the run's sums became string concatenations ("019").
import type { ProviderRequest } from '@agent/core';
import { closeWireServers, startWireServer, terminalEvent } from '@agent/tooling-wire-server';
import { afterEach, describe, expect, it } from 'vitest';
import { collect, fixtureResponse, openaiAt } from './test-helpers.js';

afterEach(closeWireServers);

const request: ProviderRequest = {
  model: 'gpt-4o',
  messages: [{ role: 'user', content: 'hi', timestamp: 0 }],
};
// A usage object, with the token-detail objects it may hold.
const usageObject = /"usage":\{("[a-z_]+":(-?[\d.]+|null|\{[^}]*\}),?)*\}/g;

describe.each([
  { api: 'chat', fixture: 'chat-final-text.sse', fields: ['prompt_tokens', 'completion_tokens'] },
  {
    api: 'responses',
    fixture: 'responses-final-text.sse',
    fields: ['input_tokens', 'output_tokens'],
  },
] as const)('$api usage fields that are missing or malformed', ({ api, fixture, fields }) => {
  const [input, output] = fields;
  it.each([
    ['every field left out', '"usage":{}'],
    ['counts null', `"usage":{"${input}":null,"${output}":null,"total_tokens":null}`],
    ['counts as strings', `"usage":{"${input}":"12","${output}":"6","total_tokens":"18"}`],
    ['negative counts', `"usage":{"${input}":-5,"${output}":-1,"total_tokens":-6}`],
    ['fractional counts', `"usage":{"${input}":12.5,"${output}":6.9}`],
    ['counts of another type', `"usage":{"${input}":true,"${output}":{"n":1},"total_tokens":[1]}`],
    [
      'more cached tokens than input',
      `"usage":{"${input}":10,"${output}":2,"${input.replace('tokens', 'tokens_details')}":{"cached_tokens":50}}`,
    ],
  ])('%s: the answer arrives, every count a whole number ≥ 0', async (_name, usage) => {
    const base = fixtureResponse(fixture);
    const body = (base.body as string[]).map((chunk) => chunk.replace(usageObject, usage));
    const server = await startWireServer([{ ...base, body }]);
    const end = terminalEvent(await collect(openaiAt(server.url, { api }).stream(request)), {
      requireLast: true,
    });
    expect(end.type).toBe('done');
    const { cost, ...counts } = end.message.usage;
    for (const count of Object.values(counts)) {
      expect(Number.isInteger(count)).toBe(true);
      expect(count).toBeGreaterThanOrEqual(0);
    }
    for (const amount of Object.values(cost ?? {})) expect(Number.isFinite(amount)).toBe(true);
  });

  it('counts as strings are read as numbers', async () => {
    const base = fixtureResponse(fixture);
    const body = (base.body as string[]).map((chunk) =>
      chunk.replace(usageObject, `"usage":{"${input}":"12","${output}":"6","total_tokens":"18"}`),
    );
    const server = await startWireServer([{ ...base, body }]);
    const end = terminalEvent(await collect(openaiAt(server.url, { api }).stream(request)));
    expect(end.message.usage).toMatchObject({ input: 12, output: 6, totalTokens: 18 });
  });
});
