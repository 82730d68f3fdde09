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
import { APIError, APIUserAbortError } from '@anthropic-ai/sdk';

// Errors that arrive inside the SSE stream carry a type but no HTTP status.
const statusOfErrorType: Record<string, number> = {
  overloaded_error: 529,
  api_error: 500,
  rate_limit_error: 429,
  timeout_error: 504,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  invalid_request_error: 400,
};

/**
 * A failure of the SDK call as a typed `ProviderError`, plus its retry hints (the response
 * headers, for `retry-after`). The same shape in every provider package.
 */
export function toProviderError(
  error: unknown,
  providerId: string,
): { error: ProviderError; hints: RetryHints } {
  if (ProviderError.isInstance(error)) return { error, hints: undefined };
  // Our own refusal inside the client's fetch (a redirect to another origin), wrapped by the SDK.
  if (error instanceof APIError && ProviderError.isInstance(error.cause))
    return { error: error.cause, hints: undefined };
  if (error instanceof APIError && !(error instanceof APIUserAbortError)) {
    const body = error.error;
    const type = error.type ?? undefined;
    const statusCode =
      error.status ??
      (type !== undefined && Object.hasOwn(statusOfErrorType, type)
        ? statusOfErrorType[type]
        : undefined);
    const connection = error.status === undefined && type === undefined;
    const detail =
      error.apiMessage ??
      (connection
        ? describeConnectionFailure(error.cause ?? error)
        : httpErrorDetail(errorMessage(error.cause ?? error), error.status));
    const label = statusCode === undefined ? '' : ` ${statusCode}`;
    const kind = type === undefined ? '' : ` (${type})`;
    const message = connection
      ? `Anthropic connection failed: ${detail}`
      : `Anthropic API error${label}${kind}: ${detail}`;
    // What a caller naming the provider (and the status) itself says after it.
    const said = connection ? `connection failed: ${detail}` : detail;
    // "prompt is too long" (400 invalid_request_error), or a body over the size limit (413).
    const contextOverflow =
      statusCode === 413 ||
      (statusCode === 400 && type === 'invalid_request_error' && isContextOverflowText(detail));
    return {
      error: new ProviderError(message, {
        provider: providerId,
        cause: error,
        detail: said,
        ...(statusCode === undefined ? {} : { statusCode }),
        ...(contextOverflow ? { contextOverflow } : {}),
        isRetryable: connection || isRetryableStatus(statusCode),
        ...(body === undefined ? {} : { responseBody: JSON.stringify(body) }),
      }),
      hints: error.headers,
    };
  }
  if (isConnectionFailure(error)) {
    return {
      error: new ProviderError(`Anthropic connection lost: ${describeConnectionFailure(error)}`, {
        provider: providerId,
        cause: error,
        isRetryable: true,
        detail: `connection lost: ${describeConnectionFailure(error)}`,
      }),
      hints: undefined,
    };
  }
  const malformed = error instanceof SyntaxError;
  const said = malformed
    ? `sent a malformed stream chunk: ${error.message}`
    : `call failed: ${errorMessage(error)}`;
  return {
    error: new ProviderError(`Anthropic ${said}`, {
      provider: providerId,
      cause: error,
      isRetryable: false,
      detail: said,
    }),
    hints: undefined,
  };
}
