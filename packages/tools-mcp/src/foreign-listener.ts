/**
 * Credentials for a server on a loopback address go only to a process of this user (or root):
 * any user of the machine can listen on a loopback port the user's own server left free (it was
 * not started yet, or stopped), or on `[::1]` beside a server on 127.0.0.1 for a `localhost` URL,
 * and would be sent the server's configured headers (an API key, `Authorization`) and OAuth
 * tokens with the first request. On Linux, where the kernel's socket tables name the owner of a
 * listening socket, such a request fails instead, naming the user (`@agent/core/loopback`).
 */

import { foreignListener, loopbackPort } from '@agent/core/loopback';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';

/**
 * A fetch that refuses to send `names` (the configured headers) or an `Authorization` header to
 * `server`'s origin while a process of another user listens on its loopback port.
 */
export function refuseForeignLoopbackListener(
  inner: FetchLike,
  server: URL,
  names: readonly string[],
): FetchLike {
  const port = loopbackPort(server);
  if (port === undefined) return inner;
  const credentials = new Set(['authorization', ...names.map((name) => name.toLowerCase())]);
  return (url, init) => {
    if (new URL(String(url)).origin !== server.origin || init?.headers === undefined)
      return inner(url, init);
    const sent = [...new Headers(init.headers).keys()].some((name) => credentials.has(name));
    const uid = sent ? foreignListener(port) : undefined;
    if (uid === undefined) return inner(url, init);
    return Promise.reject(
      new Error(
        `the process listening on port ${port} of ${server.hostname} belongs to another user (uid ${uid}), not to you: the server's credentials were not sent to it. Start the server (as yourself), or use another port`,
      ),
    );
  };
}
