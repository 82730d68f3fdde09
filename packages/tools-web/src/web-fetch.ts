import type * as http from 'node:http';
import * as net from 'node:net';
import type { Readable } from 'node:stream';
import { TextDecoder } from 'node:util';
import * as zlib from 'node:zlib';
import {
  type DefinedTool,
  defineTool,
  detectFileKind,
  renameArguments,
  ToolError,
  type ToolResult,
} from '@agent/core';
import * as z from 'zod';
import { htmlToMarkdown } from './html-to-markdown.js';
import {
  createGuardedLookup,
  type DnsLookup,
  PrivateAddressError,
  type PrivateAddressFilter,
  privateAddressReason,
} from './network-guard.js';
import { withKiroFetchModes } from './web-fetch-kiro.js';

/** Options of {@link createWebFetchTool}. */
export interface WebFetchToolOptions {
  /** Allow loopback, private, link-local and reserved addresses (e.g. a dev server) [false]. */
  allowPrivateNetwork?: boolean;
  /** Lets chosen non-public addresses through, e.g. `(host) => host === 'wiki.corp'` [none]. */
  allowPrivateAddress?: PrivateAddressFilter;
  /** DNS lookup (the `all: true` form of `dns.lookup`) [node:dns]. */
  lookup?: DnsLookup;
  /** Time limit of one call (all redirects and the body), in ms [30000]. */
  timeoutMs?: number;
  /** Same-host redirects followed before giving up [5]. */
  maxRedirects?: number;
  /** Body bytes read (after decompression); reading stops there and the result says so [10 MiB]. */
  maxResponseBytes?: number;
  /** Largest image returned as image content, in bytes; larger ones are described [5 MiB]. */
  maxImageBytes?: number;
  /** Characters returned when the call gives no `max_chars` [50000]. */
  defaultMaxChars?: number;
  /** Largest `max_chars` a call may ask for [100000]. */
  maxChars?: number;
  /** `User-Agent` header [`agent-web-fetch/1.0 (+https://github.com/agent-toolkit/agent)`]. */
  userAgent?: string;
}

/** How web_fetch presents a page: converted to Markdown, to plain text, or the body as sent. */
export type WebFetchFormat = 'markdown' | 'text' | 'raw';

/** Arguments of the web_fetch tool. */
export interface WebFetchArgs {
  url: string;
  format?: WebFetchFormat | undefined;
  /** 0-based character offset into the converted content. */
  offset?: number | undefined;
  /** Characters to return from `offset`. */
  max_chars?: number | undefined;
}

/** `details` of a web_fetch result. */
export interface WebFetchDetails {
  /** The URL asked for. */
  url: string;
  /** The URL of the response, after same-host redirects. */
  finalUrl: string;
  /** HTTP status of the last response. */
  status: number;
  /** `Content-Type` of the last response, when sent. */
  contentType?: string;
  /** Body bytes read (after decompression). */
  bytesRead: number;
  /** True when reading stopped at `maxResponseBytes`. */
  bodyTruncated?: boolean;
  /** Where a redirect to another host pointed; it was reported, not followed. */
  redirectUrl?: string;
  /** `<title>` of an HTML page. */
  title?: string;
  /** HTML only: `article` when the main content was extracted, `page` when the whole page was converted. */
  extracted?: 'article' | 'page';
  /** Characters of the converted content. */
  totalChars?: number;
  /** The offset to continue from, when characters remain. */
  nextOffset?: number;
}

const defaultUserAgent = 'agent-web-fetch/1.0 (+https://github.com/agent-toolkit/agent)';
const excerptChars = 2000;

type BodyKind = 'html' | 'json' | 'text' | 'image' | 'binary' | 'unknown';

interface FetchedResponse {
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

interface RequestSettings {
  allowAddress: PrivateAddressFilter;
  lookup: ReturnType<typeof createGuardedLookup>;
  maxRedirects: number;
  maxResponseBytes: number;
  maxImageBytes: number;
  userAgent: string;
  signal: AbortSignal;
}

/** The permission subject of a URL: origin and path, without credentials, query or fragment. */
function urlSubject(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

function parseUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new ToolError(`Not a valid absolute URL: ${raw}`, { kind: 'invalid-args' });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ToolError(
      `Only http and https URLs can be fetched, not ${url.protocol.slice(0, -1)}: ${raw}`,
      {
        kind: 'invalid-args',
      },
    );
  return url;
}

/** Refuses IP literals that are not public; host names are checked when resolved (guardedLookup). */
function checkLiteralHost(url: URL, allowAddress: PrivateAddressFilter): void {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (net.isIP(host) === 0) return;
  const reason = privateAddressReason(host);
  if (reason !== undefined && !allowAddress(host, host))
    throw new ToolError(
      `Refusing to fetch ${url.href}: ${host} is ${reason}. Private networks are off limits unless the tool is created with allowPrivateNetwork.`,
      { kind: 'denied' },
    );
}

function sameSite(from: URL, to: URL): boolean {
  const bare = (host: string) => host.replace(/^www\./, '');
  // A downgrade from https to http is reported, never followed.
  if (from.protocol === 'https:' && to.protocol === 'http:') return false;
  return (
    bare(from.hostname) === bare(to.hostname) &&
    (from.port === to.port || to.protocol !== from.protocol)
  );
}

function classify(contentType: string | undefined): BodyKind {
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

function charsetOf(contentType: string | undefined, body: Buffer, kind: BodyKind): string {
  const fromHeader = contentType?.match(/;\s*charset\s*=\s*"?([^";\s]+)/i)?.[1];
  if (fromHeader !== undefined) return fromHeader;
  if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) return 'utf-8';
  if (kind === 'html') {
    const head = body.subarray(0, 2048).toString('latin1');
    const meta =
      head.match(/<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i)?.[1] ??
      head.match(/<meta[^>]+content\s*=\s*["'][^"']*charset=([\w.:-]+)/i)?.[1];
    if (meta !== undefined) return meta;
  }
  return 'utf-8';
}

function decodeBody(body: Buffer, charset: string): string {
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(charset);
  } catch {
    // An unknown label: UTF-8 with replacement characters beats refusing the page.
    decoder = new TextDecoder('utf-8');
  }
  return decoder.decode(body);
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
      `Refusing to fetch ${url.href}: ${error.message}. Private networks are off limits unless the tool is created with allowPrivateNetwork.`,
      { kind: 'denied', cause: error },
    );
  const code = errorCode(error);
  const words = code === undefined ? undefined : networkErrorWords[code];
  const detail = words ?? (error instanceof Error ? error.message : String(error));
  return new ToolError(
    `Could not fetch ${url.href}: ${detail}${code === undefined ? '' : ` (${code})`}`,
    {
      cause: error,
    },
  );
}

/** Sends one GET and resolves with the response once its headers arrive. */
async function send(url: URL, settings: RequestSettings): Promise<http.IncomingMessage> {
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

function decompressed(response: http.IncomingMessage): Readable {
  const encoding = (response.headers['content-encoding'] ?? '').trim().toLowerCase();
  let decoder: zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress | undefined;
  if (encoding === 'gzip' || encoding === 'x-gzip') decoder = zlib.createGunzip();
  else if (encoding === 'deflate') decoder = zlib.createInflate();
  else if (encoding === 'br') decoder = zlib.createBrotliDecompress();
  if (decoder === undefined) return response;
  response.on('error', (error) => decoder.destroy(error));
  return response.pipe(decoder);
}

/** Reads at most `limit` bytes of the (decompressed) body, then closes the connection. */
async function readCapped(
  response: http.IncomingMessage,
  limit: number,
): Promise<{ body: Buffer; truncated: boolean }> {
  const stream = decompressed(response);
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

async function fetchFollowing(
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
        throw new ToolError(`${url.href} redirected to an invalid URL: ${location}`);
      }
      if (next.protocol !== 'http:' && next.protocol !== 'https:')
        throw new ToolError(
          `${url.href} redirected to a ${next.protocol.slice(0, -1)} URL, which is not fetched: ${next.href}`,
        );
      if (!sameSite(url, next)) return { redirectTo: next, from: url, status };
      if (redirects >= settings.maxRedirects)
        throw new ToolError(
          `Too many redirects: more than ${settings.maxRedirects} starting at ${start.href} (the last pointed to ${next.href}).`,
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
      finalUrl: url.href,
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
      const { body, truncated } = await readCapped(response, limit);
      return { ...base, body, bodyTruncated: truncated };
    } catch (error) {
      throw networkError(error, url);
    }
  }
}

function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** Other agents' names for web_fetch: claw-code and Claude Code (`WebFetch`). */
const webFetchAliases = ['WebFetch'] as const;

/**
 * Claude Code's and claw-code's `WebFetch {url, prompt}`: their tool runs a second model over
 * the page to answer `prompt`; here the page itself comes back and the calling model reads it, so
 * `prompt` is dropped.
 */
const webFetchSeedArguments = renameArguments({}, { drop: ['prompt'] });

/**
 * The `web_fetch` tool: GETs an http(s) URL and returns the page as Markdown (HTML converted,
 * JSON pretty-printed, text as is), an image, or a description of a binary. Same-host redirects
 * are followed (up to `maxRedirects`); a redirect to another host is reported, not followed, so
 * the new URL goes through the permission check. Loopback, private and link-local addresses are
 * refused unless `allowPrivateNetwork`. The body is read up to `maxResponseBytes`; `offset` and
 * `max_chars` (characters) page through the converted content.
 */
export function createWebFetchTool(
  options: WebFetchToolOptions = {},
): DefinedTool<WebFetchArgs, WebFetchDetails> {
  const allowPrivateNetwork = options.allowPrivateNetwork ?? false;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const maxRedirects = options.maxRedirects ?? 5;
  const maxResponseBytes = options.maxResponseBytes ?? 10 * 1024 * 1024;
  const maxImageBytes = options.maxImageBytes ?? 5 * 1024 * 1024;
  const defaultMaxChars = options.defaultMaxChars ?? 50_000;
  const maxChars = Math.max(options.maxChars ?? 100_000, defaultMaxChars);
  const userAgent = options.userAgent ?? defaultUserAgent;
  const allowAddress: PrivateAddressFilter = allowPrivateNetwork
    ? () => true
    : (options.allowPrivateAddress ?? (() => false));
  const lookup = createGuardedLookup({ lookup: options.lookup, allow: allowAddress });
  const tool = defineTool({
    name: 'web_fetch',
    label: 'Fetch URL',
    aliases: webFetchAliases,
    prepareArguments: webFetchSeedArguments,
    description: [
      'Fetches an http(s) URL with GET and returns its content: HTML converted to Markdown (or plain text), JSON pretty-printed, text as is, images as images.',
      `"format": "markdown" (default), "text", or "raw" (the body as sent). "offset" is the 0-based character offset into the converted content; "max_chars" the number of characters to return (default ${defaultMaxChars}, at most ${maxChars}).`,
      `The footer gives the total length and the offset to continue from. Redirects within the same host are followed (up to ${maxRedirects}); a redirect to another host is reported: fetch that URL in a new call.`,
      'Local and private-network addresses may be refused.',
    ].join(' '),
    input: z.object({
      url: z.string().min(1).describe('Absolute http:// or https:// URL.'),
      format: z
        .enum(['markdown', 'text', 'raw'])
        .optional()
        .describe(
          'markdown (default): HTML converted to Markdown; text: plain text; raw: the body as sent.',
        ),
      offset: z
        .number()
        .int()
        .min(0)
        .optional()
        .describe('0-based character offset into the converted content.'),
      max_chars: z
        .number()
        .int()
        .min(1)
        .max(maxChars)
        .optional()
        .describe('Maximum number of characters to return.'),
    }),
    source: 'builtin',
    // The loop's timeout is a backstop; the tool's own timer gives the clearer message first.
    // `full-access`, not `read-only`: a fetch sends data out (a query string can carry what the
    // model read), so no mode below full-access allows it unasked; allow sites by rule instead.
    policy: { permission: 'full-access', timeoutMs: timeoutMs + 2000 },
    // An unusable URL is its own subject, so the call reaches execute and fails as invalid-args
    // instead of looking like a failed permission check.
    permissionSubjects: (args) => {
      try {
        return [urlSubject(parseUrl(args.url))];
      } catch {
        return [args.url];
      }
    },
    execute: async (args, ctx): Promise<ToolResult<WebFetchDetails>> => {
      const start = parseUrl(args.url);
      const format = args.format ?? 'markdown';
      const timeout = new AbortController();
      const timer = setTimeout(() => timeout.abort(), timeoutMs);
      const signal = AbortSignal.any([ctx.signal, timeout.signal]);
      let fetched: Awaited<ReturnType<typeof fetchFollowing>>;
      try {
        ctx.signal.throwIfAborted();
        fetched = await fetchFollowing(start, {
          allowAddress,
          lookup,
          maxRedirects,
          maxResponseBytes,
          maxImageBytes,
          userAgent,
          signal,
        });
      } catch (error) {
        if (ctx.signal.aborted)
          throw ToolError.cancelled('web_fetch', `the request to ${start.href} was aborted`);
        if (timeout.signal.aborted)
          throw new ToolError(
            `Fetching ${start.href} took longer than ${timeoutMs} ms; the request was aborted.`,
            {
              kind: 'timeout',
              toolName: 'web_fetch',
            },
          );
        throw error;
      } finally {
        clearTimeout(timer);
      }
      if ('redirectTo' in fetched) {
        return {
          content: [
            {
              type: 'text',
              text: `${fetched.from.href} redirected (HTTP ${fetched.status}) to a different host: ${fetched.redirectTo.href}\nRedirects to another host are not followed. To fetch it, call web_fetch again with that URL.`,
            },
          ],
          details: {
            url: start.href,
            finalUrl: fetched.from.href,
            status: fetched.status,
            bytesRead: 0,
            redirectUrl: fetched.redirectTo.href,
          },
        };
      }
      return present(fetched, {
        start,
        format,
        offset: args.offset ?? 0,
        maxChars: args.max_chars ?? defaultMaxChars,
        maxImageBytes,
        maxResponseBytes,
      });
    },
  });
  // Kiro's `mode` and `search_terms` (web-fetch-kiro.ts).
  return withKiroFetchModes(tool, maxChars);
}

function present(
  fetched: FetchedResponse,
  settings: {
    start: URL;
    format: WebFetchFormat;
    offset: number;
    maxChars: number;
    maxImageBytes: number;
    maxResponseBytes: number;
  },
): ToolResult<WebFetchDetails> {
  const { body, contentType } = fetched;
  const details: WebFetchDetails = {
    url: settings.start.href,
    finalUrl: fetched.finalUrl,
    status: fetched.status,
    bytesRead: body.length,
    ...(contentType === undefined ? {} : { contentType }),
    ...(fetched.bodyTruncated ? { bodyTruncated: true } : {}),
  };
  const header = [`URL: ${fetched.finalUrl}`];
  if (fetched.finalUrl !== settings.start.href)
    header.push(`Redirected from: ${settings.start.href}`);
  header.push(`Status: ${fetched.status}${fetched.statusText ? ` ${fetched.statusText}` : ''}`);
  header.push(`Content-Type: ${contentType ?? '(none)'}`);
  let kind = classify(contentType);
  const sniffed = detectFileKind(body.subarray(0, 8192));
  if (kind === 'unknown') {
    if (sniffed.type !== 'text') kind = sniffed.type;
    else if (/^\s*(<!doctype html|<html)/i.test(body.subarray(0, 512).toString('latin1')))
      kind = 'html';
    else kind = 'text';
  }
  const success = fetched.status >= 200 && fetched.status < 300;
  if (success && kind === 'image') {
    const mimeType = sniffed.type === 'image' ? sniffed.mimeType : undefined;
    const tooLarge = fetched.bodyTruncated || body.length > settings.maxImageBytes;
    if (fetched.skipped || tooLarge || mimeType === undefined) {
      const size = fetched.skipped ? fetched.declaredLength : undefined;
      const why =
        mimeType === undefined && !fetched.skipped && !tooLarge
          ? 'its bytes are not a PNG, JPEG, GIF or WebP image'
          : `it is larger than the ${settings.maxImageBytes}-byte limit for images`;
      return {
        content: [
          {
            type: 'text',
            text: `${header.join('\n')}\n\nAn image${size === undefined ? '' : ` of ${formatBytes(size)}`}; not shown: ${why}.`,
          },
        ],
        details,
      };
    }
    return {
      content: [
        {
          type: 'text',
          text: `${header.join('\n')}\n\n${sniffed.format ?? 'Image'} (${mimeType}, ${formatBytes(body.length)})`,
        },
        { type: 'image', data: body.toString('base64'), mimeType },
      ],
      details,
    };
  }
  if (kind === 'binary' || kind === 'image') {
    const size = fetched.skipped
      ? fetched.declaredLength === undefined
        ? 'unknown size'
        : formatBytes(fetched.declaredLength)
      : `${fetched.bodyTruncated ? 'at least ' : ''}${formatBytes(body.length)}`;
    const what =
      sniffed.type === 'binary' && sniffed.format !== undefined && !fetched.skipped
        ? `${sniffed.format}, `
        : '';
    const text = `${header.join('\n')}\n\nBinary content (${what}${size}); not shown.`;
    return success
      ? { content: [{ type: 'text', text }], details }
      : { content: [{ type: 'text', text }], details, isError: true };
  }
  const decoded = decodeBody(body, charsetOf(contentType, body, kind));
  let content: string;
  if (settings.format === 'raw') content = decoded;
  else if (kind === 'html') {
    const converted = htmlToMarkdown(decoded, {
      format: settings.format,
      baseUrl: fetched.finalUrl,
    });
    content = converted.text;
    if (converted.title !== undefined) {
      details.title = converted.title;
      header.push(`Title: ${converted.title}`);
    }
    details.extracted = converted.extracted;
    if (converted.extracted === 'article')
      header.push(
        'Content: the main article (navigation, ads and footers left out; format "raw" for all of it)',
      );
  } else if (kind === 'json') content = prettyJson(decoded);
  else content = decoded;
  if (fetched.bodyTruncated)
    header.push(
      `[The body was cut at ${formatBytes(body.length)}: only that much was downloaded.]`,
    );
  if (!success) {
    const excerpt = content.length > excerptChars ? `${content.slice(0, excerptChars)}…` : content;
    return {
      content: [
        {
          type: 'text',
          text: `HTTP ${fetched.status}${fetched.statusText ? ` ${fetched.statusText}` : ''} from ${fetched.finalUrl}\n${header.slice(1).join('\n')}\n\n${excerpt}`.trimEnd(),
        },
      ],
      details,
      isError: true,
    };
  }
  details.totalChars = content.length;
  if (content.length === 0)
    return { content: [{ type: 'text', text: `${header.join('\n')}\n\n(empty)` }], details };
  if (settings.offset >= content.length)
    throw new ToolError(
      `offset ${settings.offset} is past the end of the content, which has ${content.length} characters.`,
      {
        kind: 'invalid-args',
      },
    );
  const end = Math.min(content.length, settings.offset + settings.maxChars);
  let text = `${header.join('\n')}\n\n${content.slice(settings.offset, end)}`;
  if (settings.offset > 0 || end < content.length) {
    text += `\n\n[Characters ${settings.offset}-${end} of ${content.length}`;
    if (end < content.length) {
      details.nextOffset = end;
      text += `; use offset ${end} to continue`;
    }
    text += ']';
  }
  return { content: [{ type: 'text', text }], details };
}

function errorCode(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}
