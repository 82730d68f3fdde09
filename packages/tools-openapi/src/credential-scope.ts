/**
 * Credentials go to the API's own origins only. A request to another origin — an operation whose
 * `servers` entry names another host, or a redirect — carries none of them: no Authorization, no
 * API-key header or cookie, none of the `headers` option. Redirects are followed here, hop by
 * hop, so each hop is checked (fetch's own following strips only Authorization and Cookie).
 */
import { ToolError } from '@agent/core';
import type { ResolvedAuth } from './auth.js';
import { foreignLoopbackServer } from './loopback-guard.js';

/** Most redirects followed for one call (fetch's own limit is 20). */
export const maxRedirects = 10;

/** The origin of a URL (`https://api.example.com:8443`), or undefined when it is not absolute. */
export function originOf(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    return parsed.origin === 'null' ? undefined : parsed.origin;
  } catch {
    return undefined;
  }
}

/** Lower-case names of the headers that carry credentials for these auth items and extra headers. */
export function credentialHeaderNames(
  auth: readonly ResolvedAuth[],
  extraHeaders: Record<string, string> | undefined,
): Set<string> {
  const names = new Set(['authorization', 'proxy-authorization', 'cookie']);
  for (const item of auth) {
    if (item.type === 'apiKey' && item.in === 'header') names.add(item.name.toLowerCase());
  }
  for (const name of Object.keys(extraHeaders ?? {})) names.add(name.toLowerCase());
  return names;
}

interface ScopedFetch {
  fetch: typeof globalThis.fetch;
  url: string;
  init: RequestInit & { headers: Headers };
  /** Headers to drop when a hop leaves the request's origin. */
  credentialHeaders: ReadonlySet<string>;
  /**
   * Query parameters holding API keys: removed from a redirect's URL once the chain has left the
   * request's origin (a server that echoes the query into `Location` would otherwise hand the key
   * to the other host).
   */
  credentialQuery?: readonly string[];
  /**
   * Checks a hop to another origin than the request's: a reason refuses it (a `denied`
   * ToolError), `undefined` follows it. See `redirect-guard.ts`.
   */
  checkRedirect?: (start: URL, target: URL) => Promise<string | undefined>;
  toolName: string;
}

/** What a redirected call went through, for the result's details. */
export interface RedirectTrail {
  /** URLs followed, in order (the final one last). */
  hops: string[];
  /** Whether credentials were dropped on the way (a hop left the API's origin). */
  credentialsDropped: boolean;
}

/**
 * `fetch` with redirects followed by hand: a hop to another origin goes without credentials
 * (and they stay off for the hops after it); 303, and 301/302 after a POST, become a GET
 * without a body, as fetch does; 307/308 keep method and body.
 */
export async function fetchScoped(
  params: ScopedFetch,
): Promise<{ response: Response; trail: RedirectTrail }> {
  const origin = originOf(params.url);
  let url = params.url;
  let method = (params.init.method ?? 'GET').toUpperCase();
  let body = params.init.body;
  const headers = new Headers(params.init.headers);
  const trail: RedirectTrail = { hops: [], credentialsDropped: false };
  for (let hop = 0; ; hop++) {
    const { body: _initial, ...rest } = params.init;
    // Credentials or not: the call's arguments are the user's data, the answer reaches the model.
    const foreign = await foreignLoopbackServer(url);
    if (foreign !== undefined)
      throw new ToolError(`${method} ${withoutQuery(url)}: ${foreign}`, {
        toolName: params.toolName,
      });
    const response = await params.fetch(url, {
      ...rest,
      method,
      headers,
      ...(body === undefined || body === null ? {} : { body }),
      redirect: 'manual',
    });
    const location = response.headers.get('location');
    if (
      response.status < 300 ||
      response.status > 399 ||
      location === null ||
      response.status === 304
    )
      return { response, trail };
    if (hop >= maxRedirects) {
      await response.body?.cancel().catch(() => undefined);
      throw new ToolError(`${method} ${withoutQuery(url)}: more than ${maxRedirects} redirects`, {
        toolName: params.toolName,
      });
    }
    let next: URL;
    try {
      next = new URL(location, url);
    } catch {
      return { response, trail };
    }
    if (next.protocol !== 'https:' && next.protocol !== 'http:') {
      await response.body?.cancel().catch(() => undefined);
      throw new ToolError(
        `${method} ${withoutQuery(url)} redirected to a ${next.protocol} URL, which is not followed`,
        {
          toolName: params.toolName,
        },
      );
    }
    await response.body?.cancel().catch(() => undefined);
    if (next.origin !== origin && params.checkRedirect !== undefined) {
      const refused = await params.checkRedirect(new URL(params.url), next);
      if (refused !== undefined)
        throw new ToolError(
          `${method} ${withoutQuery(url)} redirected to ${withoutQuery(next.href)}, which is not followed: ${refused}. Redirects out of the API into a private network are refused (allowPrivateRedirects lets them through).`,
          { kind: 'denied', toolName: params.toolName },
        );
    }
    if (
      response.status === 303 ||
      ((response.status === 301 || response.status === 302) && method === 'POST')
    ) {
      if (method !== 'HEAD') method = 'GET';
      body = undefined;
      headers.delete('content-type');
      headers.delete('content-length');
    }
    if (next.origin !== origin && !trail.credentialsDropped) {
      for (const name of params.credentialHeaders) headers.delete(name);
      trail.credentialsDropped = true;
    }
    if (trail.credentialsDropped)
      for (const name of params.credentialQuery ?? [])
        if (next.searchParams.has(name)) next.searchParams.delete(name);
    url = next.href;
    trail.hops.push(url);
  }
}

/**
 * A request URL as an error shows it (the model reads these): without its query, where an API key
 * sent `in: query` sits under whatever name the API gives it (`appid`, `access_key`…).
 */
function withoutQuery(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return url.split('?')[0] ?? url;
  }
}
