// What web_fetch checks of a URL before and while fetching it: the scheme, IP literals, and
// which redirects stay on the same site.
import * as net from 'node:net';
import { ToolError } from '@agent/core';
import { type PrivateAddressFilter, privateAddressReason } from './network-guard.js';

/** The permission subject of a URL: origin and path, without credentials, query or fragment. */
export function urlSubject(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

/**
 * A URL as web_fetch shows it — in its results, its errors, its details, and as the base of a
 * page's relative links: without the user name and password it may carry (they are sent, as
 * Basic authentication, never repeated).
 */
export function shownUrl(url: URL): string {
  if (url.username === '' && url.password === '') return url.href;
  const copy = new URL(url.href);
  copy.username = '';
  copy.password = '';
  return copy.href;
}

/** Text the model gave as a URL, with anything that looks like `user:password@` taken out. */
function shownRawUrl(raw: string): string {
  return raw.replace(/^(\s*[a-z][a-z0-9+.-]*:\/*)[^/?#\s]*@/i, '$1');
}

/** An absolute http(s) URL; a `ToolError` (invalid-args) for anything else. */
export function parseUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new ToolError(`Not a valid absolute URL: ${shownRawUrl(raw)}`, {
      kind: 'invalid-args',
    });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ToolError(
      `Only http and https URLs can be fetched, not ${url.protocol.slice(0, -1)}: ${shownUrl(url)}`,
      {
        kind: 'invalid-args',
      },
    );
  return url;
}

/** Refuses IP literals that are not public; host names are checked when resolved (guardedLookup). */
export function checkLiteralHost(url: URL, allowAddress: PrivateAddressFilter): void {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (net.isIP(host) === 0) return;
  const reason = privateAddressReason(host);
  if (reason !== undefined && !allowAddress(host, host))
    throw new ToolError(
      `Refusing to fetch ${shownUrl(url)}: ${host} is ${reason}. Private networks are off limits unless the tool is created with allowPrivateNetwork.`,
      { kind: 'denied' },
    );
}

/** Whether a redirect stays on the site (same host, `www.` ignored; never https → http). */
export function sameSite(from: URL, to: URL): boolean {
  const bare = (host: string) => host.replace(/^www\./, '');
  // A downgrade from https to http is reported, never followed.
  if (from.protocol === 'https:' && to.protocol === 'http:') return false;
  return (
    bare(from.hostname) === bare(to.hostname) &&
    (from.port === to.port || to.protocol !== from.protocol)
  );
}
