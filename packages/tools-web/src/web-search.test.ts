import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, executeTool, PermissionPolicy } from '@agent/core';
import { createScriptedProvider } from '@agent/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { fencedText } from './test-helpers.js';
import { createWebSearchTool, onDomain, webSearchBackendFromEnv } from './web-search.js';

interface Seen {
  method: string;
  url: URL;
  headers: http.IncomingHttpHeaders;
  body: string;
}

const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((r) => server.close(r))));
});

/** A local server answering like a search API; records each request. */
async function api(
  answer: (seen: Seen) => { status?: number; body: unknown },
): Promise<{ origin: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      const entry = {
        method: request.method ?? '',
        url: new URL(request.url ?? '/', 'http://localhost'),
        headers: request.headers,
        body,
      };
      seen.push(entry);
      const { status = 200, body: out } = answer(entry);
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(typeof out === 'string' ? out : JSON.stringify(out));
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

async function run(tool: ReturnType<typeof createWebSearchTool>, args: Record<string, unknown>) {
  const result = await executeTool(tool, args);
  const text = result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
  return { text, isError: result.isError === true, details: result.details };
}

// Response bodies in each API's documented shape (fields we do not read included).
const braveBody = {
  type: 'search',
  query: { original: 'node streams' },
  web: {
    type: 'search',
    results: [
      {
        title: 'Stream | Node.js Documentation',
        url: 'https://nodejs.org/api/stream.html',
        description:
          'A <strong>stream</strong> is an abstract interface for working with streaming data.',
        page_age: '2026-10-01T00:00:00',
        age: 'October 1, 2026',
        meta_url: { hostname: 'nodejs.org' },
      },
      {
        title: 'Node streams explained',
        url: 'https://blog.example.com/streams',
        description: 'A tutorial.',
        age: '3 days ago',
      },
      { title: 'Broken entry without a URL' },
    ],
  },
};

describe('web_search backends (local servers speaking each API)', () => {
  it('Brave: GET /res/v1/web/search with the subscription token; description and age mapped', async () => {
    const brave = await api(() => ({ body: braveBody }));
    const tool = createWebSearchTool({
      backend: { type: 'brave', apiKey: 'BSA-key', baseUrl: brave.origin },
    });
    const result = await run(tool, { query: 'node streams', max_results: 5 });
    const request = brave.seen[0];
    expect(request?.method).toBe('GET');
    expect(request?.url.pathname).toBe('/res/v1/web/search');
    expect(request?.url.searchParams.get('q')).toBe('node streams');
    expect(request?.url.searchParams.get('count')).toBe('5');
    expect(request?.headers['x-subscription-token']).toBe('BSA-key');
    expect(fencedText(result.text)).toBe(
      [
        '1. Stream | Node.js Documentation',
        '   https://nodejs.org/api/stream.html',
        '   A stream is an abstract interface for working with streaming data.',
        '   (2026-10-01T00:00:00)',
        '2. Node streams explained',
        '   https://blog.example.com/streams',
        '   A tutorial.',
        '   (3 days ago)',
      ].join('\n'),
    );
  });

  it('Tavily: POST /search with a Bearer key and domain lists in the body; content is the snippet', async () => {
    const tavily = await api(() => ({
      body: {
        query: 'zod v4',
        answer: null,
        results: [
          {
            title: 'Zod 4',
            url: 'https://zod.dev/v4',
            content: 'Zod 4 is now stable.',
            score: 0.9,
            raw_content: null,
            published_date: '2025-07-10',
          },
        ],
        response_time: 0.5,
      },
    }));
    const tool = createWebSearchTool({
      backend: { type: 'tavily', apiKey: 'tvly-key', baseUrl: tavily.origin },
      blockedDomains: ['spam.example'],
    });
    const result = await run(tool, { query: 'zod v4', domains: ['zod.dev'] });
    const request = tavily.seen[0];
    expect(request?.method).toBe('POST');
    expect(request?.url.pathname).toBe('/search');
    expect(request?.headers.authorization).toBe('Bearer tvly-key');
    expect(JSON.parse(request?.body ?? '{}')).toEqual({
      query: 'zod v4',
      max_results: 8,
      include_domains: ['zod.dev'],
      exclude_domains: ['spam.example'],
    });
    expect(fencedText(result.text)).toBe(
      '1. Zod 4\n   https://zod.dev/v4\n   Zod 4 is now stable.\n   (2025-07-10)',
    );
  });

  it('SearXNG: GET <base>/search?format=json; results cut to the count; publishedDate mapped', async () => {
    const searx = await api(() => ({
      body: {
        query: 'rust',
        number_of_results: 0,
        results: Array.from({ length: 15 }, (_, i) => ({
          url: `https://site${i}.example/rust`,
          title: `Rust ${i}`,
          content: `About Rust ${i}`,
          engine: 'duckduckgo',
          ...(i === 0 ? { publishedDate: '2026-01-02T00:00:00' } : {}),
        })),
        answers: [],
        suggestions: [],
      },
    }));
    const tool = createWebSearchTool({
      backend: { type: 'searxng', baseUrl: `${searx.origin}/searx` },
    });
    const result = await run(tool, { query: 'rust', max_results: 3 });
    expect(searx.seen[0]?.url.pathname).toBe('/searx/search');
    expect(searx.seen[0]?.url.searchParams.get('format')).toBe('json');
    expect(result.text.split('\n').filter((line) => /^\d+\./.test(line))).toEqual([
      '1. Rust 0',
      '2. Rust 1',
      '3. Rust 2',
    ]);
    expect(result.text).toContain('(2026-01-02T00:00:00)');
    expect((result.details as { results: unknown[] }).results).toHaveLength(3);
  });
});

describe('web_search domain lists', () => {
  it('allowed and blocked domains filter every backend, subdomains included; a call can only narrow', async () => {
    const brave = await api(() => ({
      body: {
        web: {
          results: [
            { title: 'a', url: 'https://docs.python.org/3/', description: '' },
            { title: 'b', url: 'https://www.python.org/', description: '' },
            { title: 'c', url: 'https://pythonfake.org/', description: '' },
            { title: 'd', url: 'https://ads.python.org/', description: '' },
          ],
        },
      },
    }));
    const tool = createWebSearchTool({
      backend: { type: 'brave', apiKey: 'k', baseUrl: brave.origin },
      allowedDomains: ['python.org'],
      blockedDomains: ['ads.python.org'],
    });
    const result = await run(tool, { query: 'python' });
    expect(result.text).toContain('https://docs.python.org/3/');
    expect(result.text).toContain('https://www.python.org/');
    expect(result.text).not.toContain('pythonfake.org');
    expect(result.text).not.toContain('ads.python.org');
    const widened = await run(tool, { query: 'python', domains: ['evil.example'] });
    expect(widened.isError).toBe(true);
    expect(widened.text).toContain(
      'none of the domains evil.example is allowed here (allowed: python.org)',
    );
    expect(onDomain('https://sub.docs.python.org/x', 'python.org')).toBe(true);
    expect(onDomain('not a url', 'python.org')).toBe(false);
  });

  it('says when there are no results, and when the domain lists dropped them', async () => {
    const searx = await api(() => ({
      body: { results: [{ url: 'https://x.example/', title: 'x' }] },
    }));
    const tool = createWebSearchTool({
      backend: { type: 'searxng', baseUrl: searx.origin },
      blockedDomains: ['x.example'],
    });
    expect((await run(tool, { query: 'x' })).text).toBe(
      'No results for "x" (1 dropped by the domain lists).',
    );
  });
});

describe('web_search failures are clear errors', () => {
  it.each([
    [
      401,
      { error: 'invalid key' },
      'The Brave search failed: the API key was refused ({"error":"invalid key"})',
    ],
    [429, '', 'The Brave search failed: rate-limited; try again later'],
    [500, 'boom', 'The Brave search failed: HTTP 500 (boom)'],
    [
      200,
      '<html>not json</html>',
      'The Brave search answered with something that is not JSON: <html>not json</html>',
    ],
  ])('HTTP %i', async (status, body, message) => {
    const brave = await api(() => ({ status, body }));
    const tool = createWebSearchTool({
      backend: { type: 'brave', apiKey: 'k', baseUrl: brave.origin },
    });
    const result = await run(tool, { query: 'q' });
    expect(result.isError).toBe(true);
    expect(result.text).toBe(message);
  });

  it('an unreachable API, an empty query and a timeout', async () => {
    const closed = await api(() => ({ body: {} }));
    await new Promise((r) => servers.pop()?.close(r));
    const tool = createWebSearchTool({
      backend: { type: 'tavily', apiKey: 'k', baseUrl: closed.origin },
    });
    const unreachable = await run(tool, { query: 'q' });
    expect(unreachable.text).toMatch(
      /^The Tavily search API at http:\/\/127\.0\.0\.1:\d+ could not be reached \(ECONNREFUSED\)$/,
    );
    const empty = await run(tool, { query: '   ' });
    expect(empty.isError).toBe(true);
    expect(empty.text).toMatch(/Invalid arguments/);
    const hanging = http.createServer(() => undefined);
    servers.push(hanging);
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
    const slow = createWebSearchTool({
      backend: {
        type: 'searxng',
        baseUrl: `http://127.0.0.1:${(hanging.address() as AddressInfo).port}`,
      },
      timeoutMs: 200,
    });
    const timedOut = await run(slow, { query: 'q' });
    expect(timedOut.text).toBe('The SearXNG search did not answer within 200 ms');
    hanging.closeAllConnections();
  });
});

describe('web_search in the loop and the environment', () => {
  it('is full-access (the query leaves the machine); a rule on the query allows it', async () => {
    const searx = await api(() => ({
      body: { results: [{ url: 'https://a.example/', title: 'A', content: 'a' }] },
    }));
    const tool = createWebSearchTool({ backend: { type: 'searxng', baseUrl: searx.origin } });
    expect(tool.policy?.permission).toBe('full-access');
    const policy = new PermissionPolicy({
      mode: 'workspace-write',
      allow: ['web_search(weather *)'],
    });
    const provider = createScriptedProvider([
      {
        toolCalls: [
          { name: 'web_search', arguments: { query: 'weather paris' } },
          { name: 'web_search', arguments: { query: 'my password is hunter2' } },
        ],
      },
      { text: 'ok' },
    ]);
    const result = await new Agent({
      provider,
      model: 'm',
      tools: [tool],
      permissionGate: policy.gate,
    }).run('go').result;
    const results = result.messages.filter((m) => m.role === 'toolResult');
    expect(results[0]?.isError).not.toBe(true);
    expect(results[1]?.isError).toBe(true);
    expect(searx.seen).toHaveLength(1);
  });

  it('picks the backend from the usual environment variables', () => {
    expect(webSearchBackendFromEnv({})).toBeUndefined();
    expect(webSearchBackendFromEnv({ TAVILY_API_KEY: 't', SEARXNG_URL: 'http://s' })).toEqual({
      type: 'tavily',
      apiKey: 't',
    });
    expect(webSearchBackendFromEnv({ BRAVE_SEARCH_API_KEY: 'b' })).toEqual({
      type: 'brave',
      apiKey: 'b',
    });
    expect(webSearchBackendFromEnv({ SEARXNG_URL: 'http://s' })).toEqual({
      type: 'searxng',
      baseUrl: 'http://s',
    });
  });
});

describe('the API key stays with the search API', () => {
  // fetch's own redirect following drops Authorization on a hop to another origin, but keeps
  // Brave's X-Subscription-Token and any other header: the key went to whatever host was named.
  it.each([301, 302, 303, 307, 308])(
    'a %i to another origin is not followed; nothing reaches it',
    async (status) => {
      const elsewhere = await api(() => ({ body: braveBody }));
      const server = http.createServer((_request, response) => {
        response.writeHead(status, { location: `${elsewhere.origin}/res/v1/web/search?q=x` }).end();
      });
      servers.push(server);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      for (const backend of [
        { type: 'brave', apiKey: 'BSA-secret-key', baseUrl: origin },
        { type: 'tavily', apiKey: 'tvly-secret-key', baseUrl: origin },
        { type: 'searxng', apiKey: 'searx-secret-key', baseUrl: origin },
      ] as const) {
        const result = await run(createWebSearchTool({ backend }), { query: 'node streams' });
        expect(result.isError).toBe(true);
        expect(result.text).toContain(`redirected to ${elsewhere.origin}, which is not followed`);
      }
      expect(elsewhere.seen).toEqual([]);
    },
  );

  it('a redirect within the API origin is followed with the key', async () => {
    const tokens: (string | undefined)[] = [];
    const server = http.createServer((request, response) => {
      tokens.push(request.headers['x-subscription-token'] as string | undefined);
      if (request.url?.startsWith('/v2/') !== true)
        response.writeHead(307, { location: `/v2${request.url ?? '/'}` }).end();
      else
        response
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify(braveBody));
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const tool = createWebSearchTool({
      backend: { type: 'brave', apiKey: 'BSA-key', baseUrl: origin },
    });
    const result = await run(tool, { query: 'node streams' });
    expect(result.isError, result.text).toBe(false);
    expect(tokens).toEqual(['BSA-key', 'BSA-key']);
  });
});
