/**
 * The credentials a request carried never come back to the model. APIs and servers echo them:
 * httpbin-style `/anything` and `/headers` endpoints, an error that quotes the request (`invalid
 * key abc…`, `GET /v1/x?api_key=… failed`), a debug field holding the Authorization header. A
 * tool source (OpenAPI, MCP over HTTP) knows exactly which values it sent, so it replaces each of
 * them in what the model
 * reads — the result's text and JSON, and the messages of errors — with `[redacted:<what>]`.
 */
import { ToolError } from './errors.js';
import type { ToolResultContent } from './messages.js';
import type { ToolResult } from './tool.js';

/** A value sent as a credential, and what the marker that replaces it names (`api key api_key`). */
export interface SentSecret {
  /** The credential as it was sent. */
  value: string;
  /** What the marker that replaces it names (`api key api_key` → `[redacted:api key api_key]`). */
  label: string;
}

/**
 * Values shorter than this are replaced only where they stand alone — not inside a longer run of
 * letters, digits or `_` — since a 3-letter key inside ordinary words (`abc` in `abcdef`) would
 * mangle the text. A configured credential is hidden whatever its length: a 4-digit PIN or a
 * 5-character password echoed alone is still the credential.
 */
const wholeWordBelow = 6;

/** One form of a secret and what replaces it; `alone` ones are matched as whole words only. */
interface Replacement {
  form: string;
  marker: string;
  alone: RegExp | undefined;
}

// Only the syntax characters: a `u` pattern refuses other escapes (`\-`).
const escapeRegExp = (text: string): string => text.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&');

/**
 * The forms a secret can come back in: as sent, URL-encoded (a query key echoed in a URL), and
 * JSON-escaped (inside a JSON string of a text body); longest first so that a value that contains
 * another is replaced whole.
 */
function replacements(secrets: readonly SentSecret[]): Replacement[] {
  const pairs = new Map<string, Replacement>();
  for (const { value, label } of secrets) {
    if (value.length === 0) continue;
    const marker = `[redacted:${label}]`;
    for (const form of [value, encodeURIComponent(value), JSON.stringify(value).slice(1, -1)]) {
      if (pairs.has(form)) continue;
      const alone =
        value.length < wholeWordBelow
          ? new RegExp(`(?<![\\p{L}\\p{N}_])${escapeRegExp(form)}(?![\\p{L}\\p{N}_])`, 'gu')
          : undefined;
      pairs.set(form, { form, marker, alone });
    }
  }
  return [...pairs.values()].sort((a, b) => b.form.length - a.form.length);
}

/**
 * A function that replaces every sent secret in a text; the identity when there is none. Values
 * of fewer than 6 characters are replaced only where they stand alone (see `wholeWordBelow`).
 */
export function secretHider(secrets: readonly SentSecret[]): (text: string) => string {
  const pairs = replacements(secrets);
  if (pairs.length === 0) return (text) => text;
  return (text) => {
    let result = text;
    for (const { form, marker, alone } of pairs) {
      if (!result.includes(form)) continue;
      result =
        alone === undefined ? result.split(form).join(marker) : result.replace(alone, () => marker);
    }
    return result;
  };
}

function hideInJson(value: unknown, hide: (text: string) => string): unknown {
  if (typeof value === 'string') return hide(value);
  if (Array.isArray(value)) return value.map((item) => hideInJson(item, hide));
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [hide(key), hideInJson(item, hide)]),
    );
  return value;
}

/** `result` with every sent secret replaced in its text and JSON content. */
export function hideSecretsInResult<T>(
  result: ToolResult<T>,
  hide: (text: string) => string,
): ToolResult<T> {
  const content = result.content.map((part): ToolResultContent => {
    if (part.type === 'text') return { ...part, text: hide(part.text) };
    if (part.type === 'json') return { ...part, value: hideInJson(part.value, hide) };
    return part;
  });
  return { ...result, content };
}

/** `error` with every sent secret replaced in its message (a new ToolError of the same kind). */
export function hideSecretsInError(error: ToolError, hide: (text: string) => string): ToolError {
  const message = hide(error.message);
  if (message === error.message) return error;
  return new ToolError(message, {
    kind: error.kind,
    ...(error.toolName === undefined ? {} : { toolName: error.toolName }),
    ...(error.fatal ? { fatal: true } : {}),
  });
}
