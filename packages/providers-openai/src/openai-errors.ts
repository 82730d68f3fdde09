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
import { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';

/** Error codes in a mid-stream `error` event that mean "try again". */
const retryableStreamCodes = new Set([
  'server_error',
  'rate_limit_exceeded',
  'overloaded',
  'service_unavailable',
  // What servers copying Anthropic's or their own names send.
  'overloaded_error',
  'rate_limit_error',
  'internal_server_error',
  'api_error',
]);

/** An HTTP status carried as an error's `code` (`529`, `"503"`), as OpenAI-compatible servers send it mid-stream. */
function statusOfCode(code: unknown): number | undefined {
  const status = typeof code === 'string' && /^\d{3}$/.test(code) ? Number(code) : code;
  return typeof status === 'number' && Number.isInteger(status) && status >= 400 && status <= 599
    ? status
    : undefined;
}

/**
 * The error an error chunk of a Chat Completions stream stands for: vLLM's
 * `{"object": "error", "message", "code"}` and the like. Its `code` may be an HTTP status (then it
 * decides retrying, as a response's status would) or a name.
 */
export function errorChunkError(body: Record<string, unknown>): ProviderError {
  const message = vendorMessageOf(body) ?? 'an error without a message';
  const nested = typeof body.error === 'object' && body.error !== null ? body.error : {};
  const status = statusOfCode(body.code) ?? statusOfCode((nested as { code?: unknown }).code);
  const code = [body.code, body.type, (nested as { type?: unknown }).type].find(
    (value): value is string => typeof value === 'string' && statusOfCode(value) === undefined,
  );
  return new ProviderError(`Stream error: ${message}`, {
    isRetryable:
      status === undefined ? retryableStreamCodes.has(code ?? '') : isRetryableStatus(status),
    ...(status === undefined ? {} : { statusCode: status }),
    responseBody: JSON.stringify(body),
    ...(isContextOverflow(code ?? '', message) ? { contextOverflow: true } : {}),
  });
}

/** Headers of an HTTP error, for `retry-after`. */
export function errorHeaders(error: unknown): Headers | undefined {
  return error instanceof APIError && error.headers instanceof Headers ? error.headers : undefined;
}

/**
 * Turns anything the SDK (or the network) threw into a typed `ProviderError` plus its retry
 * hints (the response headers, for `retry-after`) — the same shape in every provider package.
 * HTTP errors keep their status, the vendor's message and body; connection resets and timeouts
 * are retryable; a malformed stream is not.
 */
export function toProviderError(
  error: unknown,
  provider: string,
): { error: ProviderError; hints: RetryHints } {
  return { error: typedError(error, provider), hints: errorHeaders(error) };
}

function typedError(error: unknown, provider: string): ProviderError {
  if (ProviderError.isInstance(error)) return error;
  // Our own check inside the client's fetch (a 200 that is no event stream), wrapped by the SDK.
  if (error instanceof APIConnectionError && ProviderError.isInstance(error.cause))
    return error.cause;
  if (error instanceof APIConnectionTimeoutError) {
    return framed(provider, 'request timed out', {
      provider,
      isRetryable: true,
      cause: error,
    });
  }
  if (error instanceof APIConnectionError) {
    const cause = error.cause === undefined ? '' : `: ${describeConnectionFailure(error.cause)}`;
    return framed(provider, `connection failed${cause}`, {
      provider,
      isRetryable: true,
      cause: error,
    });
  }
  if (error instanceof APIError) {
    const body = error.error;
    const vendorMessage = vendorMessageOf(body) ?? error.message;
    const options = {
      provider,
      cause: error,
      ...(body === undefined ? {} : { responseBody: JSON.stringify(body) }),
    };
    const code =
      typeof error.code === 'string' && statusOfCode(error.code) === undefined
        ? error.code
        : (error.type ?? '');
    if (error.status === undefined) {
      // An error event mid-stream: its code may be the HTTP status it stands for (`529`).
      const status =
        statusOfCode(error.code) ?? statusOfCode((body as { code?: unknown } | undefined)?.code);
      return framed(provider, `stream error: ${vendorMessage}`, {
        ...options,
        isRetryable:
          status === undefined ? retryableStreamCodes.has(code) : isRetryableStatus(status),
        ...(status === undefined ? {} : { statusCode: status }),
        ...(isContextOverflow(code, vendorMessage) ? { contextOverflow: true } : {}),
      });
    }
    const overflow =
      error.status === 413 || (error.status === 400 && isContextOverflow(code, vendorMessage));
    // The server's words: its JSON message, its plain-text body, else the SDK's message without
    // the status it put first.
    const detail =
      vendorMessageOf(body) ??
      (typeof body === 'string' && body.trim() !== ''
        ? body.trim()
        : httpErrorDetail(error.message, error.status));
    return new ProviderError(`${label(provider)} API error ${error.status}: ${detail}`, {
      ...options,
      detail,
      statusCode: error.status,
      isRetryable: isRetryableStatus(error.status),
      ...(overflow ? { contextOverflow: true } : {}),
    });
  }
  if (error instanceof SyntaxError) {
    return framed(provider, `sent a malformed stream: ${error.message}`, {
      provider,
      isRetryable: false,
      cause: error,
    });
  }
  if (isConnectionFailure(error)) {
    return framed(provider, `connection lost mid-stream: ${describeConnectionFailure(error)}`, {
      provider,
      isRetryable: true,
      cause: error,
    });
  }
  return framed(provider, `request failed: ${errorMessage(error)}`, {
    provider,
    isRetryable: false,
    cause: error,
  });
}

/**
 * OpenAI's `context_length_exceeded` code, or the wording OpenAI-compatible servers use for it
 * (vLLM, llama.cpp, OpenRouter, Groq, LM Studio — see `isContextOverflowText`).
 */
export function isContextOverflow(code: string, message: string): boolean {
  return code === 'context_length_exceeded' || isContextOverflowText(message);
}

/**
 * An error whose message is the server's label and `rest` (`OpenAI connection failed: …`), with
 * `rest` as its `detail`: a caller that names the provider itself says the label once.
 */
function framed(
  provider: string,
  rest: string,
  options: ConstructorParameters<typeof ProviderError>[1],
): ProviderError {
  return new ProviderError(`${label(provider)} ${rest}`, { ...options, detail: rest });
}

function label(provider: string): string {
  return provider === 'openai' ? 'OpenAI' : `OpenAI-compatible server "${provider}"`;
}

function vendorMessageOf(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const record = body as Record<string, unknown>;
  if (typeof record.message === 'string') return record.message;
  const nested = record.error;
  if (typeof nested === 'string') return nested;
  if (typeof nested === 'object' && nested !== null) {
    const message = (nested as Record<string, unknown>).message;
    if (typeof message === 'string') return message;
  }
  return undefined;
}
