import {
  detectFileKind,
  fenceUntrusted,
  neutraliseUntrustedJson,
  type ToolResult,
  type ToolResultContent,
  untrustedFence,
  untrustedJsonNote,
  untrustedNote,
} from '@agent/core';
import { baseMediaType, isJsonMediaType, isTextMediaType } from './media-types.js';
import { setOwn } from './own-property.js';

/** What a tool result's `details` hold: the HTTP exchange, never sent to the model. */
export interface OpenApiResultDetails {
  method: string;
  /** The request URL with API keys masked. */
  url: string;
  status: number;
  /** The reason phrase as the server sent it (or the standard one); the model is shown only the standard one. */
  statusText: string;
  /** Response headers, lower-case names (`set-cookie` redacted). */
  headers: Record<string, string>;
  contentType: string | undefined;
  /** Bytes of the body that were read. */
  bytes: number;
  /** True when the body was larger than `maxResponseBytes` and only its start was read. */
  truncated: boolean;
  /** True when the text shown to the model was clipped to `maxResponseChars`. */
  clipped: boolean;
}

/** Size limits for what a response shows the model. */
export interface ResponseLimits {
  /** Bytes of a body read at most; the rest is not downloaded [10 MiB]. */
  maxResponseBytes: number;
  /** Characters of a successful response shown to the model [50000]. */
  maxResponseChars: number;
  /** Characters of an error response's body shown to the model [4000]. */
  maxErrorChars: number;
  /** Largest image returned as image content; larger ones are only described [5 MiB]. */
  maxImageBytes: number;
}

/** Defaults for {@link ResponseLimits}. */
export const defaultResponseLimits: ResponseLimits = {
  maxResponseBytes: 10 * 1024 * 1024,
  maxResponseChars: 50_000,
  maxErrorChars: 4_000,
  maxImageBytes: 5 * 1024 * 1024,
};

const imageTypes = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/** Context for turning a response into a result. */
export interface ResponseContext {
  method: string;
  displayUrl: string;
  limits: ResponseLimits;
  /** The document's description of each declared status (`404`, `4XX`, `default`). */
  responseDescriptions: Record<string, string>;
  /**
   * Who wrote the body, for the note above it (`the API "petstore"`): the body is fenced as
   * untrusted content. `undefined` shows the body raw.
   */
  untrustedOrigin: string | undefined;
}

/**
 * Reads a response (at most `maxResponseBytes`) and turns it into the result the model reads:
 * JSON pretty-printed, text as text, images as image content, other binaries described;
 * a status outside 2xx is an `isError` result with the status, its reason and a body excerpt.
 * With `untrustedOrigin`, what the API wrote is marked as such: a whole JSON body becomes a JSON
 * block (still valid JSON, strings that imitate a fence marker replaced) after a note; text, a
 * clipped JSON body and an error's body go between random-id markers. Our own lines (the status,
 * that the body was cut or clipped) stay outside the markers.
 */
export async function responseToResult(
  response: Response,
  context: ResponseContext,
): Promise<ToolResult<OpenApiResultDetails>> {
  const { limits } = context;
  const { bytes, truncated } = await readBody(response, limits.maxResponseBytes);
  const contentType = response.headers.get('content-type') ?? undefined;
  const mediaType = contentType === undefined ? '' : baseMediaType(contentType);
  const statusText = response.statusText || reasonPhrases[response.status] || '';
  // Our own line, outside the fence: the reason phrase the server wrote is its text (it can say
  // anything), so the line names the status with the standard phrase only.
  const reason = reasonPhrases[response.status];
  const statusLine = `HTTP ${response.status}${reason === undefined ? '' : ` ${reason}`}`;
  const ok = response.status >= 200 && response.status < 300;
  const details: OpenApiResultDetails = {
    method: context.method,
    url: context.displayUrl,
    status: response.status,
    statusText,
    headers: headerRecord(response.headers),
    contentType,
    bytes: bytes.length,
    truncated,
    clipped: false,
  };
  const cutNote = truncated
    ? `\n[Only the first ${formatBytes(bytes.length)} of the body were read (maxResponseBytes).]`
    : '';

  if (!ok) {
    const lines = [statusLine + describeStatus(response.status, context.responseDescriptions)];
    lines.push(`${context.method} ${context.displayUrl}`);
    const retryAfter = response.headers.get('retry-after');
    if (retryAfter !== null) lines.push(`Retry-After: ${shownRetryAfter(retryAfter)}`);
    if (bytes.length > 0) {
      if (isReadable(mediaType, bytes) && !binaryInUtf8(bytes, contentType)) {
        const text = clip(prettyText(decode(bytes, contentType), mediaType), limits.maxErrorChars);
        details.clipped = text.clipped;
        lines.push('', shownText(text.text, context.untrustedOrigin) + text.note + cutNote);
      } else {
        lines.push(`(${describeBinary(mediaType, bytes.length)})`);
      }
    }
    return { content: [{ type: 'text', text: lines.join('\n') }], details, isError: true };
  }

  if (bytes.length === 0) {
    return { content: [{ type: 'text', text: `${statusLine} (no body)` }], details };
  }
  if (imageTypes.has(mediaType) && !truncated && bytes.length <= limits.maxImageBytes) {
    // The bytes decide: an "image" the provider cannot take stays in the conversation and fails
    // every later request of the session. A real image of another of the four types is sent as
    // what it is.
    const actual = detectFileKind(bytes.subarray(0, sniffBytes)).mimeType;
    if (actual === undefined || !imageTypes.has(actual))
      return {
        content: [
          {
            type: 'text',
            text: `${statusLine}: binary ${mediaType} body whose bytes are not a PNG, JPEG, GIF or WebP image, ${formatBytes(bytes.length)} (not shown)`,
          },
        ],
        details,
      };
    const content: ToolResultContent[] = [
      { type: 'text', text: `${statusLine}: ${actual} image, ${formatBytes(bytes.length)}` },
      { type: 'image', data: toBase64(bytes), mimeType: actual },
    ];
    return { content, details };
  }
  if (isReadable(mediaType, bytes) && !binaryInUtf8(bytes, contentType)) {
    const decoded = decode(bytes, contentType);
    const json = context.untrustedOrigin === undefined ? undefined : wholeJson(decoded, mediaType);
    const text = clip(
      json === undefined ? prettyText(decoded, mediaType) : json.text,
      limits.maxResponseChars,
    );
    details.clipped = text.clipped;
    if (json !== undefined && !text.clipped && !truncated && context.untrustedOrigin !== undefined)
      return {
        content: [
          { type: 'text', text: untrustedJsonNote(context.untrustedOrigin) },
          { type: 'json', value: neutraliseUntrustedJson(json.value) },
        ],
        details,
      };
    return {
      content: [
        {
          type: 'text',
          text: shownText(text.text, context.untrustedOrigin) + text.note + cutNote,
        },
      ],
      details,
    };
  }
  return {
    content: [
      {
        type: 'text',
        text: `${statusLine}: ${describeBinary(mediaType, bytes.length, truncated)}`,
      },
    ],
    details,
  };
}

async function readBody(
  response: Response,
  maxBytes: number,
): Promise<{ bytes: Uint8Array; truncated: boolean }> {
  if (response.body === null) return { bytes: new Uint8Array(0), truncated: false };
  // A declared length within the limit (and no compression that could inflate it): read in one
  // go, which spares a promise and a copy per chunk.
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (declared <= maxBytes && !response.headers.has('content-encoding')) {
    const bytes = new Uint8Array(await response.arrayBuffer());
    if (bytes.length <= maxBytes) return { bytes, truncated: false };
    return { bytes: bytes.subarray(0, maxBytes), truncated: true };
  }
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  let truncated = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (total + value.length > maxBytes) {
      chunks.push(value.subarray(0, maxBytes - total));
      total = maxBytes;
      truncated = true;
      // Stop downloading: the rest would only be thrown away.
      await reader.cancel().catch(() => undefined);
      break;
    }
    chunks.push(value);
    total += value.length;
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  return { bytes, truncated };
}

/** Bytes read to tell an image or binary format from text. */
const sniffBytes = 8192;

/**
 * Whether a body declared as UTF-8 text (or without a charset) is a binary format or holds NUL
 * bytes: shown as text it would be garbage. Another charset (UTF-16 has NULs) is taken at its word.
 */
function binaryInUtf8(bytes: Uint8Array, contentType: string | undefined): boolean {
  const charset = /charset\s*=\s*"?([^";\s]+)/i.exec(contentType ?? '')?.[1];
  if (charset !== undefined && !/^(?:utf-?8|us-ascii)$/i.test(charset)) return false;
  return detectFileKind(bytes.subarray(0, sniffBytes)).type !== 'text';
}

function isReadable(mediaType: string, bytes: Uint8Array): boolean {
  if (mediaType !== '') return isTextMediaType(mediaType);
  // No Content-Type: show it when it is valid UTF-8 without NUL bytes.
  const head = bytes.subarray(0, 8192);
  if (head.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(
      head.length < bytes.length ? trimPartial(head) : head,
    );
    return true;
  } catch {
    return false;
  }
}

// Drops an incomplete UTF-8 sequence at the end of a sample.
function trimPartial(bytes: Uint8Array): Uint8Array {
  const end = bytes.length;
  for (let back = 1; back <= 3 && end - back >= 0; back++) {
    const byte = bytes[end - back] ?? 0;
    if ((byte & 0xc0) === 0xc0) return bytes.subarray(0, end - back);
    if ((byte & 0x80) === 0) break;
  }
  return bytes.subarray(0, end);
}

const utf8 = new TextDecoder('utf-8');

function decode(bytes: Uint8Array, contentType: string | undefined): string {
  const charset = /charset\s*=\s*"?([^";\s]+)/i.exec(contentType ?? '')?.[1];
  // One shared decoder for the common case (decode without `stream` keeps no state).
  if (charset === undefined || /^utf-?8$/i.test(charset)) return utf8.decode(bytes);
  try {
    return new TextDecoder(charset).decode(bytes);
  } catch {
    return new TextDecoder('utf-8').decode(bytes);
  }
}

/** The body as the model reads it: raw, or after the note between fresh markers. */
function shownText(text: string, origin: string | undefined): string {
  if (origin === undefined) return text;
  return `${untrustedNote('API', origin)}\n\n${fenceUntrusted(text, untrustedFence('API'))}`;
}

/** A JSON body parsed, with its pretty text, or `undefined` when it is not JSON or does not parse. */
function wholeJson(text: string, mediaType: string): { value: unknown; text: string } | undefined {
  if (!isJsonMediaType(mediaType)) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return { value, text: JSON.stringify(value, null, 2) };
  } catch {
    return undefined;
  }
}

function prettyText(text: string, mediaType: string): string {
  if (!isJsonMediaType(mediaType)) return text;
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** The first `max` characters of `text`, and our note saying it was clipped (outside any fence). */
function clip(text: string, max: number): { text: string; note: string; clipped: boolean } {
  if (text.length <= max) return { text, note: '', clipped: false };
  return {
    text: text.slice(0, max),
    note: `\n[Response clipped: showing the first ${max.toLocaleString('en-US')} of ${text.length.toLocaleString('en-US')} characters. Ask for less (filters, paging, fewer fields) to see the rest.]`,
    clipped: true,
  };
}

function describeStatus(status: number, descriptions: Record<string, string>): string {
  const description =
    descriptions[String(status)] ??
    descriptions[`${String(status).charAt(0)}XX`] ??
    descriptions.default;
  return description === undefined ? '' : ` (${description.split('\n')[0]?.trim()})`;
}

function describeBinary(mediaType: string, bytes: number, truncated = false): string {
  const kind =
    mediaType === ''
      ? 'body of unknown type'
      : mediaTypePattern.test(mediaType)
        ? `${mediaType} body`
        : 'body of a type that is not a valid media type';
  return `binary ${kind}, ${truncated ? 'more than ' : ''}${formatBytes(bytes)} (not shown)`;
}

/**
 * `type/subtype` of RFC 6838 (restricted names, at most 127 characters each): what a binary
 * body's description may name. Anything else in Content-Type is the server's text, which would
 * stand outside the fence.
 */
const mediaTypePattern = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/;

/** Retry-After as shown: delay-seconds or an IMF-fixdate (RFC 9110), else a note; never free text. */
function shownRetryAfter(value: string): string {
  const text = value.trim();
  if (/^\d{1,9}$/.test(text)) return text;
  if (
    /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(
      text,
    ) &&
    !Number.isNaN(Date.parse(text))
  )
    return text;
  return '(not a number of seconds or a date; not shown)';
}

function headerRecord(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  headers.forEach((value, name) => {
    setOwn(out, name, name === 'set-cookie' ? '[redacted]' : value);
  });
  return out;
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let offset = 0; offset < bytes.length; offset += 0x8000)
    binary += String.fromCharCode(...bytes.subarray(offset, offset + 0x8000));
  return btoa(binary);
}

// HTTP/2 and some servers send no reason phrase; these are the ones a model should recognise.
const reasonPhrases: Record<number, string> = {
  200: 'OK',
  201: 'Created',
  202: 'Accepted',
  204: 'No Content',
  301: 'Moved Permanently',
  302: 'Found',
  304: 'Not Modified',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  408: 'Request Timeout',
  409: 'Conflict',
  410: 'Gone',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};
