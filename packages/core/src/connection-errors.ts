import { errorMessage } from './errors.js';

const connectionFailureCodes = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

/**
 * True when an error (or one of its causes, five levels deep) is a dropped or refused
 * connection: Node and undici error codes, and fetch's `terminated` / `fetch failed`.
 */
export function isConnectionFailure(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current !== null && typeof current === 'object'; depth++) {
    const { code, message } = current as { code?: unknown; message?: unknown };
    if (typeof code === 'string' && connectionFailureCodes.has(code)) return true;
    if (
      typeof message === 'string' &&
      /^(terminated|fetch failed|other side closed)$/i.test(message)
    )
      return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * A failed connection in words, with what lies under fetch's bare `fetch failed`: each cause's
 * message (and its code when the message lacks it), four levels deep, repeats dropped —
 * `fetch failed: getaddrinfo ENOTFOUND api.example.com`, `fetch failed: connect ECONNREFUSED
 * 127.0.0.1:9`.
 */
export function describeConnectionFailure(error: unknown): string {
  const parts: string[] = [];
  for (let current = error, depth = 0; current !== undefined && depth < 4; depth++) {
    if (typeof current !== 'object' || current === null) break;
    const message = errorMessage(current);
    const code = (current as { code?: unknown }).code;
    parts.push(
      typeof code === 'string' && !message.includes(code) ? `${message} (${code})` : message,
    );
    current = (current as { cause?: unknown }).cause;
  }
  return [...new Set(parts)].join(': ');
}
