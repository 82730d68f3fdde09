// Test-only: an HTTP/2 (h2c) load balancer in front of worker processes. Restate sends every
// invocation to one deployment URL over as few HTTP/2 connections as it can, so a balancer that
// spreads connections would send everything to one worker: this one spreads streams (one per
// invocation attempt), round-robin. When a worker dies mid-stream the stream is reset, and
// Restate retries the invocation — on another worker.
import { once } from 'node:events';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';

const hopByHop = new Set([':method', ':path', ':scheme', ':authority', ':status']);

/** A running balancer: `url` to register with Restate; `upstreams` to change as workers come and go. */
export interface H2Balancer {
  url: string;
  /** Ports of the live workers; edited in place by the test. */
  upstreams: number[];
  /** Streams forwarded to each port so far. */
  forwarded: Map<number, number>;
  close(): Promise<void>;
}

/** Starts a balancer on 127.0.0.1 (a free port). */
export async function startH2Balancer(): Promise<H2Balancer> {
  const sessions = new Map<number, http2.ClientHttp2Session>();
  const upstreams: number[] = [];
  const forwarded = new Map<number, number>();
  let next = 0;

  const sessionFor = (port: number): http2.ClientHttp2Session => {
    const existing = sessions.get(port);
    if (existing !== undefined && !existing.closed && !existing.destroyed) return existing;
    const session = http2.connect(`http://127.0.0.1:${port}`);
    session.on('error', () => sessions.delete(port));
    session.on('close', () => sessions.delete(port));
    sessions.set(port, session);
    return session;
  };

  const server = http2.createServer();
  const incoming = new Set<http2.ServerHttp2Session>();
  server.on('session', (session) => {
    incoming.add(session);
    session.on('close', () => incoming.delete(session));
  });
  server.on('stream', (stream, headers) => {
    const port = upstreams[next++ % Math.max(1, upstreams.length)];
    if (port === undefined) {
      stream.respond({ ':status': 503 });
      stream.end();
      return;
    }
    forwarded.set(port, (forwarded.get(port) ?? 0) + 1);
    const forwardHeaders: http2.OutgoingHttpHeaders = {
      ':method': headers[':method'],
      ':path': headers[':path'],
    };
    for (const [name, value] of Object.entries(headers)) {
      if (!hopByHop.has(name) && value !== undefined) forwardHeaders[name] = value;
    }
    let upstream: http2.ClientHttp2Stream;
    try {
      upstream = sessionFor(port).request(forwardHeaders);
    } catch {
      stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
      return;
    }
    upstream.on('response', (responseHeaders) => {
      const out: http2.OutgoingHttpHeaders = { ':status': responseHeaders[':status'] };
      for (const [name, value] of Object.entries(responseHeaders)) {
        if (!hopByHop.has(name) && value !== undefined) out[name] = value;
      }
      if (!stream.destroyed) stream.respond(out);
      upstream.pipe(stream);
    });
    stream.pipe(upstream);
    const reset = () => {
      if (!stream.destroyed) stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
    };
    upstream.on('error', reset);
    upstream.on('close', () => {
      if (upstream.rstCode !== undefined && upstream.rstCode !== 0) reset();
    });
    stream.on('error', () => upstream.close(http2.constants.NGHTTP2_CANCEL));
    stream.on('close', () => {
      if (!upstream.destroyed) upstream.close(http2.constants.NGHTTP2_CANCEL);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    upstreams,
    forwarded,
    close: async () => {
      for (const session of sessions.values()) session.destroy();
      for (const session of incoming) session.destroy();
      const closed = once(server, 'close');
      server.close();
      await closed;
    },
  };
}
