// What every provider package needs beside `RetryingStream`: the environment its key is read
// from, the error of an aborted call, and lenient parsing of a tool call's arguments for replay.
import { ProviderError } from './errors.js';

/** The process environment where there is one (Node, Bun, Deno's `process`), else an empty record. */
export function readEnv(): Record<string, string | undefined> {
  const processLike = (globalThis as { process?: { env?: Record<string, string | undefined> } })
    .process;
  return processLike?.env ?? {};
}

/** The `ProviderError` of a call its caller aborted (the signal's reason as its cause). */
export function abortError(providerId: string, signal: AbortSignal | undefined): ProviderError {
  return new ProviderError('Aborted', { provider: providerId, cause: signal?.reason });
}

/**
 * An API key as it can go into a request header: surrounding whitespace (a pasted key, a value
 * read from a file with a Windows line end) is dropped; a line break or another control character
 * inside it is refused with a `ProviderError` naming where the key came from (`source`, e.g.
 * `ANTHROPIC_API_KEY`) — never the key: `fetch`'s own error quoted the whole header value.
 */
export function usableApiKey(key: string, options: { provider: string; source: string }): string {
  const trimmed = key.trim();
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is looked for.
  if (/[\u0000-\u001f\u007f]/.test(trimmed))
    throw new ProviderError(
      `The API key from ${options.source} contains a line break or another control character, which no HTTP header may hold (the key is not shown): check how it was copied`,
      { provider: options.provider, statusCode: 401, isRetryable: false },
    );
  return trimmed;
}

/**
 * A token count from a vendor's usage object, or `undefined` when it is missing or no count: a
 * non-negative integer (a number, or digits in a string as some proxies send them). A missing
 * field must not become `NaN` (which then poisons every sum, cost and context estimate after it)
 * nor a string (`"19"` added to a number is `"019"`).
 */
export function tokenCount(value: unknown): number | undefined {
  if (typeof value === 'number')
    return Number.isFinite(value) && value >= 0 ? Math.floor(value) : undefined;
  if (typeof value === 'string' && /^\d{1,15}$/.test(value.trim())) return Number(value.trim());
  return undefined;
}

/**
 * Parses the raw argument text of a tool call for replay. Lenient: malformed or non-object
 * JSON becomes `{}` (the model already got an `invalid-args` result for that call).
 */
export function parseToolArguments(raw: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(raw);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed))
      return parsed as Record<string, unknown>;
  } catch {
    // fall through
  }
  return {};
}

/**
 * What an HTTP error said, from an SDK's message: without the status the SDK put before the body
 * (`404 {"error":…}`), and `no body` for an empty answer (`404 status code (no body)`), so a
 * line that names the status once does not say it again.
 */
export function httpErrorDetail(text: string, status: number | undefined): string {
  let detail = text.trim();
  if (status !== undefined && detail.startsWith(`${status} `))
    detail = detail.slice(String(status).length).trim();
  if (detail === '' || detail === 'status code (no body)') return 'no body';
  return detail;
}
