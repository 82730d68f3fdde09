import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from '@agent/core';
import { createScriptedProvider } from '@agent/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { fencedText } from './test-helpers.js';
import { createWebFetchTool } from './web-fetch.js';
import { createWebSearchTool } from './web-search.js';

// Kiro's web_fetch {url, mode?, search_terms?} and web_search {query}, through an agent loop
// against a real local server.

const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((r) => server.close(r))));
});

async function serve(type: string, body: string): Promise<{ origin: string; bodies: string[] }> {
  const bodies: string[] = [];
  const server = http.createServer((request, response) => {
    let received = '';
    request.on('data', (chunk) => {
      received += chunk;
    });
    request.on('end', () => {
      bodies.push(received);
      response.writeHead(200, { 'content-type': type });
      response.end(body);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bodies };
}

async function call(
  tool: ReturnType<typeof createWebFetchTool> | ReturnType<typeof createWebSearchTool>,
  name: string,
  args: Record<string, unknown>,
) {
  const agent = new Agent({
    provider: createScriptedProvider([
      { toolCalls: [{ name, arguments: args }] },
      { text: 'done' },
    ]),
    model: 'm',
    tools: [tool],
  });
  await agent.run('go').result;
  const result = agent.messages.find((message) => message.role === 'toolResult');
  if (result?.role !== 'toolResult') throw new Error('no result');
  return {
    isError: result.isError,
    text: result.content.map((part) => (part.type === 'text' ? part.text : '')).join(''),
  };
}

/** A plain-text page of 200 numbered lines; line 120 mentions pricing, line 150 installation. */
const page = Array.from({ length: 200 }, (_, index) =>
  index === 119
    ? 'line 120: Pricing starts at 5 EUR'
    : index === 149
      ? 'line 150: Installation: run the installer'
      : `line ${index + 1}: filler text`,
).join('\n');

describe('web_fetch (Kiro): {url, mode?, search_terms?}', () => {
  it('selective with search_terms: the lines around each match, merged, from the whole page', async () => {
    const site = await serve('text/plain', page);
    const tool = createWebFetchTool({ allowPrivateNetwork: true });
    const out = await call(tool, 'web_fetch', {
      url: `${site.origin}/docs`,
      mode: 'selective',
      search_terms: 'pricing installation',
    });
    expect(out.isError).toBe(false);
    expect(out.text).toContain('Selected: the lines around "pricing", "installation"');
    expect(out.text).toContain('line 110: filler text');
    expect(out.text).toContain('line 120: Pricing starts at 5 EUR');
    // 120+10 and 150-10 are 20 lines apart: two blocks.
    expect(out.text).toContain('line 130: filler text\n\n[…]\n\nline 140: filler text');
    expect(out.text).toContain('line 160: filler text');
    expect(out.text).not.toContain('line 109:');
    expect(out.text).not.toContain('line 161:');
  });

  it('selective without terms (Kiro’s default), truncated and full', async () => {
    const long = `${'x'.repeat(60_000)}\nend`;
    const site = await serve('text/plain', long);
    const tool = createWebFetchTool({ allowPrivateNetwork: true });
    const truncated = await call(tool, 'web_fetch', { url: `${site.origin}/a`, mode: 'truncated' });
    expect(truncated.text).toContain('[Characters 0-8000 of 60004; use offset 8000 to continue]');
    const full = await call(tool, 'web_fetch', { url: `${site.origin}/a`, mode: 'full' });
    expect(full.text).toMatch(/\nend\n----- END UNTRUSTED WEB CONTENT [0-9a-f]{12} -----$/);
    const plain = await call(tool, 'web_fetch', { url: `${site.origin}/a` });
    expect(plain.text).toContain('[Characters 0-50000 of 60004');
    const noTerms = await call(tool, 'web_fetch', { url: `${site.origin}/a`, mode: 'selective' });
    expect(noTerms.text).toContain('[Characters 0-50000 of 60004');
    const missing = await call(tool, 'web_fetch', {
      url: `${site.origin}/a`,
      search_terms: 'pricing',
    });
    expect(missing.text).toContain('None of "pricing" appears on the page.');
  });

  it.each([
    [{ mode: 'everything' }, /expected one of "selective", "truncated", "full"/],
    [{ search_terms: ['a', 'b'] }, /search_terms: expected a string|expected a string of keywords/],
    [{ mode: 'full', nonsense: 1 }, /unknown field "nonsense"/],
  ])('refuses %j', async (extra, message) => {
    const site = await serve('text/plain', page);
    const tool = createWebFetchTool({ allowPrivateNetwork: true });
    const out = await call(tool, 'web_fetch', { url: `${site.origin}/a`, ...extra });
    expect(out.isError).toBe(true);
    expect(out.text).toMatch(message);
  });
});

describe('web_search (Kiro): {query}', () => {
  it('is our own shape', async () => {
    const searx = await serve(
      'application/json',
      JSON.stringify({
        results: [{ url: 'https://docs.rs/tokio', title: 'tokio', content: 'async runtime' }],
      }),
    );
    const tool = createWebSearchTool({ backend: { type: 'searxng', baseUrl: searx.origin } });
    const out = await call(tool, 'web_search', { query: 'tokio latest version' });
    expect({ ...out, text: fencedText(out.text) }).toEqual({
      isError: false,
      text: '1. tokio\n   https://docs.rs/tokio\n   async runtime',
    });
  });
});
