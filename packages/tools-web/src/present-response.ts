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
