// What ties the bytes a client sends through the allow-list proxy to the host it was allowed to
// reach: behind one CDN address, the name the edge serves is the TLS server name (SNI) or the
// HTTP Host header — not the name the client gave the proxy. A command allowed `allowed.example`
// reached any other site of the same CDN by naming it there (domain fronting).
import * as net from 'node:net';
import {
  type HeadDecision,
  headerValues,
  type RequestHead,
  RequestStream,
} from './http-requests.js';
import { readClientHello } from './tls-client-hello.js';

/** A host name as compared: lower-cased, without brackets or a trailing dot. */
export function normalHost(host: string): string {
  return host
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '');
}

/** `host[:port]` of a Host header or URL authority, split; undefined when malformed. */
export function splitAuthority(authority: string): { host: string; port?: number } | undefined {
  const match = /^(\[[0-9A-Fa-f:.]+\]|[^\s:@/[\]]+)(?::(\d{1,5}))?$/.exec(authority);
  if (match?.[1] === undefined) return undefined;
  return match[2] === undefined
    ? { host: normalHost(match[1]) }
    : { host: normalHost(match[1]), port: Number(match[2]) };
}

/** The host and port a connection was allowed to reach. */
export interface BoundTarget {
  host: string;
  port: number;
}

/**
 * Why `authority` (a Host header, a URL's host) names another target than `bound`, else
 * undefined. A port is compared where one is given (none: the scheme's, which is how the
 * connection was made).
 */
function otherTarget(
  authority: { host: string; port?: number },
  bound: BoundTarget,
): string | undefined {
  if (authority.host !== normalHost(bound.host)) return authority.host;
  if (authority.port === undefined || authority.port === bound.port) return undefined;
  return `${authority.host}:${authority.port}`;
}

/**
 * Checks a request's target and Host header against `bound`: an absolute-form URL must name it,
 * and so must the one Host header (required, except for HTTP/1.0). `absolute`: the client speaks
 * to a proxy (plain HTTP), so its request line must be absolute-form.
 */
export function checkRequestTarget(
  head: RequestHead,
  bound: BoundTarget,
  absolute: boolean,
): { reason: string } | { url: URL | undefined } {
  if (head.method.toUpperCase() === 'CONNECT') return { reason: 'a CONNECT inside a connection' };
  // An upgraded connection (WebSocket, h2c) carries what this cannot read any more.
  if (headerValues(head, 'upgrade').length > 0)
    return { reason: 'an HTTP upgrade (use wss:// or https:// instead)' };
  let url: URL | undefined;
  if (!head.target.startsWith('/') && head.target !== '*') {
    try {
      url = new URL(head.target);
    } catch {
      return { reason: `a request target ${head.target} that is not a URL` };
    }
    if (url.protocol !== 'http:') return { reason: `the scheme ${url.protocol}` };
    if (url.username !== '' || url.password !== '') return { reason: 'credentials in the URL' };
    const other = otherTarget(
      { host: normalHost(url.hostname), port: url.port === '' ? 80 : Number(url.port) },
      bound,
    );
    if (other !== undefined)
      return { reason: `a request for ${other} on a connection to ${bound.host}` };
  } else if (absolute) {
    return { reason: 'only proxy requests (absolute URLs or CONNECT) are served' };
  }
  const hosts = headerValues(head, 'host');
  if (hosts.length > 1) return { reason: 'more than one Host header' };
  const [host] = hosts;
  if (host === undefined) {
    if (head.version === 'HTTP/1.1' && url === undefined) return { reason: 'no Host header' };
    return { url };
  }
  const authority = splitAuthority(host);
  if (authority === undefined) return { reason: `a malformed Host header ${host}` };
  const other = otherTarget(authority, bound);
  if (other !== undefined)
    return { reason: `Host: ${other} on a connection to ${bound.host} (domain fronting)` };
  return { url };
}

/** Hop-by-hop headers the proxy does not forward (RFC 9110 §7.6.1), its own among them. */
const hopByHop =
  /^(connection|keep-alive|proxy-connection|proxy-authorization|proxy-authenticate|te|upgrade)$/i;

/**
 * The requests of a plain-HTTP proxy connection to `bound`: each must be for it (URL and Host), and
 * each is forwarded in origin-form with its Host set and `Connection: close` — one request per
 * upstream connection, so a client that moves on to another host opens a new one to the proxy.
 */
export function plainHttpRequests(bound: BoundTarget): RequestStream {
  return new RequestStream((head): HeadDecision => {
    const checked = checkRequestTarget(head, bound, true);
    if ('reason' in checked) return { type: 'refuse', reason: checked.reason };
    const url = checked.url;
    if (url === undefined)
      return { type: 'refuse', reason: 'a request that is not a proxy request' };
    const headers = head.headers.filter(([name]) => !hopByHop.test(name) && !/^host$/i.test(name));
    const lines = [
      `${head.method} ${url.pathname}${url.search} ${head.version}`,
      `Host: ${url.host}`,
      ...headers.map(([name, value]) => `${name}: ${value}`),
      'Connection: close',
    ];
    return { type: 'forward', head: Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1') };
  });
}

/** What the first bytes inside a CONNECT tunnel turned out to be, once they tell. */
export type TunnelStart =
  | { type: 'incomplete' }
  | { type: 'tls' }
  | { type: 'http'; requests: RequestStream }
  | { type: 'other' }
  | { type: 'refuse'; reason: string; tls: boolean };

/**
 * Reads the client's first bytes in a tunnel to `bound`. TLS: the ClientHello's server name must
 * be the host (lower-cased, no trailing dot); none is accepted only for a tunnel to an IP address
 * (clients send no name for one), where a name sent must itself be `allowed`; an encrypted
 * ClientHello (ECH) hides the real name and is refused. HTTP (a method and a space): each
 * request's Host and URL must name the host, as for plain HTTP. Leading white space (which
 * servers skip before a request line) is refused. Anything else (ssh, a database protocol) goes
 * through as it is: no CDN routes it by a name inside.
 */
export function readTunnelStart(
  data: Buffer,
  bound: BoundTarget,
  allowed: (host: string) => boolean,
): TunnelStart {
  if (data.length === 0) return { type: 'incomplete' };
  if (data[0] === 0x16) {
    const hello = readClientHello(data);
    if (hello.type === 'incomplete') return hello;
    if (hello.type === 'invalid') return { type: 'refuse', reason: hello.reason, tls: true };
    if (hello.encrypted)
      return {
        type: 'refuse',
        reason: 'an encrypted ClientHello (ECH) hides the server name',
        tls: true,
      };
    const host = normalHost(bound.host);
    const isAddress = net.isIP(host) !== 0;
    if (hello.serverName === undefined)
      return isAddress
        ? { type: 'tls' }
        : {
            type: 'refuse',
            reason: `a TLS connection to ${host} without a server name`,
            tls: true,
          };
    if (hello.serverName === host || (isAddress && allowed(hello.serverName)))
      return { type: 'tls' };
    return {
      type: 'refuse',
      reason: `TLS server name ${hello.serverName} on a connection to ${host} (domain fronting)`,
      tls: true,
    };
  }
  const text = data.subarray(0, 64).toString('latin1');
  if (/^\s/.test(text)) return { type: 'refuse', reason: 'leading white space', tls: false };
  const word = /^[A-Za-z]+/.exec(text)?.[0] ?? '';
  if (word.length === text.length && word.length < 64) return { type: 'incomplete' };
  if (word.length > 0 && /\s/.test(text[word.length] ?? '')) {
    const requests = new RequestStream((head): HeadDecision => {
      const checked = checkRequestTarget(head, bound, false);
      return 'reason' in checked ? { type: 'refuse', reason: checked.reason } : { type: 'forward' };
    });
    return { type: 'http', requests };
  }
  return { type: 'other' };
}

/** A fatal TLS alert `unrecognized_name` (112), as a server refusing the name would send. */
export const unrecognizedNameAlert = Buffer.from([0x15, 0x03, 0x01, 0x00, 0x02, 0x02, 0x70]);
