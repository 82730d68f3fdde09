// Fetching: one GET at a time through the guarded lookup, same-site redirects followed, the body
// decompressed and read up to a cap; network failures as ToolErrors that say what happened.
import type * as http from 'node:http';
import { type Duplex, pipeline, type Readable } from 'node:stream';
import * as zlib from 'node:zlib';
import { ToolError } from '@agent/core';
import { deflateDecoder } from './deflate-decoder.js';
import { foreignLoopbackServer } from './loopback-owner.js';
import {
  type createGuardedLookup,
  PrivateAddressError,
  type PrivateAddressFilter,
} from './network-guard.js';
import { checkLiteralHost, sameSite, shownUrl } from './url-guard.js';

/** What a body is, from its `Content-Type`. */
export type BodyKind = 'html' | 'json' | 'text' | 'image' | 'binary' | 'unknown';

/** A response as read: status, type and the body (capped), or why it was not read. */
export interface FetchedResponse {
  status: number;
  statusText: string;
  finalUrl: string;
  contentType: string | undefined;
  body: Buffer;
  bodyTruncated: boolean;
  /** Declared length, when the body was not read (a binary or an oversized image). */
  declaredLength?: number;
  /** The body was deliberately not read. */
  skipped?: boolean;
}

/** The limits and means of one call's requests. */
export interface RequestSettings {
  allowAddress: PrivateAddressFilter;
  lookup: ReturnType<typeof createGuardedLookup>;
  maxRedirects: number;
  maxResponseBytes: number;
  maxImageBytes: number;
  userAgent: string;
  signal: AbortSignal;
}

/** The kind of body a `Content-Type` announces. */
export function classify(contentType: string | undefined): BodyKind {
  const mime = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (mime === '') return 'unknown';
  if (mime === 'text/html' || mime === 'application/xhtml+xml') return 'html';
  if (mime === 'application/json' || mime === 'text/json' || mime.endsWith('+json')) return 'json';
  if (/^image\/(png|jpeg|gif|webp)$/.test(mime)) return 'image';
  if (
    mime.startsWith('text/') ||
    mime.endsWith('+xml') ||
    /^application\/(xml|javascript|ecmascript|x-javascript|x-sh|toml|yaml|x-yaml|x-ndjson|sql|graphql)$/.test(
      mime,
    )
  )
    return 'text';
  if (
    /^(audio|video|font)\//.test(mime) ||
    /^application\/(pdf|zip|gzip|x-tar|x-7z-compressed|wasm)$/.test(mime)
  )
    return 'binary';
  return 'unknown';
}

const networkErrorWords: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'the connection was refused',
  ECONNRESET: 'the connection was reset',
  ENOTFOUND: 'the host name was not found (DNS)',
  EAI_AGAIN: 'the DNS lookup failed temporarily',
  ETIMEDOUT: 'the connection timed out',
  EHOSTUNREACH: 'the host is unreachable',
  ENETUNREACH: 'the network is unreachable',
  EPIPE: 'the connection was closed',
  HPE_INVALID_CONSTANT: 'the server sent an invalid HTTP response',
  ERR_TLS_CERT_ALTNAME_INVALID: 'the TLS certificate does not match the host name',
  CERT_HAS_EXPIRED: 'the TLS certificate has expired',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'the TLS certificate is self-signed',
  SELF_SIGNED_CERT_IN_CHAIN: 'the TLS certificate chain is self-signed',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'the TLS certificate cannot be verified',
};

function networkError(error: unknown, url: URL): ToolError {
  if (ToolError.isInstance(error)) return error;
  if (error instanceof PrivateAddressError)
    return new ToolError(
      `Refusing to fetch ${shownUrl(url)}: ${error.message}. Private networks are off limits unless the tool is created with allowPrivateNetwork.`,
      { kind: 'denied', cause: error },
    );
  const code = errorCode(error);
  const words =
    code !== undefined && Object.hasOwn(networkErrorWords, code)
      ? networkErrorWords[code]
      : undefined;
  const detail = words ?? (error instanceof Error ? error.message : String(error));
  return new ToolError(
    `Could not fetch ${shownUrl(url)}: ${detail}${code === undefined ? '' : ` (${code})`}`,
    {
      cause: error,
    },
  );
}

/** Sends one GET and resolves with the response once its headers arrive. */
async function send(url: URL, settings: RequestSettings): Promise<http.IncomingMessage> {
  // A server of this machine that private addresses were allowed for (your dev server on
  // localhost:3000) may not be running: the URL asked for would go to whoever holds its port.
  const stranger = await foreignLoopbackServer(url);
  if (stranger !== undefined)
    throw new ToolError(`Refusing to fetch ${shownUrl(url)}: ${stranger}`, { kind: 'denied' });
  // Loaded at the first fetch, not with the package: on Node 24 importing node:http also loads
  // its fetch implementation (undici, ~30 ms of CPU), which a program that never fetches skips.
  const client = url.protocol === 'https:' ? await import('node:https') : await import('node:http');
  return new Promise((resolve, reject) => {
    const request = client.request(url, {
      method: 'GET',
      // No pooling: a socket is never reused for another host check, and closing it ends the transfer.
      agent: false,
      signal: settings.signal,
      headers: {
        'user-agent': settings.userAgent,
        accept:
          'text/html,application/xhtml+xml,text/markdown,text/plain,application/json;q=0.9,*/*;q=0.8',
        'accept-encoding': 'gzip, deflate, br',
      },
      lookup: settings.lookup,
    });
    request.once('response', resolve);
    // `on`, not `once`: a late second error (after an abort) must not become an unhandled one.
    request.on('error', reject);
    request.end();
  });
}

/** Content codings stacked deeper than this are refused (each layer can multiply the size). */
const maxContentCodings = 3;

/** A decoder for one content coding, or undefined when there is none here. */
function decoderFor(coding: string): Duplex | undefined {
  if (coding === 'gzip' || coding === 'x-gzip') return zlib.createGunzip();
  // The zlib format or bare deflate data, as browsers take it (deflate-decoder.ts).
  if (coding === 'deflate') return deflateDecoder();
  if (coding === 'br') return zlib.createBrotliDecompress();
  return undefined;
}

/**
 * The body with its `Content-Encoding` undone: each coding listed, last applied first undone
 * (`gzip, br` is brotli over gzip). A coding web_fetch cannot undo is an error naming it, not
 * compressed bytes passed off as the page. The decoders are one pipeline with the response:
 * ending or failing one ends them all.
 */
function decompressed(response: http.IncomingMessage, url: URL): Readable {
  const codings = (response.headers['content-encoding'] ?? '')
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
  if (codings.length === 0) return response;
  if (codings.length > maxContentCodings)
    throw new ToolError(
      `${shownUrl(url)} sent its body encoded ${codings.length} times (Content-Encoding: ${codings.join(', ')}); at most ${maxContentCodings} layers are undone.`,
    );
  const decoders = codings.reverse().map((coding) => {
    const decoder = decoderFor(coding);
    if (decoder === undefined)
      throw new ToolError(
        `${shownUrl(url)} sent its body in the "${coding.slice(0, 40)}" encoding, which web_fetch cannot decode (it accepts gzip, deflate and br).`,
      );
    return decoder;
  });
  // The callback only keeps a failure from being thrown: the last stream carries it to the reader.
  pipeline([response, ...decoders], () => {});
  return decoders[decoders.length - 1] as Readable;
}

/** Reads at most `limit` bytes of the (decompressed) body, then closes the connection. */
async function readCapped(
  response: http.IncomingMessage,
  limit: number,
  url: URL,
): Promise<{ body: Buffer; truncated: boolean }> {
  let stream: Readable;
  try {
    stream = decompressed(response, url);
  } catch (error) {
    response.destroy();
    throw error;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  try {
    for await (const chunk of stream) {
      const buffer = chunk as Buffer;
      if (size + buffer.length > limit) {
        chunks.push(buffer.subarray(0, limit - size));
        size = limit;
        truncated = true;
        break;
      }
      chunks.push(buffer);
      size += buffer.length;
    }
  } finally {
    // Stops the transfer: the socket is closed instead of draining the rest of a huge body.
    if (truncated || !response.complete) response.destroy();
  }
  return { body: Buffer.concat(chunks, size), truncated };
}

/**
 * GETs `start`, following same-site redirects (up to `maxRedirects`); a redirect to another site
 * is returned, not followed. A binary, or an image over its cap, is not read at all.
 */
export async function fetchFollowing(
  start: URL,
  settings: RequestSettings,
): Promise<FetchedResponse | { redirectTo: URL; from: URL; status: number }> {
  let url = start;
  for (let redirects = 0; ; redirects++) {
    checkLiteralHost(url, settings.allowAddress);
    let response: http.IncomingMessage;
    try {
      response = await send(url, settings);
    } catch (error) {
      throw networkError(error, url);
    }
    const status = response.statusCode ?? 0;
    const location = response.headers.location;
    if (status >= 300 && status < 400 && location !== undefined) {
      response.destroy();
      let next: URL;
      try {
        next = new URL(location, url);
      } catch {
        throw new ToolError(`${shownUrl(url)} redirected to an invalid URL: ${location}`);
      }
      if (next.protocol !== 'http:' && next.protocol !== 'https:')
        throw new ToolError(
          `${shownUrl(url)} redirected to a ${next.protocol.slice(0, -1)} URL, which is not fetched: ${shownUrl(next)}`,
        );
      if (!sameSite(url, next)) return { redirectTo: next, from: url, status };
      if (redirects >= settings.maxRedirects)
        throw new ToolError(
          `Too many redirects: more than ${settings.maxRedirects} starting at ${shownUrl(start)} (the last pointed to ${shownUrl(next)}).`,
        );
      url = next;
      continue;
    }
    const contentType = response.headers['content-type'];
    const kind = classify(contentType);
    const declared = Number(response.headers['content-length']);
    const declaredLength = Number.isFinite(declared) && declared >= 0 ? declared : undefined;
    const base = {
      status,
      statusText: response.statusMessage ?? '',
      finalUrl: shownUrl(url),
      contentType,
    };
    const success = status >= 200 && status < 300;
    const oversizedImage =
      kind === 'image' && declaredLength !== undefined && declaredLength > settings.maxImageBytes;
    if (success && (kind === 'binary' || oversizedImage)) {
      response.destroy();
      return {
        ...base,
        body: Buffer.alloc(0),
        bodyTruncated: false,
        skipped: true,
        ...(declaredLength === undefined ? {} : { declaredLength }),
      };
    }
    // An error page is only excerpted, and an image beyond its cap is only described.
    const limit = !success
      ? Math.min(settings.maxResponseBytes, 256 * 1024)
      : kind === 'image'
        ? settings.maxImageBytes + 1
        : settings.maxResponseBytes;
    try {
      const { body, truncated } = await readCapped(response, limit, url);
      return { ...base, body, bodyTruncated: truncated };
    } catch (error) {
      throw networkError(error, url);
    }
  }
}

function errorCode(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}
