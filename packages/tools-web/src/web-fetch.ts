import {
  type DefinedTool,
  defineTool,
  renameArguments,
  ToolError,
  type ToolResult,
} from '@agent/core';
import * as z from 'zod';
import { fetchFollowing } from './http-fetch.js';
import { createGuardedLookup, type DnsLookup, type PrivateAddressFilter } from './network-guard.js';
import { present } from './present-response.js';
import { parseUrl, shownUrl, urlSubject } from './url-guard.js';
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
  /**
   * The worker module large HTML pages are converted in (`html-worker.js` of this package's dist,
   * for a bundle that puts it elsewhere); `null` converts in the calling thread
   * [`html-worker.js` next to this module, when it is there].
   */
  htmlWorkerUrl?: URL | null;
  /** Time a large page's article extraction may take before it is converted whole [10,000 ms]. */
  articleTimeoutMs?: number;
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
          throw ToolError.cancelled('web_fetch', `the request to ${shownUrl(start)} was aborted`);
        if (timeout.signal.aborted)
          throw new ToolError(
            `Fetching ${shownUrl(start)} took longer than ${timeoutMs} ms; the request was aborted.`,
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
              text: `${shownUrl(fetched.from)} redirected (HTTP ${fetched.status}) to a different host: ${fetched.redirectTo.href}\nRedirects to another host are not followed. To fetch it, call web_fetch again with that URL.`,
            },
          ],
          details: {
            url: shownUrl(start),
            finalUrl: shownUrl(fetched.from),
            status: fetched.status,
            bytesRead: 0,
            redirectUrl: fetched.redirectTo.href,
          },
        };
      }
      try {
        return await present(fetched, {
          start,
          format,
          offset: args.offset ?? 0,
          maxChars: args.max_chars ?? defaultMaxChars,
          maxImageBytes,
          maxResponseBytes,
          signal: ctx.signal,
          ...(options.htmlWorkerUrl === undefined ? {} : { workerUrl: options.htmlWorkerUrl }),
          ...(options.articleTimeoutMs === undefined
            ? {}
            : { articleTimeoutMs: options.articleTimeoutMs }),
        });
      } catch (error) {
        if (ctx.signal.aborted)
          throw ToolError.cancelled('web_fetch', `converting ${shownUrl(start)} was aborted`);
        throw error;
      }
    },
  });
  // Kiro's `mode` and `search_terms` (web-fetch-kiro.ts).
  return withKiroFetchModes(tool, maxChars);
}
