import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** A request the server received, kept for assertions. */
export interface RecordedRequest {
  method: string;
  /** Path and query, e.g. `/v1/messages?beta=true`. */
  url: string;
  headers: IncomingHttpHeaders;
  /** Raw body text. */
  body: string;
  /** The body parsed as JSON, when it is JSON. */
  json: unknown;
  /** Milliseconds since the epoch when the request arrived. */
  receivedAt: number;
}

/** How to answer one request. */
export interface WireResponse {
  /** [200] */
  status?: number;
  headers?: Record<string, string>;
  /** The body, or its chunks written one after another (e.g. SSE events). */
  body?: string | readonly string[];
  /** Wait in ms between chunks [0]. */
  chunkDelayMs?: number;
  /** Destroy the connection after writing this many chunks (a stream cut mid-way). */
  cutAfterChunks?: number;
  /** Write the headers and these many chunks, then never finish (for abort tests). */
  hangAfterChunks?: number;
}

/** Picks the answer for the `index`-th request (0-based). */
export type WireHandler = (
  request: RecordedRequest,
  index: number,
) => WireResponse | Promise<WireResponse>;

/** A running server; `close()` it in `afterEach` (or `await using`). */
export interface WireServer {
  /** e.g. `http://127.0.0.1:40123`. */
  url: string;
  /** Every request received, in order. */
  requests: RecordedRequest[];
  /** Number of client connections that were closed (by either side). */
  readonly closedConnections: number;
  /** Resolves when the next client connection closes. */
  nextConnectionClose(): Promise<void>;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Starts a real HTTP server on 127.0.0.1, port 0. Give a handler, or a list of responses
 * served in order (the last one repeats).
 */
export async function startWireServer(
  answer: WireHandler | readonly WireResponse[],
): Promise<WireServer> {
  const handler: WireHandler =
    typeof answer === 'function'
      ? answer
      : (_request, index) =>
          answer[Math.min(index, answer.length - 1)] ?? {
            status: 500,
            body: 'no response scripted',
          };
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  let closedConnections = 0;
  let closeWaiters: Array<() => void> = [];
  const timers = new Set<ReturnType<typeof setTimeout>>();

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: unknown;
      try {
        json = body === '' ? undefined : JSON.parse(body);
      } catch {
        json = undefined;
      }
      const recorded: RecordedRequest = {
        method: request.method ?? 'GET',
        url: request.url ?? '/',
        headers: request.headers,
        body,
        json,
        receivedAt: Date.now(),
      };
      const index = requests.length;
      requests.push(recorded);
      Promise.resolve(handler(recorded, index))
        .then((wire) => respond(response, wire))
        .catch((error: unknown) => {
          response.writeHead(500, { 'content-type': 'text/plain' });
          response.end(`wire server handler failed: ${String(error)}`);
        });
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => {
      sockets.delete(socket);
      closedConnections++;
      const waiters = closeWaiters;
      closeWaiters = [];
      for (const wake of waiters) wake();
    });
  });

  const delay = (ms: number) =>
    new Promise<void>((resolve) => {
      if (ms <= 0) return resolve();
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timers.add(timer);
    });

  async function respond(response: ServerResponse, wire: WireResponse): Promise<void> {
    const body = wire.body ?? '';
    const parts = typeof body === 'string' ? [body] : body;
    response.writeHead(wire.status ?? 200, wire.headers ?? {});
    response.flushHeaders();
    for (let index = 0; index < parts.length; index++) {
      if (wire.cutAfterChunks !== undefined && index >= wire.cutAfterChunks) {
        response.socket?.destroy();
        return;
      }
      if (wire.hangAfterChunks !== undefined && index >= wire.hangAfterChunks) return;
      if (index > 0) await delay(wire.chunkDelayMs ?? 0);
      if (response.destroyed) return;
      response.write(parts[index]);
    }
    if (wire.cutAfterChunks !== undefined && parts.length >= wire.cutAfterChunks) {
      response.socket?.destroy();
      return;
    }
    if (wire.hangAfterChunks !== undefined) return;
    response.end();
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const close = async () => {
    for (const timer of timers) clearTimeout(timer);
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    get closedConnections() {
      return closedConnections;
    },
    nextConnectionClose: () => new Promise<void>((resolve) => closeWaiters.push(resolve)),
    close,
    [Symbol.asyncDispose]: close,
  };
}

/**
 * Reads a recorded SSE transcript and splits it into events (each ending in a blank line),
 * so they can be written as separate chunks. Lines starting with `#` before the first event
 * are a header comment (provenance) and are dropped.
 */
export function readSseFixture(path: string | URL): string[] {
  const text = readFileSync(path, 'utf8').replaceAll('\r\n', '\n');
  const lines = text.split('\n');
  let start = 0;
  while (
    start < lines.length &&
    ((lines[start] ?? '').startsWith('#') || (lines[start] ?? '').trim() === '')
  )
    start++;
  return lines
    .slice(start)
    .join('\n')
    .split(/\n\n+/)
    .filter((event) => event.trim() !== '')
    .map((event) => `${event}\n\n`);
}

/** Builds SSE chunks from `{ event?, data }` records (data objects are JSON-encoded). */
export function sseEvents(events: ReadonlyArray<{ event?: string; data: unknown }>): string[] {
  return events.map(({ event, data }) => {
    const payload = typeof data === 'string' ? data : JSON.stringify(data);
    return `${event === undefined ? '' : `event: ${event}\n`}data: ${payload}\n\n`;
  });
}
