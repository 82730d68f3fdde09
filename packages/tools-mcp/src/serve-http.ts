/**
 * A tool server over Streamable HTTP (stateless), for whoever holds its bearer token: every path
 * and method answers 401 without it — only the protected-resource metadata is public — after
 * the `Host`/`Origin` check that keeps web pages out through DNS rebinding.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import {
  type AddressInfo,
  createServer as createNetServer,
  type Server as NetServer,
  type Socket,
} from 'node:net';
import { AgentError } from '@agent/core';
import { foreignListener, fromThisUser } from '@agent/core/loopback';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import {
  type BearerCheckResult,
  createBearerCheck,
  generateBearerToken,
  type HttpServeAuth,
  protectedResourceMetadata,
  protectedResourceMetadataPath,
} from './serve-auth.js';
import { ConnectionBudget } from './serve-connections.js';
import { HttpSessions, principalOf } from './serve-sessions.js';
import {
  CallSlots,
  createToolServerWith,
  InFlightCalls,
  type ToolServerOptions,
} from './tool-server.js';

/** Options of {@link serveHttp}. */
export interface HttpServeOptions extends ToolServerOptions {
  /** [127.0.0.1] */
  host?: string;
  /** [0: any free port] */
  port?: number;
  /** The MCP endpoint's path [/mcp]. */
  path?: string;
  /**
   * `{ token }`: requests must carry `Authorization: Bearer <token>`; `'none'`: the processes of
   * this user (and root) may call the tools without one — on a loopback address only (elsewhere
   * `serveHttp` throws); another user's get 403 on Linux, where the kernel says whose a
   * connection is, and anyone who can reach the port is served elsewhere. [a token generated for
   * this server, in the result]
   */
  auth?: HttpServeAuth;
  /**
   * Whether a process of another user of this machine is served when it presents the token
   * [false: on Linux, where the kernel says whose a loopback connection is, it gets 403 — a
   * token is a file or a client's config away from leaking to another local user, and a fixed
   * `port` can be taken by one while the server is down, collecting the token from a client that
   * keeps retrying]. Connections from other hosts are judged by the token alone.
   */
  otherUsers?: boolean;
  /**
   * `Host` values accepted (`name:port`) [on a loopback address: `127.0.0.1`, `localhost` and
   * `[::1]` with the port]. A request with another `Host`, or an `Origin` whose host is not one of
   * them, is refused with 403: a web page cannot reach the tools through DNS rebinding.
   */
  allowedHosts?: readonly string[];
  /**
   * Connections open at once, so that nobody who can reach the port can use up this process's
   * file descriptors [256]. Past it, the connection that has been open longest without presenting
   * the token is closed to make room (the new one only when every open connection presented it):
   * strangers holding every connection do not keep the token's clients out.
   */
  maxConnections?: number;
  /**
   * How long a connection may take to send a request's headers before it is closed, in ms: a
   * connection that sends nothing (or a header a byte at a time) would otherwise stay open
   * forever, Node's own `headersTimeout` not covering it [10000].
   */
  headersTimeoutMs?: number;
  /**
   * Requests one connection may have sent and not yet had answered (HTTP/1.1 pipelining); a
   * connection past it is closed, with its requests. A client that writes requests without
   * reading the answers would otherwise have each one parsed and started [16].
   */
  maxPipelinedRequests?: number;
  /**
   * How long a client session (`Mcp-Session-Id`) may go unused before the server forgets it, in
   * ms; its id is then answered 404 like one never given, and the client starts a new session
   * [1800000: 30 minutes].
   */
  sessionIdleMs?: number;
}

/** What a {@link HttpToolServer} is doing now, for monitoring (and the tests of its bounds). */
export interface HttpToolServerActivity {
  /** Requests being answered, over all connections. */
  requestsInProgress: number;
  /** The most requests that were in progress at once since the server started. */
  mostRequestsInProgress: number;
  /** Tool calls running. */
  callsRunning: number;
  /** Tool calls waiting for a turn (`maxConcurrentCalls`). */
  callsWaiting: number;
  /** Connections closed because they pipelined past `maxPipelinedRequests`. */
  connectionsClosedForPipelining: number;
}

/** A running {@link serveHttp} server. */
export interface HttpToolServer {
  /** The MCP endpoint, `http://host:port/path`. */
  url: string;
  /** The bearer token clients must send; undefined with `auth: 'none'`. */
  token: string | undefined;
  /** An `mcpServers` entry for a client: `{ type: 'http', url, headers }` (with the token). */
  clientConfig: { type: 'http'; url: string; headers: Record<string, string> };
  /** What the server is doing now. */
  activity(): HttpToolServerActivity;
  close(): Promise<void>;
}

function isLoopback(address: string): boolean {
  return address === '127.0.0.1' || address === '::1' || address.startsWith('127.');
}

function sendJson(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
}

function rpcError(code: number, message: string) {
  return { jsonrpc: '2.0', error: { code, message }, id: null };
}

/** Why a request's `Host` or `Origin` is refused, or undefined when both are allowed. */
function hostRefusal(request: IncomingMessage, allowed: ReadonlySet<string>): string | undefined {
  const host = (request.headers.host ?? '').toLowerCase();
  if (!allowed.has(host)) return `Host "${host}" is not allowed`;
  const origin = request.headers.origin;
  if (origin === undefined) return undefined;
  let originHost = '';
  try {
    originHost = new URL(origin).host.toLowerCase();
  } catch {
    originHost = '';
  }
  return allowed.has(originHost) ? undefined : `Origin "${origin}" is not allowed`;
}

/** 401 with the challenge of RFC 6750 §3, pointing at the metadata (RFC 9728 §5.1). */
function refuseUnauthorized(
  response: ServerResponse,
  result: Exclude<BearerCheckResult, 'valid'>,
  metadataUrl: string,
): void {
  // A request that sent no credentials gets no error code (RFC 6750 §3.1).
  const challenge =
    result === 'missing'
      ? `Bearer resource_metadata="${metadataUrl}"`
      : `Bearer resource_metadata="${metadataUrl}", error="invalid_token", error_description="The bearer token is not valid"`;
  const message =
    result === 'missing'
      ? 'Unauthorized: send the token of this server as "Authorization: Bearer <token>"'
      : 'Unauthorized: the bearer token is not valid';
  sendJson(response, 401, rpcError(-32001, message), { 'www-authenticate': challenge });
}

/**
 * The largest request body served, in bytes (the MCP SDK's own limit, 4 MB): a larger one gets
 * 413 and is not read further, whatever its `Content-Length` or chunking says.
 */
export const maximumRequestBodyBytes = 4 * 1024 * 1024;

class BodyTooLarge extends Error {}

function refuseTooLarge(response: ServerResponse): void {
  // The rest of the body is never read: the connection ends with the answer.
  sendJson(
    response,
    413,
    rpcError(-32600, `Request body larger than ${maximumRequestBodyBytes} bytes`),
    { connection: 'close' },
  );
}

async function readBody(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > maximumRequestBodyBytes) throw new BodyTooLarge();
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  return text === '' ? undefined : JSON.parse(text);
}

/** 404 for a session id this server does not hold for the request's credential (see `serve-sessions.ts`). */
function refuseUnknownSession(response: ServerResponse): void {
  sendJson(
    response,
    404,
    rpcError(-32001, 'Session not found: it ended, or was never this server’s; initialize again'),
  );
}

function namedSession(request: IncomingMessage): string | undefined {
  const named = request.headers['mcp-session-id'];
  return typeof named === 'string' ? named : undefined;
}

/** One MCP request: its own server instance and transport (stateless; tools keep no session). */
async function handleMcpRequest(
  options: ToolServerOptions,
  shared: {
    inFlight: InFlightCalls;
    slots: CallSlots;
    sessionless: string;
    sessions: HttpSessions;
    principal: string;
  },
  exchange: {
    request: IncomingMessage;
    response: ServerResponse;
    /** Registers what to do when the answer is done or the connection closed. */
    onEnd: (cleanup: () => void) => void;
  },
): Promise<void> {
  const { request, response } = exchange;
  const { inFlight, slots, sessionless, sessions, principal } = shared;
  let body: unknown;
  try {
    body = await readBody(request);
  } catch (error) {
    if (response.headersSent) return;
    if (error instanceof BodyTooLarge) refuseTooLarge(response);
    else sendJson(response, 400, rpcError(-32700, `Parse error: ${String(error)}`));
    return;
  }
  // An `initialize` starts a new session (a stale id beside it is the client starting over); any
  // other request is in the session its id names — one this credential holds, or none at all.
  let label = sessionless;
  if (Array.isArray(body) ? body.some(isInitializeRequest) : isInitializeRequest(body)) {
    const started = sessions.start(principal);
    response.setHeader('mcp-session-id', started.id);
    label = started.label;
  } else {
    const named = namedSession(request);
    if (named !== undefined) {
      const found = sessions.find(named, principal);
      if (found === undefined) {
        refuseUnknownSession(response);
        return;
      }
      label = found;
    }
  }
  const server = createToolServerWith(options, { inFlight, slots, sessionId: label });
  // No sessionIdGenerator: stateless mode.
  const transport = new StreamableHTTPServerTransport({});
  // Closing the server aborts its running handlers: their calls stop and give back their turns.
  exchange.onEnd(() => {
    void transport.close();
    void server.close();
  });
  try {
    cancelCalls(body, inFlight);
    await server.connect(transport);
    await transport.handleRequest(request, response, body);
  } catch (error) {
    if (response.headersSent) return;
    sendJson(response, 400, rpcError(-32700, `Parse error: ${String(error)}`));
  }
}

/**
 * Stops the calls a `notifications/cancelled` names: it comes in a POST of its own, which reaches
 * a new server instance that knows nothing of the call (the SDK's client cancels this way and
 * keeps the call's response open, so the command ran on to its end).
 */
function cancelCalls(body: unknown, inFlight: InFlightCalls): void {
  for (const message of Array.isArray(body) ? body : [body]) {
    if (message === null || typeof message !== 'object') continue;
    const { method, params } = message as { method?: unknown; params?: unknown };
    if (method !== 'notifications/cancelled' || params === null || typeof params !== 'object')
      continue;
    const { requestId, reason } = params as { requestId?: unknown; reason?: unknown };
    if (typeof requestId === 'string' || typeof requestId === 'number')
      inFlight.cancel(requestId, typeof reason === 'string' ? reason : 'Cancelled by the client');
  }
}

/**
 * Serves the tools over Streamable HTTP at `http://host:port/mcp`, stateless: each request gets
 * its own server instance (tools have no session state), progress streamed on the response. An
 * `initialize` is answered with a new `Mcp-Session-Id` (unguessable, bound to the token that
 * asked, until the client DELETEs it); a request naming any other id gets 404. `forSession` gets
 * a label of the session, not its id (clients that send none share one).
 * Every request needs the bearer token (one is generated unless `auth` says otherwise), checked
 * in constant time; without it, any path and method answers 401 with `WWW-Authenticate: Bearer
 * resource_metadata=…`. Only `GET /.well-known/oauth-protected-resource[/mcp]` is public. A
 * `notifications/cancelled` stops every running call with the id it names.
 */
export async function serveHttp(options: HttpServeOptions): Promise<HttpToolServer> {
  const path = options.path ?? '/mcp';
  const auth = options.auth ?? { token: generateBearerToken() };
  // Throws on a token that cannot be one, before anything listens.
  const check = auth === 'none' ? undefined : createBearerCheck(auth.token);
  const metadataPaths = new Set([
    protectedResourceMetadataPath(path),
    protectedResourceMetadataPath('/'),
  ]);
  let allowed: ReadonlySet<string> | undefined;
  let origin = '';
  const headersTimeoutMs = options.headersTimeoutMs ?? 10_000;
  // Request ids are the clients': every holder of the token is one principal, and a cancel names
  // only an id, so it stops each running call with that id.
  const inFlight = new InFlightCalls();
  // One principal, so one set of turns: the token's holders together get maxConcurrentCalls.
  const slots = new CallSlots(options);
  const sessionless = randomUUID();
  const sessions = new HttpSessions(
    options.sessionIdleMs === undefined ? {} : { idleMs: options.sessionIdleMs },
  );
  const maxPipelined = options.maxPipelinedRequests ?? 16;
  if (!(maxPipelined >= 1))
    throw new RangeError(`maxPipelinedRequests must be a number >= 1, got ${String(maxPipelined)}`);
  /** Each connection's requests not yet answered: what ends each one. */
  const unanswered = new Map<Socket, Set<() => void>>();
  const counts = { inProgress: 0, most: 0, closedForPipelining: 0 };
  /**
   * Counts a request until its answer is done or its connection closes, and returns where its
   * clean-up goes; undefined when its connection has too many unanswered (it is closed then, and
   * every request it sent ends: a pipelined answer waiting behind another never emits `close`,
   * so the connection's own `close` stops its calls).
   */
  const admit = (
    socket: Socket,
    response: ServerResponse,
  ): ((cleanup: () => void) => void) | undefined => {
    // Requests already read from a connection being closed are parsed still: none is started.
    if (socket.destroyed) return undefined;
    let requests = unanswered.get(socket);
    if (requests === undefined) {
      const created = new Set<() => void>();
      requests = created;
      unanswered.set(socket, created);
      socket.once('close', () => {
        unanswered.delete(socket);
        for (const end of [...created]) end();
      });
    }
    if (requests.size >= maxPipelined) {
      counts.closedForPipelining += 1;
      socket.destroy();
      return undefined;
    }
    const cleanups: (() => void)[] = [];
    const open = requests;
    const end = () => {
      if (!open.delete(end)) return;
      counts.inProgress -= 1;
      for (const cleanup of cleanups) cleanup();
    };
    open.add(end);
    counts.inProgress += 1;
    counts.most = Math.max(counts.most, counts.inProgress);
    response.once('close', end);
    return (cleanup) => cleanups.push(cleanup);
  };
  // Each connection until its next request's headers are in: at the start, and after each answer
  // on a connection kept alive.
  const awaitingHeaders = new Map<Socket, NodeJS.Timeout>();
  const awaitHeaders = (socket: Socket | null) => {
    if (socket === null || socket.destroyed) return;
    const timer = setTimeout(() => socket.destroy(), headersTimeoutMs);
    timer.unref();
    awaitingHeaders.set(socket, timer);
  };
  const connections = new ConnectionBudget(options.maxConnections ?? 256);
  // Whose each connection is, judged once (at its first request without a token, at its first
  // with the token otherwise).
  const judged = new WeakMap<Socket, boolean>();
  const ownersOnly = (socket: Socket): boolean => {
    let ours = judged.get(socket);
    if (ours === undefined) {
      ours = fromThisUser(socket);
      judged.set(socket, ours);
    }
    return ours;
  };
  const http = createServer((request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket;
    clearTimeout(awaitingHeaders.get(socket));
    awaitingHeaders.delete(socket);
    const onEnd = admit(socket, response);
    if (onEnd === undefined) return;
    response.once('finish', () => awaitHeaders(socket));
    if (allowed !== undefined) {
      const refusal = hostRefusal(request, allowed);
      if (refusal !== undefined) {
        sendJson(response, 403, rpcError(-32000, refusal));
        return;
      }
    }
    const url = new URL(request.url ?? '/', 'http://localhost');
    // The URL the client dialed, when its Host was checked; the listening address otherwise.
    const base = allowed === undefined ? origin : `http://${request.headers.host ?? ''}`;
    if (check === undefined && !ownersOnly(socket)) {
      // No token: the port alone must not let another user of the machine in.
      sendJson(
        response,
        403,
        rpcError(
          -32000,
          'This server takes no token and serves only the processes of the user who started it',
        ),
      );
      return;
    }
    if (check !== undefined) {
      if (request.method === 'GET' && metadataPaths.has(url.pathname)) {
        sendJson(response, 200, protectedResourceMetadata(`${base}${path}`, serverName(options)));
        return;
      }
      const result = check(request.headers.authorization);
      if (result !== 'valid') {
        refuseUnauthorized(response, result, `${base}${protectedResourceMetadataPath(path)}`);
        return;
      }
      // The token in another user's hands (read from a file, taken by one who held the port
      // while the server was down) does not let their processes in.
      if (options.otherUsers !== true && !ownersOnly(socket)) {
        sendJson(
          response,
          403,
          rpcError(
            -32000,
            'This server serves only the processes of the user who started it: the token is in the hands of another user of this machine',
          ),
        );
        return;
      }
    }
    connections.trust(socket);
    if (url.pathname !== path) {
      response.writeHead(404).end();
      return;
    }
    const principal = principalOf(request.headers.authorization, check !== undefined);
    const named = namedSession(request);
    if (request.method === 'DELETE' && named !== undefined) {
      // The client ends its session: its id is refused from now on.
      if (sessions.end(named, principal)) response.writeHead(204).end();
      else refuseUnknownSession(response);
      return;
    }
    if (request.method !== 'POST') {
      // No server-initiated stream; a session id this server does not hold is unknown all the same.
      if (named !== undefined && sessions.find(named, principal) === undefined)
        refuseUnknownSession(response);
      else response.writeHead(405, { allow: 'POST, DELETE' }).end();
      return;
    }
    // A length announced past the limit is refused before anything is read (or waited for).
    if (Number(request.headers['content-length'] ?? 0) > maximumRequestBodyBytes) {
      refuseTooLarge(response);
      return;
    }
    void handleMcpRequest(
      options,
      { inFlight, slots, sessionless, sessions, principal },
      { request, response, onEnd },
    );
  });
  // Counted by `connections` (Node's maxConnections would refuse the newcomer, whoever it is).
  http.on('connection', (socket: Socket) => {
    if (!connections.admit(socket)) return;
    awaitHeaders(socket);
    socket.once('close', () => {
      clearTimeout(awaitingHeaders.get(socket));
      awaitingHeaders.delete(socket);
    });
  });
  const twin = await listenOnLoopback(http, options.host ?? '127.0.0.1', options.port ?? 0);
  const { address, port } = http.address() as AddressInfo;
  if (auth === 'none' && !isLoopback(address)) {
    // No token and no Host check off loopback: anyone on the network could call the tools.
    await Promise.all([new Promise((resolve) => http.close(resolve)), twin?.close()]);
    throw new AgentError(
      `auth: 'none' is for a loopback address only: on ${address} anyone who can reach port ${port} over the network could call the tools; listen on 127.0.0.1, or require a token`,
    );
  }
  const host = address.includes(':') ? `[${address}]` : address;
  origin = `http://${host}:${port}`;
  if (options.allowedHosts !== undefined)
    allowed = new Set(options.allowedHosts.map((name) => name.toLowerCase()));
  else if (isLoopback(address))
    allowed = new Set([
      `${host}:${port}`,
      `localhost:${port}`,
      `127.0.0.1:${port}`,
      `[::1]:${port}`,
    ]);
  const url = `${origin}${path}`;
  const token = auth === 'none' ? undefined : auth.token;
  return {
    url,
    token,
    clientConfig: {
      type: 'http',
      url,
      headers: token === undefined ? {} : { Authorization: `Bearer ${token}` },
    },
    activity: () => ({
      requestsInProgress: counts.inProgress,
      mostRequestsInProgress: counts.most,
      callsRunning: slots.running,
      callsWaiting: slots.waiting,
      connectionsClosedForPipelining: counts.closedForPipelining,
    }),
    close: async () => {
      await Promise.all([
        new Promise<void>((resolve) => {
          http.closeAllConnections();
          http.close(() => resolve());
        }),
        twin?.close(),
      ]);
    },
  };
}

function listen(
  server: Server | NetServer,
  port: number,
  host: string,
): Promise<NodeJS.ErrnoException | undefined> {
  return new Promise((resolve) => {
    const failed = (error: NodeJS.ErrnoException) => resolve(error);
    server.once('error', failed);
    server.listen(port, host, () => {
      server.off('error', failed);
      resolve(undefined);
    });
  });
}

/** IPv6 loopback missing on this machine: nobody can listen there, so nobody can stand in for us. */
const noIpv6 = new Set(['EADDRNOTAVAIL', 'EAFNOSUPPORT', 'EPROTONOSUPPORT']);

/** Tries for a port free on both loopback addresses before giving up (port 0 only). */
const portAttempts = 20;

/**
 * Listens on `host:port`; on 127.0.0.1, also holds `[::1]` on the same port, handing its
 * connections to the same server. `localhost` resolves to ::1 first on most systems, and the
 * Host check accepts `localhost`: another user listening on [::1] with our port would otherwise
 * receive the token of every client configured with `localhost`. With port 0, a port free on both
 * is taken; a given port already held on either address is refused with an `AgentError` naming it.
 */
async function listenOnLoopback(
  http: Server,
  host: string,
  port: number,
): Promise<NetServer | undefined> {
  for (let attempt = 1; ; attempt++) {
    const failed = await listen(http, port, host);
    if (failed !== undefined)
      throw new AgentError(
        `Cannot listen on ${host}:${port}: ${failed.code === 'EADDRINUSE' ? `another process listens there${strangerOn(port)}` : failed.message}`,
        { cause: failed },
      );
    if (host !== '127.0.0.1') return undefined;
    const taken = (http.address() as AddressInfo).port;
    const twin = createNetServer((socket) => http.emit('connection', socket));
    const twinFailed = await listen(twin, taken, '::1');
    if (twinFailed === undefined) return twin;
    if (twinFailed.code !== undefined && noIpv6.has(twinFailed.code)) return undefined;
    await new Promise((resolve) => http.close(resolve));
    if (port !== 0 || attempt >= portAttempts)
      throw new AgentError(
        twinFailed.code === 'EADDRINUSE'
          ? `Another process listens on [::1]:${taken}${strangerOn(taken)}: a client dialing localhost:${taken} could reach it instead and hand it the token; choose another port`
          : `Cannot listen on [::1]:${taken}: ${twinFailed.message}`,
        { cause: twinFailed },
      );
  }
}

/**
 * What to add when a process of another user of this machine holds `port` (Linux): a client
 * still configured for this server may have handed it the token while the server was down.
 */
function strangerOn(port: number): string {
  const uid = foreignListener(port);
  return uid === undefined
    ? ''
    : ` — a process of another user of this machine (uid ${uid}); a client that tried this port while the server was down may have sent it the token: use another port and a new token`;
}

function serverName(options: ToolServerOptions): string {
  return options.name ?? 'agent-tools';
}
