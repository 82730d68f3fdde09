import { type DefinedTool, defineTool, renameArguments, ToolError } from '@agent/core';
import * as z from 'zod';
import { foreignLoopbackServer } from './loopback-owner.js';
import { fenced, oneLine, untrustedNote } from './untrusted-text.js';

/** One search result, the same shape whichever backend found it. */
export interface WebSearchResult {
  title: string;
  url: string;
  snippet: string;
  /** Publication date or age as the backend gives it (`2026-11-02`, `3 days ago`), when it does. */
  date?: string;
}

/** A search API behind the tool. */
export type WebSearchBackend =
  | { type: 'brave'; apiKey: string; baseUrl?: string }
  | { type: 'tavily'; apiKey: string; baseUrl?: string }
  | { type: 'searxng'; baseUrl: string; apiKey?: string };

/** Options of {@link createWebSearchTool}. */
export interface WebSearchToolOptions {
  backend: WebSearchBackend;
  /** Only results on these domains (and their subdomains). */
  allowedDomains?: readonly string[];
  /** Never results on these domains (and their subdomains). */
  blockedDomains?: readonly string[];
  /** Results per search unless the call asks for fewer or more [8]; at most 20. */
  defaultResults?: number;
  /** Time limit of one search request [20 s]. */
  timeoutMs?: number;
  /** The fetch to use [globalThis.fetch]. */
  fetch?: typeof fetch;
}

/** Arguments of the web_search tool. */
export type WebSearchArgs = {
  query: string;
  max_results?: number | undefined;
  domains?: string[] | undefined;
  blocked_domains?: string[] | undefined;
};

const defaultBaseUrls = {
  brave: 'https://api.search.brave.com',
  tavily: 'https://api.tavily.com',
} as const;

function normaliseDomain(domain: string): string {
  return domain
    .trim()
    .toLowerCase()
    .replace(/^https?:\/\//, '')
    .replace(/\/[\s\S]*$/, '')
    .replace(/^\*\./, '')
    .replace(/^www\./, '');
}

/** Whether `url`'s host is `domain` or one of its subdomains. */
export function onDomain(url: string, domain: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return false;
  }
  const wanted = normaliseDomain(domain);
  return host === wanted || host.endsWith(`.${wanted}`) || host === `www.${wanted}`;
}

/**
 * Largest answer read from a search API (decompressed): a page of results is tens of kilobytes.
 * `response.text()` read whatever came — a self-hosted SearXNG (or anything between) sending a
 * gzip bomb or an endless body filled this process's memory until the timeout.
 */
export const maxSearchResponseBytes = 4 * 1024 * 1024;

/** The body as text, read up to {@link maxSearchResponseBytes}; more is an error (the rest is not read). */
async function boundedText(response: Response, backend: string): Promise<string> {
  if (response.body === null) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxSearchResponseBytes)
        throw new ToolError(
          `The ${backend} search answered with more than ${maxSearchResponseBytes} bytes; the rest was not read`,
          { kind: 'failed', toolName: 'web_search' },
        );
      chunks.push(value);
    }
  } finally {
    // Stops the transfer (and the decompression) when reading ended early.
    void reader.cancel().catch(() => undefined);
  }
  return new TextDecoder().decode(Buffer.concat(chunks));
}

async function requestJson(
  fetchImpl: typeof fetch,
  backend: string,
  url: URL,
  init: RequestInit,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<unknown> {
  const timeout = AbortSignal.timeout(timeoutMs);
  const combined = AbortSignal.any([signal, timeout]);
  // A self-hosted SearXNG (or a local proxy) that is not running: whoever holds its port would get
  // each query — words of the conversation — and the key, and choose the results the model reads.
  const stranger = await foreignLoopbackServer(url);
  if (stranger !== undefined)
    throw new ToolError(
      `The ${backend} search was not sent: ${stranger}; start your search server there (as yourself or as its service account), or use another port`,
      {
        kind: 'failed',
        toolName: 'web_search',
      },
    );
  let response: Response;
  try {
    response = await fetchSameOrigin(fetchImpl, url, { ...init, signal: combined }, backend);
  } catch (error) {
    if (ToolError.isInstance(error)) throw error;
    if (signal.aborted) throw error;
    if (timeout.aborted)
      throw new ToolError(`The ${backend} search did not answer within ${timeoutMs} ms`, {
        kind: 'timeout',
        toolName: 'web_search',
      });
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    throw new ToolError(
      `The ${backend} search API at ${url.origin} could not be reached (${cause?.code ?? cause?.message ?? (error as Error).message})`,
      { kind: 'failed', toolName: 'web_search' },
    );
  }
  const text = await boundedText(response, backend);
  if (!response.ok) {
    const why =
      response.status === 401 || response.status === 403
        ? 'the API key was refused'
        : response.status === 429
          ? 'rate-limited; try again later'
          : `HTTP ${response.status}`;
    throw new ToolError(
      `The ${backend} search failed: ${why}${text.trim() === '' ? '' : ` (${oneLine(text, 200)})`}`,
      { kind: 'failed', toolName: 'web_search' },
    );
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ToolError(
      `The ${backend} search answered with something that is not JSON: ${oneLine(text, 120)}`,
      { kind: 'failed', toolName: 'web_search' },
    );
  }
}

/** Redirects a search API may take within its own origin (an added or removed slash, a version). */
const maxSearchRedirects = 5;

/**
 * `fetch` with redirects followed only within the API's origin. fetch's own following drops
 * `Authorization` on a hop to another origin but keeps every other header: Brave's
 * `X-Subscription-Token` went along to whatever host a redirect named. A search API has no reason
 * to send its client elsewhere, so such a redirect is an error naming where it pointed.
 */
async function fetchSameOrigin(
  fetchImpl: typeof fetch,
  start: URL,
  init: RequestInit,
  backend: string,
): Promise<Response> {
  let url = start;
  let request = init;
  for (let hop = 0; ; hop++) {
    const response = await fetchImpl(url, { ...request, redirect: 'manual' });
    const location = response.headers.get('location');
    if (response.status < 300 || response.status > 399 || location === null) return response;
    await response.body?.cancel().catch(() => undefined);
    const next = new URL(location, url);
    if (next.origin !== start.origin)
      throw new ToolError(
        `The ${backend} search API at ${start.origin} redirected to ${next.origin}, which is not followed: the API key goes to the API's own origin only`,
        { kind: 'failed', toolName: 'web_search' },
      );
    if (hop >= maxSearchRedirects)
      throw new ToolError(
        `The ${backend} search API redirected more than ${maxSearchRedirects} times`,
        {
          kind: 'failed',
          toolName: 'web_search',
        },
      );
    // As fetch does: a 303, or a 301/302 after a POST, becomes a GET without a body.
    const method = (request.method ?? 'GET').toUpperCase();
    if (response.status === 303 || (method === 'POST' && response.status <= 302)) {
      const { body: _body, ...rest } = request;
      request = { ...rest, method: 'GET' };
    }
    url = next;
  }
}

const asString = (value: unknown): string | undefined =>
  typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;

function resultsOf(value: unknown): Record<string, unknown>[] {
  return Array.isArray(value)
    ? value.filter(
        (item): item is Record<string, unknown> => item !== null && typeof item === 'object',
      )
    : [];
}

/** Runs one search on a backend: the backend's own request and response format, our result shape. */
export async function searchBackend(
  backend: WebSearchBackend,
  query: { text: string; count: number; allowed: readonly string[]; blocked: readonly string[] },
  options: { fetch: typeof fetch; signal: AbortSignal; timeoutMs: number },
): Promise<WebSearchResult[]> {
  switch (backend.type) {
    case 'brave': {
      // GET /res/v1/web/search?q=…&count=… with X-Subscription-Token; results in web.results.
      const url = new URL('/res/v1/web/search', backend.baseUrl ?? defaultBaseUrls.brave);
      url.searchParams.set('q', query.text);
      url.searchParams.set('count', String(Math.min(20, query.count)));
      const body = (await requestJson(
        options.fetch,
        'Brave',
        url,
        { headers: { accept: 'application/json', 'x-subscription-token': backend.apiKey } },
        options.signal,
        options.timeoutMs,
      )) as { web?: { results?: unknown } };
      return resultsOf(body?.web?.results).flatMap((item) => {
        const url = asString(item.url);
        if (url === undefined) return [];
        const date = asString(item.page_age) ?? asString(item.age);
        return [
          {
            title: asString(item.title) ?? url,
            url,
            snippet: stripTags(asString(item.description) ?? ''),
            ...(date === undefined ? {} : { date }),
          },
        ];
      });
    }
    case 'tavily': {
      // POST /search with a JSON body; Bearer key; results in results[] (content = snippet).
      const url = new URL('/search', backend.baseUrl ?? defaultBaseUrls.tavily);
      const body = (await requestJson(
        options.fetch,
        'Tavily',
        url,
        {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            authorization: `Bearer ${backend.apiKey}`,
          },
          body: JSON.stringify({
            query: query.text,
            max_results: Math.min(20, query.count),
            ...(query.allowed.length === 0 ? {} : { include_domains: query.allowed }),
            ...(query.blocked.length === 0 ? {} : { exclude_domains: query.blocked }),
          }),
        },
        options.signal,
        options.timeoutMs,
      )) as { results?: unknown };
      return resultsOf(body?.results).flatMap((item) => {
        const url = asString(item.url);
        if (url === undefined) return [];
        const date = asString(item.published_date);
        return [
          {
            title: asString(item.title) ?? url,
            url,
            snippet: asString(item.content) ?? '',
            ...(date === undefined ? {} : { date }),
          },
        ];
      });
    }
    case 'searxng': {
      // GET /search?q=…&format=json (the instance must enable the json format); results[].
      const url = new URL(
        'search',
        backend.baseUrl.endsWith('/') ? backend.baseUrl : `${backend.baseUrl}/`,
      );
      url.searchParams.set('q', query.text);
      url.searchParams.set('format', 'json');
      const body = (await requestJson(
        options.fetch,
        'SearXNG',
        url,
        {
          headers: {
            accept: 'application/json',
            ...(backend.apiKey === undefined ? {} : { authorization: `Bearer ${backend.apiKey}` }),
          },
        },
        options.signal,
        options.timeoutMs,
      )) as { results?: unknown };
      return resultsOf(body?.results).flatMap((item) => {
        const url = asString(item.url);
        if (url === undefined) return [];
        const date = asString(item.publishedDate);
        return [
          {
            title: asString(item.title) ?? url,
            url,
            snippet: asString(item.content) ?? '',
            ...(date === undefined ? {} : { date }),
          },
        ];
      });
    }
    default: {
      const unknown: never = backend;
      throw new Error(`Unknown search backend ${JSON.stringify(unknown)}`);
    }
  }
}

function stripTags(text: string): string {
  return text.replace(/<\/?strong>/g, '').replace(/<[^<>]+>/g, '');
}

/**
 * `web_search`: one tool over Brave Search, Tavily or a SearXNG instance, with one result shape
 * (title, URL, snippet, date). Domain allow and block lists apply to every backend (passed to the
 * backend where it filters itself, and always checked on the results). A full-access tool, as
 * web_fetch: the query leaves the machine; rules see the query (`web_search(*)`).
 */
export function createWebSearchTool(
  options: WebSearchToolOptions,
): DefinedTool<WebSearchArgs, { backend: WebSearchBackend['type']; results: WebSearchResult[] }> {
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const allowed = (options.allowedDomains ?? []).map(normaliseDomain);
  const blocked = (options.blockedDomains ?? []).map(normaliseDomain);
  const defaultCount = Math.min(20, Math.max(1, options.defaultResults ?? 8));
  const timeoutMs = options.timeoutMs ?? 20_000;
  const backendName = { brave: 'Brave', tavily: 'Tavily', searxng: 'SearXNG' }[
    options.backend.type
  ];
  return defineTool({
    name: 'web_search',
    // claw-code's and Claude Code's name and argument shape: {query, allowed_domains, blocked_domains}.
    aliases: ['WebSearch'],
    prepareArguments: renameArguments({ allowed_domains: 'domains' }),
    description:
      `Searches the web (${backendName}) and returns the top results: title, URL, a snippet and, ` +
      'when known, a date. Use web_fetch to read a result.' +
      (allowed.length > 0 ? ` Only results from: ${allowed.join(', ')}.` : '') +
      (blocked.length > 0 ? ` Never results from: ${blocked.join(', ')}.` : ''),
    input: z.object({
      query: z.string().trim().min(1).max(400).describe('What to search for.'),
      max_results: z
        .number()
        .int()
        .min(1)
        .max(20)
        .optional()
        .describe(`How many results [${defaultCount}].`),
      domains: z
        .array(z.string().min(1))
        .max(10)
        .optional()
        .describe('Only results from these domains (e.g. ["nodejs.org"]).'),
      blocked_domains: z
        .array(z.string().min(1))
        .max(10)
        .optional()
        .describe('Never results from these domains.'),
    }),
    policy: { permission: 'full-access', parallelSafePerTurn: true },
    permissionSubjects: ({ query }) => [query],
    execute: async ({ query, max_results, domains, blocked_domains }, ctx) => {
      const count = max_results ?? defaultCount;
      const asked = (domains ?? []).map(normaliseDomain);
      // The call may add blocks to the configured ones, never lift them.
      const blockedHere = [...blocked, ...(blocked_domains ?? []).map(normaliseDomain)];
      // The call may narrow the configured allow list, never widen it.
      const only =
        allowed.length === 0
          ? asked
          : asked.length === 0
            ? allowed
            : asked.filter((d) => allowed.some((a) => d === a || d.endsWith(`.${a}`)));
      if (allowed.length > 0 && asked.length > 0 && only.length === 0) {
        throw ToolError.invalidArguments(
          'web_search',
          `none of the domains ${asked.join(', ')} is allowed here (allowed: ${allowed.join(', ')})`,
        );
      }
      const found = await searchBackend(
        options.backend,
        { text: query, count, allowed: only, blocked: blockedHere },
        { fetch: fetchImpl, signal: ctx.signal, timeoutMs },
      );
      const seen = new Set<string>();
      const results = found
        .filter(
          (result) => only.length === 0 || only.some((domain) => onDomain(result.url, domain)),
        )
        .filter((result) => !blockedHere.some((domain) => onDomain(result.url, domain)))
        .filter((result) => !seen.has(result.url) && seen.add(result.url) !== undefined)
        .slice(0, count);
      const dropped = found.length - results.length;
      const lines =
        results.length === 0
          ? [
              `No results for "${query}"${dropped > 0 ? ` (${dropped} dropped by the domain lists)` : ''}.`,
            ]
          : results.map((result, index) => {
              // Each field is one line: a snippet cannot add results or lines of its own.
              const snippet = oneLine(result.snippet, 1000);
              return `${index + 1}. ${oneLine(result.title)}\n   ${oneLine(result.url, 2000)}${snippet === '' ? '' : `\n   ${snippet}`}${result.date === undefined ? '' : `\n   (${oneLine(result.date)})`}`;
            });
      const text =
        results.length === 0 ? lines.join('\n') : `${untrustedNote}\n\n${fenced(lines.join('\n'))}`;
      return {
        content: [{ type: 'text', text }],
        details: { backend: options.backend.type, results },
      };
    },
  });
}

/**
 * The backend configured by the usual environment variables, if any: `BRAVE_API_KEY` (or
 * `BRAVE_SEARCH_API_KEY`), `TAVILY_API_KEY`, `SEARXNG_URL` — first found in that order.
 */
export function webSearchBackendFromEnv(
  env: Record<string, string | undefined> = process.env,
): WebSearchBackend | undefined {
  const brave = env.BRAVE_API_KEY ?? env.BRAVE_SEARCH_API_KEY;
  if (brave) return { type: 'brave', apiKey: brave };
  if (env.TAVILY_API_KEY) return { type: 'tavily', apiKey: env.TAVILY_API_KEY };
  if (env.SEARXNG_URL) return { type: 'searxng', baseUrl: env.SEARXNG_URL };
  return undefined;
}
