import { isContextOverflowText } from './context-overflow.js';
import { ProviderError } from './errors.js';
import { isRetryableStatus } from './retry.js';

/** Most of a body read to say what came instead of an event stream (bytes). */
const maxBodyBytes = 16 * 1024;

/** Longest excerpt of such a body quoted in the error. */
const maxExcerptChars = 300;

/** The vendor's message and status in a JSON error body (`{"error": {"message", "code"}}` and the like). */
function errorOf(value: unknown): { message: string; status: number | undefined } | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const record = value as Record<string, unknown>;
  const nested =
    record.error !== null && typeof record.error === 'object'
      ? (record.error as Record<string, unknown>)
      : undefined;
  const message =
    (typeof nested?.message === 'string' ? nested.message : undefined) ??
    (typeof record.error === 'string' ? record.error : undefined) ??
    (record.object === 'error' && typeof record.message === 'string' ? record.message : undefined);
  if (message === undefined) return undefined;
  const code = nested?.code ?? record.code;
  const status =
    typeof code === 'number' && code >= 400 && code <= 599
      ? code
      : typeof code === 'string' && /^[45]\d\d$/.test(code)
        ? Number(code)
        : undefined;
  return { message, status };
}

async function bodyText(response: Response): Promise<string> {
  const reader = response.body?.getReader();
  if (reader === undefined) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < maxBodyBytes) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return new TextDecoder().decode(bytes.subarray(0, maxBodyBytes));
}

function excerpt(text: string): string {
  // An HTML page (a proxy's, a captive portal's) is shown as its words.
  const words = text
    .replace(/<(script|style)[\s\S]*?<\/\1>/gi, ' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return words.length > maxExcerptChars ? `${words.slice(0, maxExcerptChars)}…` : words;
}

/**
 * For a provider that asked for a streamed answer: the error a successful response stands for
 * when it is a JSON document or an HTML page rather than an event stream — a proxy's or a captive
 * portal's page, a server that ignores `stream: true`, a gateway's `200` carrying an error. The
 * SDKs read such a body as an empty stream ("ended before the model finished"), losing what it
 * said. The body is read (at most 16 KiB) and the response consumed; `undefined` (nothing read)
 * for an error status or any other content type, which the SDK reads as usual.
 */
export async function notAnEventStream(
  response: Response,
  provider: string,
): Promise<ProviderError | undefined> {
  if (!response.ok) return undefined;
  const type = (response.headers.get('content-type') ?? '').toLowerCase();
  const json = /^application\/(?:[\w.+-]*\+)?json\b/.test(type);
  if (!json && !type.startsWith('text/html')) return undefined;
  const text = await bodyText(response).catch(() => '');
  let parsed: unknown;
  try {
    parsed = json ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  const error = errorOf(parsed);
  const kind = type.split(';')[0] ?? type;
  if (error !== undefined)
    return new ProviderError(
      `The server answered ${response.status} with an error instead of an event stream: ${excerpt(error.message)}`,
      {
        provider,
        ...(error.status === undefined ? {} : { statusCode: error.status }),
        isRetryable: error.status !== undefined && isRetryableStatus(error.status),
        responseBody: text,
        ...(isContextOverflowText(error.message) ? { contextOverflow: true } : {}),
      },
    );
  return new ProviderError(
    `The server answered ${response.status} with ${kind}, not an event stream${json ? ' (does it support streamed answers?)' : ' (a proxy or login page?)'}: ${excerpt(text) || '(empty)'}`,
    { provider, statusCode: response.status, isRetryable: false, responseBody: text },
  );
}
