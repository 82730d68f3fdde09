/**
 * The `headers` of an HTTP server's configuration (an API key, a static `Authorization`) are for
 * that server alone. The SDK adds them to every request its transport makes — also, once the
 * server answers 401, to the OAuth discovery, registration and token requests at whatever hosts
 * the server's metadata names — so a server (or its metadata) could have them sent to a third
 * party. Requests to any other origin than the server's go without them.
 */
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';

/** A fetch that drops `names` from requests whose origin is not `origin`. */
export function scopeHeadersToOrigin(
  inner: FetchLike,
  origin: string,
  names: readonly string[],
): FetchLike {
  if (names.length === 0) return inner;
  return (url, init) => {
    if (new URL(String(url)).origin === origin || init?.headers === undefined)
      return inner(url, init);
    const headers = new Headers(init.headers);
    for (const name of names) headers.delete(name);
    return inner(url, { ...init, headers });
  };
}
