/**
 * Reading an OpenAPI document from a file or a URL, bounded: a path that is a FIFO or a device
 * (`/dev/zero`), or a server that never stops sending, must end in a clear error, not a hang or
 * the process's memory. The largest real documents are a few tens of MB (GitHub's: ~11 MB of JSON).
 */
import { errorMessage, urlWithoutCredentials } from '@agent/core';
import { basicCredentials } from './auth.js';
import { foreignLoopbackServer } from './loopback-guard.js';
import { OpenApiSpecError } from './spec-error.js';

/** Largest document `fromFile` and `fromUrl` read, in bytes, unless told otherwise [64 MiB]. */
export const defaultMaxDocumentBytes = 64 * 1024 * 1024;

const mebibytes = (bytes: number) => `${Math.round((bytes / 1024 / 1024) * 10) / 10} MiB`;

/** The text of the document file at `path`: a regular file of at most `maxBytes` (Node.js only). */
export async function readDocumentFile(path: string, maxBytes: number): Promise<string> {
  // Imported here so the package root stays free of Node-only modules.
  const { readRegularFile } = await import('@agent/core/regular-file');
  const failure = (reason: string, cause?: unknown) =>
    new OpenApiSpecError(
      `Cannot read the OpenAPI document ${path}: ${reason}`,
      cause === undefined ? undefined : { cause },
    );
  const outcome = await readRegularFile(path, { maxBytes });
  switch (outcome.kind) {
    case 'read':
      return outcome.bytes.toString('utf8');
    case 'not-regular':
      throw failure('not a regular file');
    case 'too-large':
      throw failure(
        `${outcome.size > outcome.stats.size ? 'more than ' : ''}${mebibytes(outcome.size)}, larger than ${mebibytes(maxBytes)} (maxDocumentBytes)`,
      );
    case 'missing':
      // Said as the MCP config and the CLI's own files say it, not as Node's `ENOENT: …, stat 'x'`.
      throw failure('no such file', outcome.error);
    case 'unreadable':
      throw failure(errorMessage(outcome.error), outcome.error);
    case 'refused':
      throw failure(outcome.reason);
    default: {
      const _exhaustive: never = outcome;
      return _exhaustive;
    }
  }
}

/** `href` without `user:password@`, and the Basic authorization they make, if it had them. */
function withoutUserinfo(href: string): { url: string; authorization?: string } {
  const match = /^(https?:\/\/)([^/?#]*)@/i.exec(href);
  if (match === null) return { url: href };
  const [username = '', password = ''] = (match[2] ?? '').split(/:(.*)/s);
  return {
    url: `${match[1]}${href.slice(match[0].length)}`,
    authorization: basicCredentials(decoded(username), decoded(password)),
  };
}

function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** The text of the document at `href`, at most `maxBytes` of body. */
export async function fetchDocument(
  href: string,
  options: { fetch: typeof globalThis.fetch; signal?: AbortSignal; maxBytes: number },
): Promise<string> {
  // fetch refuses a URL with a user name and password (and its error quotes them): they go as
  // Basic authorization instead, the URL without them (fetch drops it on a redirect elsewhere).
  const { url, authorization } = withoutUserinfo(href);
  const failure = (reason: string, cause?: unknown) =>
    new OpenApiSpecError(
      `Cannot fetch the OpenAPI document ${urlWithoutCredentials(url)}: ${reason}`,
      cause === undefined ? undefined : { cause },
    );
  // Not from a port of this machine that another user's process holds: the document decides the
  // tools and where their calls go, and its URL may carry the user's key (`user:key@`, `?api_key=…`).
  const foreign = await foreignLoopbackServer(url);
  if (foreign !== undefined) throw failure(foreign);
  try {
    const response = await options.fetch(url, {
      headers: {
        accept: 'application/json, application/yaml, text/yaml, */*;q=0.5',
        ...(authorization === undefined ? {} : { authorization }),
      },
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    if (!response.ok) throw failure(`HTTP ${response.status} ${response.statusText}`);
    const declared = Number(response.headers.get('content-length') ?? Number.NaN);
    const tooLarge = (size: string) =>
      failure(`${size}, larger than ${mebibytes(options.maxBytes)} (maxDocumentBytes)`);
    if (declared > options.maxBytes) {
      await response.body?.cancel();
      throw tooLarge(mebibytes(declared));
    }
    if (response.body === null) return '';
    const chunks: Uint8Array[] = [];
    let total = 0;
    const reader = response.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > options.maxBytes) {
        await reader.cancel();
        throw tooLarge(`more than ${mebibytes(options.maxBytes)}`);
      }
      chunks.push(value);
    }
    const bytes = new Uint8Array(total);
    let at = 0;
    for (const chunk of chunks) {
      bytes.set(chunk, at);
      at += chunk.byteLength;
    }
    return new TextDecoder().decode(bytes);
  } catch (error) {
    if (OpenApiSpecError.isInstance(error)) throw error;
    throw failure(fetchFailure(error), error);
  }
}

/** What a failed `fetch` says: undici reports "fetch failed" and keeps the useful part in `cause`. */
export function fetchFailure(error: unknown): string {
  const cause = error instanceof Error ? error.cause : undefined;
  if (cause instanceof Error && cause.message !== '') return cause.message;
  if (cause !== undefined && typeof cause === 'object' && cause !== null && 'code' in cause)
    return `${errorMessage(error)} (${String((cause as { code: unknown }).code)})`;
  return errorMessage(error);
}
