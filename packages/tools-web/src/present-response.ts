// Turning a fetched response into web_fetch's result: HTML converted, JSON pretty-printed, text
// as is, images as images, binaries described; a header, and paging through `offset`/`max_chars`.
import { TextDecoder } from 'node:util';
import { detectFileKind, ToolError, type ToolResult } from '@agent/core';
import { type ConvertHtmlOptions, convertHtml } from './html-conversion.js';
import { type BodyKind, classify, type FetchedResponse } from './http-fetch.js';
import { fenced, oneLine, untrustedNote, withoutControls } from './untrusted-text.js';
import { shownUrl } from './url-guard.js';
import type { WebFetchDetails, WebFetchFormat } from './web-fetch.js';

const excerptChars = 2000;

/** The encoding a byte-order mark announces, if the body starts with one. */
function byteOrderMark(body: Buffer): 'utf-8' | 'utf-16le' | 'utf-16be' | undefined {
  if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) return 'utf-8';
  if (body[0] === 0xff && body[1] === 0xfe) return 'utf-16le';
  if (body[0] === 0xfe && body[1] === 0xff) return 'utf-16be';
  return undefined;
}

/**
 * The body's encoding, as a browser decides it (WHATWG): a byte-order mark wins over everything,
 * then the header's charset, then (HTML) a `<meta>` or (XML) the declaration; UTF-8 otherwise.
 * A UTF-16 label found inside the bytes is read as UTF-8: text that could be read to find the
 * label is not UTF-16.
 */
function charsetOf(contentType: string | undefined, body: Buffer, kind: BodyKind): string {
  const fromMark = byteOrderMark(body);
  if (fromMark !== undefined) return fromMark;
  const fromHeader = contentType?.match(/;\s*charset\s*=\s*"?([^";\s]+)/i)?.[1];
  if (fromHeader !== undefined) return fromHeader;
  const head = body.subarray(0, 2048).toString('latin1');
  const declared =
    kind === 'html'
      ? (head.match(/<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i)?.[1] ??
        head.match(/<meta[^>]+content\s*=\s*["'][^"']*charset=([\w.:-]+)/i)?.[1])
      : head.match(/^<\?xml[^>]*\bencoding\s*=\s*["']([\w.:-]+)["']/)?.[1];
  if (declared === undefined || /^utf-?16/i.test(declared)) return 'utf-8';
  return declared;
}

/** Whether the declared charset is UTF-16/32, whose text is full of NUL bytes. */
function wideCharset(contentType: string | undefined, body: Buffer): boolean {
  const mark = byteOrderMark(body);
  if (mark !== undefined) return mark !== 'utf-8';
  return /;\s*charset\s*=\s*"?utf-?(16|32)/i.test(contentType ?? '');
}

/**
 * Windows-1252's 0x80–0x9F (WHATWG's table; 0 where it leaves a byte as the C1 control). The
 * labels `iso-8859-1`, `latin1` and `us-ascii` mean this encoding too, and Node's TextDecoder
 * (24.9) decodes it as latin1: the curly quotes, dashes and euro signs of such a page became C1
 * controls, which are then dropped.
 */
const windows1252High = [
  0x20ac, 0, 0x201a, 0x0192, 0x201e, 0x2026, 0x2020, 0x2021, 0x02c6, 0x2030, 0x0160, 0x2039, 0x0152,
  0, 0x017d, 0, 0, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x02dc, 0x2122, 0x0161,
  0x203a, 0x0153, 0, 0x017e, 0x0178,
];

function decodeWindows1252(body: Buffer): string {
  const text = body.toString('latin1');
  return text.replace(/[\x80-\x9f]/g, (character) => {
    const mapped = windows1252High[character.charCodeAt(0) - 0x80] ?? 0;
    return mapped === 0 ? character : String.fromCharCode(mapped);
  });
}

function decodeBody(body: Buffer, charset: string): string {
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(charset);
  } catch {
    // An unknown label: UTF-8 with replacement characters beats refusing the page.
    decoder = new TextDecoder('utf-8');
  }
  if (decoder.encoding === 'windows-1252') return decodeWindows1252(body);
  return decoder.decode(body);
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

/** The tool result for a fetched response (a large HTML page is converted in a worker thread). */
export async function present(
  fetched: FetchedResponse,
  settings: {
    start: URL;
    format: WebFetchFormat;
    offset: number;
    maxChars: number;
    maxImageBytes: number;
    maxResponseBytes: number;
    /** Stops a page's conversion. */
    signal?: AbortSignal;
    /** See {@link ConvertHtmlOptions}. */
    workerUrl?: URL | null;
    articleTimeoutMs?: number;
  },
): Promise<ToolResult<WebFetchDetails>> {
  const { body, contentType } = fetched;
  const details: WebFetchDetails = {
    url: shownUrl(settings.start),
    finalUrl: fetched.finalUrl,
    status: fetched.status,
    bytesRead: body.length,
    ...(contentType === undefined ? {} : { contentType }),
    ...(fetched.bodyTruncated ? { bodyTruncated: true } : {}),
  };
  const header = [`URL: ${fetched.finalUrl}`];
  if (fetched.finalUrl !== shownUrl(settings.start))
    header.push(`Redirected from: ${shownUrl(settings.start)}`);
  // The status text and the type are the server's words: one line each, like the title.
  const statusText = oneLine(fetched.statusText);
  header.push(`Status: ${fetched.status}${statusText ? ` ${statusText}` : ''}`);
  header.push(`Content-Type: ${contentType === undefined ? '(none)' : oneLine(contentType)}`);
  let kind = classify(contentType);
  const wide = wideCharset(contentType, body);
  // UTF-16 text is NUL bytes every other byte: not binary when its mark or header says so.
  const sniffed = wide ? { type: 'text' as const } : detectFileKind(body.subarray(0, 8192));
  // Bytes that begin with a binary format's magic number are that format, whatever the header
  // says: a PDF or a PNG sent as text/html would otherwise reach the model as pages of noise.
  const magic = sniffed.type !== 'text' && sniffed.mimeType !== undefined;
  if (magic && (kind === 'html' || kind === 'json' || kind === 'text')) kind = 'binary';
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
      sniffed.type !== 'text' && sniffed.format !== undefined && !fetched.skipped
        ? `${sniffed.format}, `
        : '';
    const lied = magic && classify(contentType) !== 'binary' && classify(contentType) !== 'unknown';
    const text = `${header.join('\n')}\n\nBinary content (${what}${size}); not shown.${lied ? ' The server called it text, but its bytes are this binary format.' : ''}`;
    return success
      ? { content: [{ type: 'text', text }], details }
      : { content: [{ type: 'text', text }], details, isError: true };
  }
  const decoded = decodeBody(body, charsetOf(contentType, body, kind));
  let content: string;
  if (settings.format === 'raw') content = decoded;
  else if (kind === 'html') {
    const converted = await convertHtml(decoded, {
      format: settings.format,
      baseUrl: fetched.finalUrl,
      ...(settings.signal === undefined ? {} : { signal: settings.signal }),
      ...(settings.workerUrl === undefined ? {} : { workerUrl: settings.workerUrl }),
      ...(settings.articleTimeoutMs === undefined
        ? {}
        : { articleTimeoutMs: settings.articleTimeoutMs }),
    });
    content = converted.text;
    // The page's title goes into the header: one line, so it cannot add header lines.
    const title = converted.title === undefined ? '' : oneLine(converted.title);
    if (title !== '') {
      details.title = title;
      header.push(`Title: ${title}`);
    }
    details.extracted = converted.extracted;
    if (converted.articleTimedOut === true)
      header.push(
        'Content: the whole page (finding its main article took too long; format "raw" for the HTML)',
      );
    if (converted.extracted === 'article')
      header.push(
        'Content: the main article (navigation, ads and footers left out; format "raw" for all of it)',
      );
  } else if (kind === 'json') content = prettyJson(decoded);
  else content = decoded;
  // Control characters mean nothing to the model and can hide text from a person reading the
  // transcript; "raw" is the body as sent.
  if (settings.format !== 'raw') content = withoutControls(content);
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
          text:
            excerpt.trim() === ''
              ? `HTTP ${fetched.status}${statusText ? ` ${statusText}` : ''} from ${fetched.finalUrl}\n${header.slice(1).join('\n')}`
              : `HTTP ${fetched.status}${statusText ? ` ${statusText}` : ''} from ${fetched.finalUrl}\n${header.slice(1).join('\n')}\n${untrustedNote}\n\n${fenced(excerpt.trimEnd())}`,
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
  header.push(untrustedNote);
  let text = `${header.join('\n')}\n\n${fenced(content.slice(settings.offset, end))}`;
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
