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
  /** Resolves once `count` requests have been received (at once if they have). */
  requestsReceived(count: number): Promise<void>;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

// Servers started and not yet closed, so one `afterEach(closeWireServers)` cleans up every test.
const openServers = new Set<WireServer>();

/**
 * Starts a real HTTP server on 127.0.0.1, port 0. Give a handler, or a list of responses
 * served in order (the last one repeats). `closeWireServers` closes it if the test does not.
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
  const requestWaiters = new Set<{ count: number; wake: () => void }>();
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
      for (const waiter of [...requestWaiters]) {
        if (requests.length < waiter.count) continue;
        requestWaiters.delete(waiter);
        waiter.wake();
      }
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

  // Closing twice (by the test and by closeWireServers) waits for the same shutdown.
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      openServers.delete(wire);
      for (const timer of timers) clearTimeout(timer);
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    })();
    return closing;
  };
  const wire: WireServer = {
    url: `http://127.0.0.1:${port}`,
    requests,
    get closedConnections() {
      return closedConnections;
    },
    nextConnectionClose: () => new Promise<void>((resolve) => closeWaiters.push(resolve)),
    requestsReceived: (count) =>
      requests.length >= count
        ? Promise.resolve()
        : new Promise<void>((wake) => requestWaiters.add({ count, wake })),
    close,
    [Symbol.asyncDispose]: close,
  };
  openServers.add(wire);
  return wire;
}

/** Closes every server `startWireServer` started and nobody closed: `afterEach(closeWireServers)`. */
export async function closeWireServers(): Promise<void> {
  await Promise.all([...openServers].map((server) => server.close()));
}

/** Milliseconds between the arrival of two recorded requests [0 and 1]; throws if either is missing. */
export function requestGapMs(
  server: Pick<WireServer, 'requests'>,
  first = 0,
  second = first + 1,
): number {
  const from = server.requests[first];
  const to = server.requests[second];
  if (from === undefined || to === undefined)
    throw new Error(
      `requestGapMs: wanted requests ${first} and ${second}, but the server recorded ${server.requests.length}`,
    );
  return to.receivedAt - from.receivedAt;
}

/** Response headers of a server-sent event stream, for `WireResponse.headers`. */
export const SSE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-type': 'text/event-stream',
});

/** Response headers of a JSON body (e.g. a vendor error); spread it to add more. */
export const JSON_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-type': 'application/json',
});

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

/**
 * Returns a reader of the SSE fixtures in `directory` (see `readSseFixture`), e.g.
 * `fixtureReader(new URL('./__fixtures__/', import.meta.url))`. The URL must end in `/`.
 */
export function fixtureReader(directory: URL): (name: string) => string[] {
  // Without the slash, `new URL(name, directory)` would replace the folder's last segment.
  if (!directory.pathname.endsWith('/'))
    throw new Error(`fixtureReader: ${directory.href} must end in "/" to be read as a folder`);
  return (name) => readSseFixture(new URL(name, directory));
}

/** Drains a stream (e.g. `provider.stream(request)`) into an array of its events, in order. */
export async function collectEvents<TEvent>(stream: AsyncIterable<TEvent>): Promise<TEvent[]> {
  const events: TEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

/** The terminal events of a provider stream, as `StreamEvent` of `@agent/core` defines them. */
export type TerminalEvent<TEvent extends { type: string }> = Extract<
  TEvent,
  { type: 'done' | 'error' }
>;

/** Options of `terminalEvent`. */
export interface TerminalEventOptions {
  /** Also require the terminal event to be the last event of the stream [false]. */
  requireLast?: boolean;
}

/**
 * The one `done` or `error` event of a stream's events; throws an Error that lists the event
 * types unless there is exactly one (and, with `requireLast`, unless it comes last).
 */
export function terminalEvent<TEvent extends { type: string }>(
  events: readonly TEvent[],
  options: TerminalEventOptions = {},
): TerminalEvent<TEvent> {
  const ends = events.filter(
    (event): event is TerminalEvent<TEvent> => event.type === 'done' || event.type === 'error',
  );
  const end = ends[0];
  const types = () => `[${events.map((event) => event.type).join(', ')}]`;
  if (end === undefined || ends.length !== 1)
    throw new Error(
      `terminalEvent: expected exactly one done/error event, got ${ends.length} in ${types()}`,
    );
  if (options.requireLast === true && events.at(-1) !== end)
    throw new Error(`terminalEvent: the ${end.type} event is not the last event in ${types()}`);
  return end;
}
