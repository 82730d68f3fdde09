// An HTTP server's answers bounded in size: the SDK reads a JSON answer whole and an SSE event
// until its blank line, so a server that never stops sending filled the client's memory. And the
// POSTs waiting for its answer bounded in number: each holds a socket.
import { AgentError } from '@agent/core';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';

const tooLargeBrand = Symbol.for('agent.error.McpMessageTooLarge');

/**
 * The error (or cause) that says a bound of {@link boundedFetch} was passed (a message's size,
 * the POSTs waiting for an answer), if any: the connection is then given up.
 * The SDK reports a broken event stream by a new error holding only the old one's text
 * (`SSE stream disconnected: …`), so that text is recognised too.
 */
export function messageTooLarge(error: unknown): Error | undefined {
  for (let cause = error, hops = 0; cause instanceof Error && hops < 8; hops++) {
    if ((cause as { [tooLargeBrand]?: true })[tooLargeBrand] === true) return cause;
    const quoted = tooLargeText.exec(cause.message);
    if (quoted !== null) return new AgentError(quoted[0]);
    cause = cause.cause;
  }
  return undefined;
}

const tooLargeText =
  /MCP server ".*" sent a message over the \d+-byte limit; raise maxMessageBytes to accept it|MCP server ".*" stopped accepting messages: \d+ sent to it wait for its answer/s;

/**
 * Most messages sent to one HTTP server (POSTs) waiting for its answer at once. A server that
 * sends requests (pings) over its event stream and never answers the POSTs carrying our
 * replies had each one hold a socket: thousands, until the process ran out of descriptors.
 */
export const maxPendingPosts = 256;

/**
 * A fetch whose response bodies end in an error once one message passes `maxBytes`: a JSON
 * answer counted whole, an event stream counted from its last blank line (an event), so a
 * long-lived stream of small events lives on. Redirects are passed on as they are. At most
 * {@link maxPendingPosts} POSTs wait for the server's answer at once; one more fails with an
 * error {@link messageTooLarge} recognises, so the connection is given up.
 */
export function boundedFetch(
  inner: FetchLike,
  options: { server: string; maxBytes: number },
): FetchLike {
  let pending = 0;
  return async (url, init) => {
    const posting = (init?.method ?? 'GET').toUpperCase() === 'POST';
    if (posting && pending >= maxPendingPosts) {
      const error = new AgentError(
        `MCP server "${options.server}" stopped accepting messages: ${maxPendingPosts} sent to it wait for its answer`,
      );
      Object.defineProperty(error, tooLargeBrand, { value: true });
      throw error;
    }
    if (posting) pending++;
    let response: Response;
    try {
      response = await inner(url, init);
    } finally {
      if (posting) pending--;
    }
    if (response.body === null || (response.status >= 300 && response.status < 400))
      return response;
    const eventStream = (response.headers.get('content-type') ?? '').includes('text/event-stream');
    const counter = eventStream
      ? eventCounter()
      : (chunk: Uint8Array, before: number) => before + chunk.byteLength;
    let size = 0;
    const limit = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        size = counter(chunk, size);
        if (size > options.maxBytes) {
          const error = new AgentError(
            `MCP server "${options.server}" sent a message over the ${options.maxBytes}-byte limit; raise maxMessageBytes to accept it`,
          );
          Object.defineProperty(error, tooLargeBrand, { value: true });
          controller.error(error);
          return;
        }
        controller.enqueue(chunk);
      },
    });
    return new Response(response.body.pipeThrough(limit), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

/** Counts the bytes of an event stream since its last blank line (`\n\n`, `\r\n\r\n`, `\r\r`). */
function eventCounter(): (chunk: Uint8Array, size: number) => number {
  // The last two bytes before this chunk, so a blank line split between two chunks is seen.
  let tail: number[] = [];
  return (chunk, size) => {
    const at = (index: number) => (index >= 0 ? chunk[index] : tail[tail.length + index]);
    let counted = size + chunk.byteLength;
    for (let index = chunk.length - 1; index >= 0; index--) {
      const byte = chunk[index];
      if (byte !== 10 && byte !== 13) continue;
      const before = at(index - 1);
      if (
        (byte === 10 && before === 10) ||
        (byte === 13 && before === 13) ||
        (byte === 10 && before === 13 && at(index - 2) === 10)
      ) {
        counted = chunk.length - 1 - index;
        break;
      }
    }
    tail = [...tail, ...chunk.subarray(Math.max(0, chunk.length - 2))].slice(-2);
    return counted;
  };
}
