import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import {
  closeWireServers,
  collectEvents,
  fixtureReader,
  JSON_HEADERS,
  requestGapMs,
  SSE_HEADERS,
  sseEvents,
  startWireServer,
  terminalEvent,
  type WireServer,
} from './index.js';

let server: WireServer | undefined;
afterEach(closeWireServers);

describe('startWireServer', () => {
  it('records requests and replays chunks in order', async () => {
    server = await startWireServer([
      {
        headers: { 'content-type': 'text/event-stream' },
        body: sseEvents([{ event: 'a', data: { n: 1 } }, { data: '[DONE]' }]),
      },
    ]);
    const response = await fetch(`${server.url}/v1/x?y=1`, {
      method: 'POST',
      body: JSON.stringify({ hello: 'world' }),
    });
    expect(await response.text()).toBe('event: a\ndata: {"n":1}\n\ndata: [DONE]\n\n');
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]?.url).toBe('/v1/x?y=1');
    expect(server.requests[0]?.json).toEqual({ hello: 'world' });
  });

  it('cuts the connection after the given number of chunks', async () => {
    server = await startWireServer([{ body: ['one', 'two', 'three'], cutAfterChunks: 2 }]);
    const response = await fetch(server.url);
    await expect(response.text()).rejects.toThrow();
  });

  it('sees a client abort as a closed connection', async () => {
    server = await startWireServer([{ body: ['first'], hangAfterChunks: 1 }]);
    const controller = new AbortController();
    const closed = server.nextConnectionClose();
    const response = await fetch(server.url, { signal: controller.signal });
    const reader = response.body?.getReader();
    await reader?.read();
    controller.abort();
    await closed;
    expect(server.closedConnections).toBeGreaterThanOrEqual(1);
  });
});

describe('closeWireServers', () => {
  it('closes every server still open, and a later close() resolves too', async () => {
    const first = await startWireServer([{ body: 'one' }]);
    const second = await startWireServer([{ body: 'two' }]);
    expect(await (await fetch(first.url)).text()).toBe('one');
    await closeWireServers();
    await expect(fetch(first.url)).rejects.toThrow();
    await expect(fetch(second.url)).rejects.toThrow();
    await expect(first.close()).resolves.toBeUndefined();
  });
});

describe('requestGapMs', () => {
  it('subtracts arrival times, and throws when a request is missing', async () => {
    const wire = await startWireServer([{ body: 'ok' }]);
    await fetch(wire.url);
    expect(() => requestGapMs(wire)).toThrow(
      'requestGapMs: wanted requests 0 and 1, but the server recorded 1',
    );
    await fetch(wire.url);
    await fetch(wire.url);
    const [first, second, third] = wire.requests.map((request) => request.receivedAt);
    expect(requestGapMs(wire)).toBe((second ?? NaN) - (first ?? NaN));
    expect(requestGapMs(wire, 1)).toBe((third ?? NaN) - (second ?? NaN));
    expect(requestGapMs(wire, 0, 2)).toBe((third ?? NaN) - (first ?? NaN));
  });
});

describe('SSE_HEADERS and JSON_HEADERS', () => {
  it('set the content type of a response and cannot be changed by a test', async () => {
    server = await startWireServer([
      { headers: SSE_HEADERS, body: 'data: 1\n\n' },
      { status: 429, headers: { ...JSON_HEADERS, 'retry-after': '1' }, body: '{}' },
    ]);
    expect((await fetch(server.url)).headers.get('content-type')).toBe('text/event-stream');
    const error = await fetch(server.url);
    expect(error.headers.get('content-type')).toBe('application/json');
    expect(error.headers.get('retry-after')).toBe('1');
    expect(Object.isFrozen(SSE_HEADERS) && Object.isFrozen(JSON_HEADERS)).toBe(true);
  });
});

describe('fixtureReader', () => {
  let directory: string | undefined;
  afterEach(async () => {
    if (directory !== undefined) await rm(directory, { recursive: true, force: true });
    directory = undefined;
  });

  it('reads fixtures by name from a folder URL', async () => {
    directory = await mkdtemp(join(tmpdir(), 'wire-fixtures-'));
    await writeFile(join(directory, 'two.sse'), '# provenance\n\ndata: 1\n\ndata: 2\n\n');
    const fixture = fixtureReader(pathToFileURL(`${directory}/`));
    expect(fixture('two.sse')).toEqual(['data: 1\n\n', 'data: 2\n\n']);
    expect(() => fixture('missing.sse')).toThrow(/ENOENT/);
  });

  it('refuses a folder URL without the trailing slash', () => {
    expect(() => fixtureReader(new URL('file:///tmp/__fixtures__'))).toThrow(
      'fixtureReader: file:///tmp/__fixtures__ must end in "/" to be read as a folder',
    );
  });
});

describe('collectEvents and terminalEvent', () => {
  // Stands in for core's StreamEvent: the helpers only read `type`.
  type TestEvent =
    | { type: 'start' }
    | { type: 'text-delta' }
    | { type: 'done' }
    | { type: 'error' };
  async function* stream(...events: TestEvent[]): AsyncGenerator<TestEvent> {
    yield* events;
  }

  it('collects every event in order', async () => {
    const events = await collectEvents(stream({ type: 'start' }, { type: 'done' }));
    expect(events).toEqual([{ type: 'start' }, { type: 'done' }]);
  });

  it('returns the single done or error event', () => {
    const error: TestEvent = { type: 'error' };
    expect(terminalEvent([{ type: 'start' }, error])).toBe(error);
    const done: TestEvent = { type: 'done' };
    expect(terminalEvent([done, { type: 'text-delta' }])).toBe(done);
  });

  it('throws, naming the event types, unless exactly one terminal event exists', () => {
    expect(() => terminalEvent<TestEvent>([{ type: 'start' }])).toThrow(
      'terminalEvent: expected exactly one done/error event, got 0 in [start]',
    );
    expect(() => terminalEvent<TestEvent>([{ type: 'done' }, { type: 'error' }])).toThrow(
      'terminalEvent: expected exactly one done/error event, got 2 in [done, error]',
    );
  });

  it('with requireLast, throws when events follow the terminal one', () => {
    const events: TestEvent[] = [{ type: 'done' }, { type: 'text-delta' }];
    expect(() => terminalEvent(events, { requireLast: true })).toThrow(
      'terminalEvent: the done event is not the last event in [done, text-delta]',
    );
    expect(terminalEvent(events.slice(0, 1), { requireLast: true })).toBe(events[0]);
  });
});
