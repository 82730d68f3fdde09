import { errorMessage, isConnectionFailure, isRetryableStatus, ProviderError } from '@agent/core';
import { APICallError } from '@ai-sdk/provider';

/**
 * Anything an AI SDK model threw or streamed as an `error` part, as our `ProviderError` with
 * retry hints: an `APICallError` keeps its status, retryability, body and response headers
 * (`retry-after`); a connection reset is retryable; everything else is not.
 */
export function toProviderError(
  caught: unknown,
  providerId: string,
): { error: ProviderError; hints: Record<string, string> | undefined } {
  if (ProviderError.isInstance(caught)) return { error: caught, hints: undefined };
  if (APICallError.isInstance(caught)) {
    const statusCode = caught.statusCode;
    return {
      error: new ProviderError(caught.message, {
        provider: providerId,
        cause: caught,
        isRetryable:
          caught.isRetryable || (statusCode !== undefined && isRetryableStatus(statusCode)),
        ...(statusCode === undefined ? {} : { statusCode }),
        ...(caught.responseBody === undefined ? {} : { responseBody: caught.responseBody }),
      }),
      hints: caught.responseHeaders,
    };
  }
  return {
    error: new ProviderError(errorMessage(caught), {
      provider: providerId,
      cause: caught,
      isRetryable: isConnectionFailure(caught),
    }),
    hints: undefined,
  };
}
