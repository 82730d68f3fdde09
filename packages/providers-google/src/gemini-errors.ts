import {
  describeConnectionFailure,
  errorMessage,
  httpErrorDetail,
  isConnectionFailure,
  isContextOverflowText,
  isRetryableStatus,
  ProviderError,
  type RetryHints,
} from '@agent/core';
import { ApiError } from '@google/genai';

interface GoogleErrorBody {
  error?: {
    code?: number;
    message?: string;
    status?: string;
    details?: Array<{ '@type'?: string; retryDelay?: string }>;
  };
}

function parseBody(message: string): { body: GoogleErrorBody | undefined; raw: string } {
  const start = message.indexOf('{');
  if (start < 0) return { body: undefined, raw: message };
  const raw = message.slice(start);
  try {
    return { body: JSON.parse(raw) as GoogleErrorBody, raw };
  } catch {
    return { body: undefined, raw };
  }
}

/**
 * A failure of the SDK call as a typed `ProviderError`, plus the retry hints: the response's
 * valid `retry-after-ms` / `retry-after` headers (negative or garbage values dropped), else the
 * body's `google.rpc.RetryInfo.retryDelay` (as `retry-after`). The same shape in every provider
 * package; `headers` are the response's (the SDK's errors drop them).
 */
export function toProviderError(
  error: unknown,
  providerId: string,
  headers?: Headers,
): { error: ProviderError; hints: RetryHints } {
  if (ProviderError.isInstance(error)) return { error, hints: undefined };
  if (error instanceof ApiError) {
    const { body, raw } = parseBody(error.message);
    // The SDK wraps any answer as `{"error":{"message":<body>}}`: an empty message was no body.
    const said = body?.error?.message;
    const detail =
      said === undefined ? httpErrorDetail(error.message, error.status) : said.trim() || 'no body';
    const status = body?.error?.status;
    const message = `Gemini API error ${error.status}${status === undefined ? '' : ` (${status})`}: ${detail}`;
    let hints: RetryHints = headers;
    if (headers?.get('retry-after') == null && headers?.get('retry-after-ms') == null) {
      const delay = body?.error?.details?.find((item) =>
        item['@type']?.endsWith('RetryInfo'),
      )?.retryDelay;
      const seconds = delay === undefined ? undefined : /^(\d+(?:\.\d+)?)s$/.exec(delay)?.[1];
      if (seconds !== undefined) hints = { 'retry-after': seconds };
    }
    return {
      error: new ProviderError(message, {
        provider: providerId,
        cause: error,
        detail,
        statusCode: error.status,
        isRetryable: isRetryableStatus(error.status),
        responseBody: raw,
        // "The input token count (…) exceeds the maximum number of tokens allowed (…)": 400 INVALID_ARGUMENT.
        ...((error.status === 400 || error.status === 413) && isContextOverflowText(detail)
          ? { contextOverflow: true }
          : {}),
      }),
      hints,
    };
  }
  if (isConnectionFailure(error)) {
    return {
      // No response yet (no headers): the server was never reached, rather than lost mid-stream.
      error: new ProviderError(`Gemini ${connectionSaid(error, headers)}`, {
        provider: providerId,
        cause: error,
        isRetryable: true,
        detail: connectionSaid(error, headers),
      }),
      hints: undefined,
    };
  }
  const malformed = error instanceof SyntaxError;
  const said = malformed
    ? `sent a malformed stream chunk: ${error.message}`
    : `call failed: ${errorMessage(error)}`;
  return {
    error: new ProviderError(`Gemini ${said}`, {
      provider: providerId,
      cause: error,
      isRetryable: false,
      detail: said,
    }),
    hints: undefined,
  };
}

/** A connection failure in words: `failed` before any response (no headers), else `lost`. */
function connectionSaid(error: unknown, headers: Headers | undefined): string {
  return `connection ${headers === undefined ? 'failed' : 'lost'}: ${describeConnectionFailure(error)}`;
}
