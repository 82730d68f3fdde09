import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, ToolRegistry } from '@agent/core';
import { createScriptedProvider } from '@agent/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { fencedText } from './test-helpers.js';
import { createWebFetchTool } from './web-fetch.js';
import { createWebSearchTool } from './web-search.js';

// Other agents' names and argument shapes (claw-code's tool table, Claude Code's inputs), called
// through an agent loop exactly as their models send them.

const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((r) => server.close(r))));
});

async function serve(
  handler: (url: URL, body: string) => { type: string; body: string },
): Promise<{ origin: string; seen: { url: URL; body: string }[] }> {
  const seen: { url: URL; body: string }[] = [];
  const server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      const url = new URL(request.url ?? '/', 'http://localhost');
      seen.push({ url, body });
      const answer = handler(url, body);
      response.writeHead(200, { 'content-type': answer.type });
      response.end(answer.body);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

async function runCalls(
  tools: ConstructorParameters<typeof ToolRegistry>[0],
  calls: { name: string; arguments: Record<string, unknown> }[],
) {
  const agent = new Agent({
    provider: createScriptedProvider([{ toolCalls: calls }, { text: 'done' }]),
    model: 'm',
    tools: [...(tools ?? [])],
  });
  await agent.run('go').result;
  return agent.messages.filter((message) => message.role === 'toolResult');
}

const text = (message: { content: { type: string; text?: string }[] } | undefined) =>
  (message?.content ?? []).map((part) => part.text ?? `[${part.type}]`).join('\n');

describe('WebFetch (claw-code, Claude Code): {url, prompt}', () => {
  it('fetches the page; the prompt is for the calling model, not sent anywhere', async () => {
    const site = await serve(() => ({
      type: 'text/html',
      body: '<html><head><title>Ignored</title></head><body><h1>Test Page</h1><p>Hello <b>world</b> from local server.</p></body></html>',
    }));
    const [result] = await runCalls(
      [createWebFetchTool({ allowPrivateNetwork: true })],
      [
        {
          name: 'WebFetch',
          arguments: { url: `${site.origin}/page`, prompt: 'Summarize this page' },
        },
      ],
    );
    expect(result).toMatchObject({ toolName: 'web_fetch', isError: false });
    expect(text(result)).toContain('Test Page');
    expect(text(result)).toContain('Hello **world** from local server.');
    expect(site.seen.map((request) => request.url.pathname)).toEqual(['/page']);
    expect(site.seen[0]?.url.search).toBe('');
  });

  it('reports claw-code’s invalid-URL example as a readable error', async () => {
    const [result] = await runCalls(
      [createWebFetchTool()],
      [{ name: 'WebFetch', arguments: { url: 'not a url', prompt: 'Summarize' } }],
    );
    expect(result?.isError).toBe(true);
    expect(text(result)).toMatch(/url|URL/);
  });
});

describe('WebSearch (claw-code, Claude Code): {query, allowed_domains, blocked_domains}', () => {
  it('runs claw-code’s example: domains normalised, passed to the backend, and enforced', async () => {
    const tavily = await serve(() => ({
      type: 'application/json',
      body: JSON.stringify({
        results: [
          { url: 'https://docs.rs/reqwest', title: 'reqwest - Rust', content: 'HTTP client' },
          { url: 'https://example.com/blocked', title: 'Blocked', content: 'no' },
          { url: 'https://sub.example.com/x', title: 'Blocked too', content: 'no' },
          { url: 'https://other.test/y', title: 'Not allowed', content: 'no' },
        ],
      }),
    }));
    const [result] = await runCalls(
      [createWebSearchTool({ backend: { type: 'tavily', apiKey: 'k', baseUrl: tavily.origin } })],
      [
        {
          name: 'WebSearch',
          arguments: {
            query: 'rust web search',
            allowed_domains: ['https://DOCS.rs/'],
            blocked_domains: ['HTTPS://EXAMPLE.COM'],
          },
        },
      ],
    );
    expect(result).toMatchObject({ toolName: 'web_search', isError: false });
    expect(fencedText(text(result))).toBe(
      '1. reqwest - Rust\n   https://docs.rs/reqwest\n   HTTP client',
    );
    expect(JSON.parse(tavily.seen[0]?.body ?? '{}')).toMatchObject({
      query: 'rust web search',
      include_domains: ['docs.rs'],
      exclude_domains: ['example.com'],
    });
  });

  it('a call’s blocked_domains add to the configured ones and never lift them', async () => {
    const searx = await serve(() => ({
      type: 'application/json',
      body: JSON.stringify({
        results: [
          { url: 'https://kept.test/a', title: 'Kept', content: '' },
          { url: 'https://spam.test/b', title: 'Spam', content: '' },
          { url: 'https://noise.test/c', title: 'Noise', content: '' },
        ],
      }),
    }));
    const [result] = await runCalls(
      [
        createWebSearchTool({
          backend: { type: 'searxng', baseUrl: searx.origin },
          blockedDomains: ['spam.test'],
        }),
      ],
      [{ name: 'WebSearch', arguments: { query: 'things', blocked_domains: ['noise.test'] } }],
    );
    expect(fencedText(text(result))).toBe('1. Kept\n   https://kept.test/a');
  });

  it('our own argument names win over theirs', async () => {
    const search = createWebSearchTool({ backend: { type: 'searxng', baseUrl: 'http://x' } });
    expect(
      search.prepareArguments?.({ query: 'q', domains: ['a.test'], allowed_domains: ['b.test'] }),
    ).toEqual({ query: 'q', domains: ['a.test'], allowed_domains: ['b.test'] });
    expect(new ToolRegistry([search, createWebFetchTool()]).get('WebSearch')?.name).toBe(
      'web_search',
    );
  });
});
