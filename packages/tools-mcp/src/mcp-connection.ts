// The adapter's connection to one server: open (with the HTTP+SSE fallback), reconnect, notice
// that it went away, and close.
import {
  AgentError,
  abortableDelay,
  errorMessage,
  isConnectionFailure,
  ToolError,
} from '@agent/core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { messageTooLarge } from './bounded-fetch.js';
import { clientCapabilities } from './client-features.js';
import type { McpAuth } from './mcp-auth.js';
import { describeError, serverWords } from './mcp-errors.js';
import type { McpToolAdapterOptions } from './mcp-options.js';
import {
  createTransport,
  deliverInOrder,
  isStdioProcessTransport,
  refusedPost,
} from './mcp-transport.js';
import { ReportLimiter } from './report-limiter.js';
import type { StdioProcessTransport } from './stdio-transport.js';

const packageVersion = '0.1.0';
/** How long a ping may take before the server counts as unreachable (also: cancelling a task). */
export const pingTimeoutMs = 5_000;
const terminateSessionTimeoutMs = 2_000;
const stderrInMessageChars = 1_000;
/** Most characters of a failure's own description (before the stderr tail) in an error. */
const maxFailureChars = 2_000;

/** One client session with the server (a new one after each reconnect). */
export interface Connection {
  readonly client: Client;
  readonly transport: Transport;
  readonly stdio: StdioProcessTransport | undefined;
  closed: boolean;
  closedByOwner: boolean;
  /** Why the connection went away, as a phrase after the server's name ("exited with code 1…"). */
  disconnectReason: string | undefined;
  probing: boolean;
  /** When opening began (`performance.now()`): the handshake and first listing share one deadline. */
  readonly openedAt: number;
}

/** What the connector needs from its adapter. */
export interface McpConnectorOptions {
  readonly server: string;
  readonly options: McpToolAdapterOptions;
  readonly auth: McpAuth;
  /** Aborted when the adapter closes. */
  readonly closeSignal: AbortSignal;
  /** Installs the adapter's handlers on a new client, before it connects. */
  readonly setUp: (client: Client, connection: Connection) => void;
  /** After the handshake, before the connection becomes current (lists the tools); a throw fails the open. */
  readonly ready: (connection: Connection) => Promise<void>;
  /** Reports a failure that belongs to no call. */
  readonly report: (error: unknown) => void;
}

/**
 * Opens, reopens and closes the adapter's connection to its server. A connection that dies is
 * noticed (process exit, HTTP session lost, a ping that fails after a broken stream), its pending
 * requests fail at once, and the next `ensure()` reconnects with backoff.
 */
export class McpConnector {
  readonly #server: string;
  readonly #host: McpConnectorOptions;
  readonly #options: McpToolAdapterOptions;
  readonly #pending = new Set<Connection>();
  #connection: Connection | undefined;
  #connecting: Promise<Connection> | undefined;
  #lastDisconnect: string | undefined;
  /** The server speaks only the 2024-11-05 HTTP+SSE transport (found on the first connect). */
  #legacySse = false;
  /** Transport errors (stray messages, lines that are not JSON-RPC) reported, by kind. */
  readonly #reports = new ReportLimiter();

  constructor(host: McpConnectorOptions) {
    this.#host = host;
    this.#server = host.server;
    this.#options = host.options;
  }

  /** The current connection, live or not yet noticed as closed. */
  get current(): Connection | undefined {
    return this.#connection;
  }

  /** The current connection if it is live and the adapter open: the usual case, without a promise hop. */
  get live(): Connection | undefined {
    const current = this.#connection;
    return current !== undefined && !current.closed && !this.closing ? current : undefined;
  }

  /** The adapter is closing (or closed). */
  get closing(): boolean {
    return this.#host.closeSignal.aborted;
  }

  /** The live connection, or a new one (concurrent callers share one reconnect). */
  async ensure(signal: AbortSignal | undefined): Promise<Connection> {
    if (this.closing) throw this.closedError();
    const current = this.#connection;
    if (current !== undefined && !current.closed) return current;
    this.#connecting ??= this.#reconnect().finally(() => {
      this.#connecting = undefined;
    });
    if (signal === undefined) return this.#connecting;
    return raceAbort(this.#connecting, signal);
  }

  /**
   * Opens a new connection, lists the tools, and makes it the current one. An HTTP server that
   * refuses the Streamable HTTP `initialize` POST with 400, 404 or 405 is tried once more over
   * the 2024-11-05 HTTP+SSE transport, as the specification's backwards-compatibility procedure
   * says, and that transport is kept for it.
   */
  async open(): Promise<Connection> {
    try {
      return await this.#openOnce();
    } catch (error) {
      if (this.#options.transport.type !== 'http' || this.#legacySse || !refusedPost(error))
        throw error;
      this.#legacySse = true;
      try {
        return await this.#openOnce();
      } catch {
        this.#legacySse = false;
        throw error;
      }
    }
  }

  /** Closes the current connection and any still opening (after the close signal fired). */
  async closeAll(): Promise<void> {
    const connections = new Set(this.#pending);
    if (this.#connection !== undefined) connections.add(this.#connection);
    this.#connection = undefined;
    await Promise.all([...connections].map((connection) => this.#close(connection)));
  }

  /** Gives a connection up (its pending requests fail at once); the next call reconnects. */
  markLost(connection: Connection, reason: string): void {
    if (connection.closed) return;
    connection.disconnectReason ??= reason;
    if (this.#connection === connection) this.#connection = undefined;
    // Closing rejects every request still waiting on this connection.
    connection.client.close().catch(() => undefined);
  }

  /** The error of a call or connect after the adapter was closed. */
  closedError(): ToolError {
    return new ToolError(`MCP server "${this.#server}" was closed`, { kind: 'cancelled' });
  }

  async #reconnect(): Promise<Connection> {
    const maxAttempts = Math.max(1, this.#options.reconnect?.maxAttempts ?? 3);
    const delayMs = Math.max(0, this.#options.reconnect?.delayMs ?? 500);
    let lastError: unknown;
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      if (this.closing) throw this.closedError();
      try {
        return await this.open();
      } catch (error) {
        // A start its owner refused (stdio `beforeStart`) fails the call at once, with the reason.
        if (isRefusedStart(error)) throw error;
        lastError = error;
        // The server wants authorization: wait for the user, then connect again with the token.
        if (this.#host.auth.awaitingAuthorization) {
          await this.#host.auth.authorize(error);
          attempt--;
          continue;
        }
      }
      if (attempt < maxAttempts) {
        try {
          await abortableDelay(delayMs * 2 ** (attempt - 1), this.#host.closeSignal);
        } catch {
          throw this.closedError();
        }
      }
    }
    // The model reads this error: the server's words in it (stderr, an HTTP body) on one line.
    const previously =
      this.#lastDisconnect === undefined ? '' : ` It ${serverWords(this.#lastDisconnect)}.`;
    throw new ToolError(
      `MCP server "${this.#server}" is unavailable: ${maxAttempts} attempt${maxAttempts === 1 ? '' : 's'} to reconnect failed (${serverWords(errorMessage(lastError))}).${previously}`,
      { kind: 'failed', cause: lastError },
    );
  }

  async #openOnce(): Promise<Connection> {
    let transport: Transport;
    try {
      transport = await createTransport(this.#options.transport, {
        server: this.#server,
        auth: this.#host.auth,
        legacySse: this.#legacySse,
      });
    } catch (error) {
      if (isRefusedStart(error)) throw error;
      throw new AgentError(
        `Cannot connect to MCP server "${this.#server}": ${describeError(error)}`,
        { cause: error },
      );
    }
    const stdio = isStdioProcessTransport(transport) ? transport : undefined;
    const client = new Client(
      this.#options.clientInfo ?? { name: '@agent/tools-mcp', version: packageVersion },
      { capabilities: clientCapabilities(this.#options) },
    );
    const connection: Connection = {
      client,
      transport,
      stdio,
      closed: false,
      closedByOwner: false,
      disconnectReason: undefined,
      probing: false,
      openedAt: performance.now(),
    };
    this.#host.setUp(client, connection);
    client.onclose = () => this.#onClosed(connection);
    client.onerror = (error) => this.#onTransportError(connection, error);
    this.#pending.add(connection);
    try {
      await client.connect(transport, { timeout: this.#options.connectTimeoutMs ?? 30_000 });
      deliverInOrder(transport);
      await this.#host.ready(connection);
      this.#connection = connection;
      return connection;
    } catch (error) {
      // Described before closing: afterwards every process has "exited".
      const description = this.#describeFailure(connection, error);
      await this.#close(connection);
      if (ToolError.isInstance(error) && this.closing) throw error;
      throw new AgentError(`Cannot connect to MCP server "${this.#server}": ${description}`, {
        cause: error,
      });
    } finally {
      this.#pending.delete(connection);
    }
  }

  async #close(connection: Connection): Promise<void> {
    connection.closedByOwner = true;
    const transport = connection.transport;
    if (transport instanceof StreamableHTTPClientTransport && !connection.closed) {
      // Tell the server the session is over; best effort, a dead server must not stall close().
      const timer = new AbortController();
      await Promise.race([
        transport.terminateSession().catch(() => undefined),
        abortableDelay(terminateSessionTimeoutMs, timer.signal).catch(() => undefined),
      ]);
      // A pending timer would keep the host process alive for no reason.
      timer.abort();
    }
    try {
      await connection.client.close();
    } catch {
      // Closing a broken connection may fail; the process is still stopped below.
    }
    await connection.stdio?.close();
  }

  #onClosed(connection: Connection): void {
    if (connection.closed) return;
    connection.closed = true;
    if (connection.disconnectReason === undefined) {
      connection.disconnectReason = this.#describeClose(connection);
    }
    if (this.#connection === connection) this.#connection = undefined;
    if (connection.closedByOwner) return;
    this.#lastDisconnect = connection.disconnectReason;
    // A connection that never got going is reported by the failed connect itself.
    if (this.#pending.has(connection)) return;
    this.#host.report(
      new AgentError(
        `MCP server "${this.#server}" ${connection.disconnectReason}; the next call reconnects`,
      ),
    );
  }

  #onTransportError(connection: Connection, error: Error): void {
    if (connection.closed || connection.closedByOwner) return;
    const tooLarge = messageTooLarge(error);
    if (tooLarge !== undefined) {
      // A stream that broke off this way is not worth resuming: fail what waits on it.
      this.markLost(connection, `was given up: ${tooLarge.message}`);
      return;
    }
    const text = this.#reports.next(error.message);
    if (text !== undefined)
      this.#host.report(new AgentError(`MCP server "${this.#server}": ${text}`, { cause: error }));
    if (
      connection.transport instanceof StreamableHTTPClientTransport &&
      (isConnectionFailure(error) || /SSE stream disconnected|reconnect/i.test(error.message))
    ) {
      void this.#probe(connection, error);
    }
  }

  /**
   * A broken HTTP stream leaves the SDK's pending requests waiting forever; a ping tells a
   * dropped stream (server fine) from a dead server, whose calls are then failed at once.
   */
  async #probe(connection: Connection, cause: Error): Promise<void> {
    if (connection.probing) return;
    connection.probing = true;
    try {
      await connection.client.ping({ timeout: pingTimeoutMs });
    } catch (error) {
      this.markLost(
        connection,
        `is unreachable (${describeError(error)}; after: ${cause.message})`,
      );
    } finally {
      connection.probing = false;
    }
  }

  #describeClose(connection: Connection): string {
    const stdio = connection.stdio;
    if (stdio === undefined) return 'closed the connection';
    // Closed by us because a message was too long: that is the cause, not the SIGTERM we sent.
    if (stdio.overflow !== undefined) return `was stopped: ${stdio.overflow.message}`;
    const exit = stdio.exit;
    const how =
      exit === undefined
        ? 'closed its output'
        : exit.signal !== null
          ? `was killed by ${exit.signal}`
          : exit.code === null
            ? 'could not be started'
            : `exited with code ${exit.code}`;
    const tail = stdio.stderrTail.trim();
    // Killed for memory by the sandbox: "exited with code 137" alone would not say why.
    const note = stdio.limitNote === undefined ? '' : `\n${stdio.limitNote}`;
    return tail === ''
      ? `${how} (no stderr output)${note}`
      : `${how}; its stderr ended with:\n${lastOf(tail)}${note}`;
  }

  #describeFailure(connection: Connection, error: unknown): string {
    // The SDK quotes what the server sent (a protocol version of megabytes, say): bounded here.
    const described = describeError(error);
    const detail =
      described.length > maxFailureChars ? `${described.slice(0, maxFailureChars)}…` : described;
    const stdio = connection.stdio;
    if (stdio === undefined) return detail;
    if (stdio.exit !== undefined)
      return `${detail}; the process ${this.#describeClose(connection)}`;
    const tail = stdio.stderrTail.trim();
    return tail === '' ? detail : `${detail}; its stderr so far:\n${lastOf(tail)}`;
  }
}

/**
 * The last characters of a server's stderr, `…` first where they were cut: a value the server
 * printed (its configured key) may be cut there, and the redaction of what the model reads
 * finds the piece of a value left at a marked cut, not at an unmarked one.
 */
function lastOf(tail: string): string {
  return tail.length > stderrInMessageChars ? `…${tail.slice(-stderrInMessageChars)}` : tail;
}

/** The promise, or a rejection with the signal's reason once it aborts (the promise runs on). */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/** A start refused before anything was spawned (`beforeStart` gave a reason): never retried. */
function isRefusedStart(error: unknown): error is ToolError {
  return ToolError.isInstance(error) && error.kind === 'denied';
}
