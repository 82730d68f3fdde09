/**
 * A provider's key goes to the origin of its base URL and nowhere else. `fetch` follows a redirect
 * to any origin and drops only `Authorization` (and cookies) on the way: Gemini's
 * `x-goog-api-key`, an Azure `api-key`, a gateway's `x-api-key` given as a provider header, and a
 * 307's body went along to whatever host a `Location` named — a proxy, a misconfigured gateway or
 * a base URL typed as `http://` (redirected to `https://`, another origin) sent the key on. A model
 * API has no reason to send its client to another origin, so such a redirect is refused with an
 * error naming where it pointed; redirects within the origin are followed as fetch would.
 */
import { ProviderError } from './errors.js';

/** Options of {@link sameOriginFetch}. */
export interface SameOriginFetchOptions {
  /** The provider id named in the refusal (`anthropic`, `openai`…). */
  provider: string;
  /** Redirects followed within the origin before giving up [5]. */
  maxRedirects?: number;
}

type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

const redirectStatuses = new Set([301, 302, 303, 307, 308]);

/**
 * `baseFetch` with redirects followed by hand, within the origin of each request's URL only: a
 * redirect to another origin (scheme, host or port) rejects with a non-retryable `ProviderError`
 * whose `statusCode` is the redirect's, before anything is sent there. A 303, or a 301/302 after a
 * POST, becomes a GET without a body (as fetch does). A `Request` input is sent as it is with
 * `redirect: 'manual'`, and its redirects are refused whatever their origin (its body cannot be
 * sent twice).
 */
export function sameOriginFetch<F extends Fetch>(baseFetch: F, options: SameOriginFetchOptions): F {
  const maxRedirects = options.maxRedirects ?? 5;
  const refuse = (message: string, status: number) =>
    new ProviderError(message, {
      provider: options.provider,
      statusCode: status,
      isRetryable: false,
    });
  const guarded = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const start = new URL(input instanceof Request ? input.url : String(input));
    let url = start;
    let request: RequestInit = { ...init, redirect: 'manual' };
    for (let hop = 0; ; hop++) {
      const response = await baseFetch(
        hop === 0 && input instanceof Request ? input : url,
        request,
      );
      const location = response.headers.get('location');
      if (!redirectStatuses.has(response.status) || location === null) return response;
      await response.body?.cancel().catch(() => undefined);
      let next: URL;
      try {
        next = new URL(location, url);
      } catch {
        throw refuse(
          `${options.provider}: ${start.origin} answered ${response.status} with a Location that is no URL`,
          response.status,
        );
      }
      if (next.origin !== start.origin)
        throw refuse(
          `${options.provider}: the API at ${start.origin} redirected (${response.status}) to ${next.origin}, which is not followed: the API key is sent to the base URL's origin only. If the API really is at ${next.origin}, set the base URL to it`,
          response.status,
        );
      if (input instanceof Request || hop >= maxRedirects)
        throw refuse(
          `${options.provider}: the API at ${start.origin} redirected more than ${input instanceof Request ? 0 : maxRedirects} times`,
          response.status,
        );
      const method = (request.method ?? 'GET').toUpperCase();
      if (response.status === 303 || (method === 'POST' && response.status <= 302)) {
        const { body: _body, ...rest } = request;
        request = { ...rest, method: 'GET' };
      }
      url = next;
    }
  };
  return guarded as F;
}
