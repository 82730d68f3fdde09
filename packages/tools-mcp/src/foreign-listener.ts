/**
 * A server on a loopback address is talked to only while a process of this user (or root, or a
 * system account) holds its port: any user of the machine can listen on a loopback port the
 * user's own server left free (it was not started yet, or stopped), or on `[::1]` beside a server
 * on 127.0.0.1 for a `localhost` URL, and would be sent the server's configured headers (an API
 * key, `Authorization`) and OAuth tokens with the first request — and, credentials or not, the
 * arguments of every tool call (what the model read of the user's files), while its tool list and
 * results steered the model. On Linux, where the kernel's socket tables name the owner of a
 * listening socket, every request to it fails instead, naming the user (`@agent/core/loopback`).
 */

import { foreignListener, loopbackPort } from '@agent/core/loopback';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';

/**
 * A fetch that sends nothing to `server`'s origin while a process of another user listens on its
 * loopback port; `names` (the configured headers) are named in the refusal when they would have
 * gone along.
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
    if (new URL(String(url)).origin !== server.origin) return inner(url, init);
    const uid = foreignListener(port);
    if (uid === undefined) return inner(url, init);
    const sent = [...new Headers(init?.headers).keys()].some((name) => credentials.has(name));
    return Promise.reject(
      new Error(
        `the process listening on port ${port} of ${server.hostname} belongs to another user (uid ${uid}), not to you: nothing was sent to it (${sent ? "the server's credentials, " : ''}the tool calls and their arguments would go to it, its tools would reach the model). Start the server (as yourself), or use another port`,
      ),
    );
  };
}
