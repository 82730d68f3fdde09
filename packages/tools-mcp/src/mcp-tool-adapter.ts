import {
  AgentError,
  type AgentTool,
  abortableDelay,
  errorMessage,
  isConnectionFailure,
  type ToolContext,
  ToolError,
  type ToolPolicy,
  type ToolRegistry,
  type ToolResult,
} from '@agent/core';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike, Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  type CallToolResult,
  CallToolResultSchema,
  type CompleteRequest,
  type CompleteResult,
  type GetPromptResult,
  type Implementation,
  type ListPromptsResult,
  type ListResourcesResult,
  type ListResourceTemplatesResult,
  McpError,
  PaginatedResultSchema,
  type Progress,
  PromptListChangedNotificationSchema,
  type ReadResourceResult,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  type ServerCapabilities,
  type Tool,
  ToolListChangedNotificationSchema,
  ToolSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { type AbortListener, type AbortMirror, mirrorOf } from './abort-mirror.js';
import { clientCapabilities, installClientHandlers, type McpRoot } from './client-features.js';
import {
  type CallErrorContext,
  describeError,
  protocolErrorInResult,
  toCallError,
} from './mcp-errors.js';
import type {
  McpToolAdapterOptions,
  McpToolsChange,
  McpToolsChangedListener,
  McpTransportConfig,
} from './mcp-options.js';
import type { LoopbackOAuthProvider } from './oauth.js';
import { createResourceTools } from './resource-tools.js';
import { type McpToolResultDetails, toToolResult } from './result-mapping.js';
import type { StdioProcessTransport } from './stdio-transport.js';
import { mcpToolWireName } from './tool-names.js';
import { toToolParameters } from './tool-schema.js';

/** An MCP tool as an `AgentTool`: arguments are the JSON object the tool's input schema describes. */
export type McpAgentTool = AgentTool<Record<string, unknown>, McpToolResultDetails>;

/** Where the adapter's connection stands. */
export type McpConnectionStatus = 'connected' | 'disconnected' | 'closed';

const packageVersion = '0.1.0';
/** The SDK's own request timeout would cut tool calls at 60 s; the agent loop owns call timeouts. */
const noRequestTimeout = 2_147_483_647;
const pingTimeoutMs = 5_000;
const terminateSessionTimeoutMs = 2_000;
const maxToolPages = 100;
const stderrInMessageChars = 1_000;

interface Connection {
  readonly client: Client;
  readonly transport: Transport;
  readonly stdio: StdioProcessTransport | undefined;
  closed: boolean;
  closedByOwner: boolean;
  /** Why the connection went away, as a phrase after the server's name ("exited with code 1…"). */
  disconnectReason: string | undefined;
  probing: boolean;
}

interface ListedTool {
  readonly definition: Tool;
  /** The input schema as the server sent it (the definition's may have been replaced). */
  readonly rawInputSchema: unknown;
}

interface ToolEntry {
  readonly definition: Tool;
  readonly fingerprint: string;
  readonly tool: McpAgentTool;
  readonly taskRequired: boolean;
}

/** Whether a connect failed because the server refused the Streamable HTTP POST (400/404/405). */
function refusedPost(error: unknown): boolean {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof StreamableHTTPError && [400, 404, 405].includes(cause.code ?? 0))
      return true;
  }
  return false;
}

/**
 * Keeps a transport's messages in order for the client. The SDK runs a notification's handler a
 * microtask after it arrives but a response's at once, so a final progress notification that
 * arrives just before its result (same chunk) found its handler already gone and was dropped.
 * After a notification, the messages that follow in the same tick are therefore delivered one
 * microtask apart, each after the handlers the previous one scheduled. Messages that follow no
 * notification (a plain call's response) are delivered at once: no promise per message.
 */
function deliverInOrder(transport: Transport): void {
  const receive = transport.onmessage;
  if (receive === undefined) return;
  type Delivery = Parameters<typeof receive>;
  const queue: Delivery[] = [];
  /** A notification was delivered and its handler has not run yet, or the queue is draining. */
  let deferring = false;
  const deliver = (message: Delivery[0], extra: Delivery[1]) => {
    try {
      receive.call(transport, message, extra);
    } catch (error) {
      transport.onerror?.(error instanceof Error ? error : new Error(String(error)));
    }
  };
  const step = () => {
    const next = queue.shift();
    if (next === undefined) {
      deferring = false;
      return;
    }
    deliver(next[0], next[1]);
    // One message per hop: whatever this one scheduled runs before the next is delivered.
    queueMicrotask(step);
  };
  transport.onmessage = (message, extra) => {
    if (deferring) {
      queue.push([message, extra]);
      return;
    }
    deliver(message, extra);
    if ('method' in message && !('id' in message)) {
      deferring = true;
      queueMicrotask(step);
    }
  };
}

/**
 * One MCP server as a source of `AgentTool`s, over one shared client connection (stdio or
 * Streamable HTTP). Tools are named `server__tool`, carry `source: 'mcp:server'` and the
 * permission subject `server/tool`. A server that dies fails the calls in flight at once with
 * its exit code and stderr tail; the next call reconnects. Close it with `close()` or `await using`.
 *
 * ```ts
 * await using github = await McpToolAdapter.connect({
 *   name: 'github',
 *   transport: { type: 'stdio', command: 'npx', args: ['-y', '@modelcontextprotocol/server-github'] },
 * });
 * const agent = new Agent({ provider, model, tools: [...github.tools()] });
 * ```
 */
export class McpToolAdapter implements AsyncDisposable {
  /** The server's name (the namespace of its tools). */
  readonly name: string;
  readonly #options: McpToolAdapterOptions;
  readonly #listeners = new Set<McpToolsChangedListener>();
  readonly #pending = new Set<Connection>();
  readonly #closeController = new AbortController();
  #entries = new Map<string, ToolEntry>();
  #tools: McpAgentTool[] = [];
  #connection: Connection | undefined;
  #connecting: Promise<Connection> | undefined;
  #closing: Promise<void> | undefined;
  #refreshing: Promise<void> | undefined;
  #refreshAgain = false;
  #lastDisconnect: string | undefined;
  #listedOnce = false;
  #roots: readonly McpRoot[];
  /** The adapter's own OAuth client (`transport.oauth`), once started. */
  #oauth: LoopbackOAuthProvider | undefined;
  #clientCredentials: OAuthClientProvider | undefined;
  /** The latest HTTP transport using it: the one that meets a 401 and trades the code. */
  #authTransport: StreamableHTTPClientTransport | undefined;
  /** The server speaks only the 2024-11-05 HTTP+SSE transport (found on the first connect). */
  #legacySse = false;
  /** The list_resources/read_resource tools, once the server declared resources. */
  #resourceTools: McpAgentTool[] | undefined;
  readonly #resourceListeners = new Set<(uri: string) => void>();

  private constructor(options: McpToolAdapterOptions) {
    this.#roots = options.roots ?? [];
    if (options.name === '' || options.name.includes('/')) {
      throw new AgentError(
        `Invalid MCP server name ${JSON.stringify(options.name)}: it must be non-empty and must not contain "/"`,
      );
    }
    this.name = options.name;
    this.#options = options;
    if (options.onToolsChanged !== undefined) this.#listeners.add(options.onToolsChanged);
  }

  /**
   * Starts (or reaches) the server, performs the MCP handshake and lists its tools. Rejects with
   * a message naming the server (and, for stdio, its exit code and stderr) when that fails.
   */
  static async connect(options: McpToolAdapterOptions): Promise<McpToolAdapter> {
    const adapter = new McpToolAdapter(options);
    try {
      try {
        await adapter.#openWithFallback();
      } catch (error) {
        // A server that wants authorization: once the user has authorised, connect again.
        if (adapter.#oauth?.awaitingAuthorization !== true) throw error;
        await adapter.#authorize(error);
        await adapter.#openWithFallback();
      }
    } catch (error) {
      await adapter.close();
      throw error;
    }
    return adapter;
  }

  /** The server's tools as `AgentTool`s, as last listed (stable objects while unchanged). */
  tools(): McpAgentTool[] {
    return [...this.#tools];
  }

  /** Lists the tools again (reconnecting if needed) and returns the new list. */
  async refreshTools(): Promise<McpAgentTool[]> {
    const connection = await this.#ensureConnection(undefined);
    await this.#refresh(connection, true);
    return this.tools();
  }

  /** Subscribes to tool-list changes; returns the unsubscribe function. */
  onToolsChanged(listener: McpToolsChangedListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Registers this server's tools in a registry and keeps them in sync as the server's list
   * changes. Returns a function that stops syncing and removes them. A name the registry already
   * has from elsewhere is reported to `onError` and skipped.
   */
  syncToolRegistry(registry: ToolRegistry): () => void {
    const registered = new Map<string, McpAgentTool>();
    const apply = () => {
      const current = new Map(this.#tools.map((tool) => [tool.name, tool]));
      for (const [name, tool] of registered) {
        if (current.get(name) === tool) continue;
        if (registry.get(name) === tool) registry.unregister(name);
        registered.delete(name);
      }
      for (const [name, tool] of current) {
        if (registered.has(name)) continue;
        try {
          registry.register(tool);
          registered.set(name, tool);
        } catch (error) {
          this.#report(error);
        }
      }
    };
    apply();
    const unsubscribe = this.onToolsChanged(apply);
    return () => {
      unsubscribe();
      for (const [name, tool] of registered)
        if (registry.get(name) === tool) registry.unregister(name);
      registered.clear();
    };
  }

  /** One page of the server's resources (`resources/list`). */
  listResources(cursor?: string, signal?: AbortSignal): Promise<ListResourcesResult> {
    return this.#request(signal, (client, options) =>
      client.listResources(cursor === undefined ? {} : { cursor }, options),
    );
  }

  /** One page of the server's resource templates (`resources/templates/list`). */
  listResourceTemplates(
    cursor?: string,
    signal?: AbortSignal,
  ): Promise<ListResourceTemplatesResult> {
    return this.#request(signal, (client, options) =>
      client.listResourceTemplates(cursor === undefined ? {} : { cursor }, options),
    );
  }

  /** Reads a resource by URI (`resources/read`). */
  readResource(uri: string, signal?: AbortSignal): Promise<ReadResourceResult> {
    return this.#request(signal, (client, options) => client.readResource({ uri }, options));
  }

  /**
   * Subscribes to a resource's updates (`resources/subscribe`); `listener` gets the URI of each
   * `notifications/resources/updated`. Returns the unsubscribe function.
   */
  async subscribeResource(
    uri: string,
    listener: (uri: string) => void,
  ): Promise<() => Promise<void>> {
    const wrapped = (updated: string) => {
      if (updated === uri) listener(updated);
    };
    this.#resourceListeners.add(wrapped);
    try {
      await this.#request(undefined, (client, options) =>
        client.subscribeResource({ uri }, options),
      );
    } catch (error) {
      this.#resourceListeners.delete(wrapped);
      throw error;
    }
    return async () => {
      this.#resourceListeners.delete(wrapped);
      await this.#request(undefined, (client, options) =>
        client.unsubscribeResource({ uri }, options),
      );
    };
  }

  /** One page of the server's prompts (`prompts/list`), for the application (e.g. slash commands). */
  listPrompts(cursor?: string, signal?: AbortSignal): Promise<ListPromptsResult> {
    return this.#request(signal, (client, options) =>
      client.listPrompts(cursor === undefined ? {} : { cursor }, options),
    );
  }

  /** A prompt filled in with its arguments (`prompts/get`): messages to send to the model. */
  getPrompt(
    name: string,
    args: Record<string, string> = {},
    signal?: AbortSignal,
  ): Promise<GetPromptResult> {
    return this.#request(signal, (client, options) =>
      client.getPrompt({ name, arguments: args }, options),
    );
  }

  /** Completions for a prompt's or a resource template's argument (`completion/complete`). */
  complete(params: CompleteRequest['params'], signal?: AbortSignal): Promise<CompleteResult> {
    return this.#request(signal, (client, options) => client.complete(params, options));
  }

  async #request<T>(
    signal: AbortSignal | undefined,
    run: (client: Client, options: { signal?: AbortSignal; timeout: number }) => Promise<T>,
  ): Promise<T> {
    const connection = await this.#ensureConnection(signal);
    return run(connection.client, {
      ...(signal === undefined ? {} : { signal }),
      timeout: this.#options.requestTimeoutMs ?? 60_000,
    });
  }

  /**
   * Changes the roots offered to the server and tells it (`notifications/roots/list_changed`).
   * Only for an adapter created with `roots`: the capability is declared at connection.
   */
  async setRoots(roots: readonly McpRoot[]): Promise<void> {
    if (this.#options.roots === undefined)
      throw new AgentError(
        `MCP server "${this.name}": setRoots needs the roots option at connect (the capability is declared then)`,
      );
    this.#roots = [...roots];
    const connection = this.#connection;
    if (connection !== undefined && !connection.closed)
      await connection.client.sendRootsListChanged();
  }

  /** Where the connection stands; a `disconnected` adapter reconnects on the next call. */
  get status(): McpConnectionStatus {
    if (this.#closing !== undefined) return 'closed';
    return this.#connection !== undefined && !this.#connection.closed
      ? 'connected'
      : 'disconnected';
  }

  /** The server's name and version from the handshake. */
  get serverInfo(): Implementation | undefined {
    return this.#connection?.client.getServerVersion();
  }

  /** The server's capabilities from the handshake. */
  get serverCapabilities(): ServerCapabilities | undefined {
    return this.#connection?.client.getServerCapabilities();
  }

  /** The server's instructions for the model, if it gave any (worth adding to the system prompt). */
  get instructions(): string | undefined {
    return this.#connection?.client.getInstructions();
  }

  /** The stdio server's process id while it runs. */
  get pid(): number | undefined {
    return this.#connection?.stdio?.pid;
  }

  /**
   * Calls a tool by its name on the server (not the wire name), outside any agent loop. Errors
   * are thrown as `ToolError`s, like the tools' `execute`.
   */
  async callTool(
    toolName: string,
    args: Record<string, unknown>,
    options: { signal?: AbortSignal; onProgress?: (text: string, progress?: number) => void } = {},
  ): Promise<ToolResult<McpToolResultDetails>> {
    const entry = this.#entries.get(toolName);
    const wireName =
      entry?.tool.name ??
      mcpToolWireName(this.name, toolName, { prefix: this.#options.prefix !== false });
    return this.#call(toolName, entry?.taskRequired ?? false, args, {
      toolCallId: 'direct',
      toolName: wireName,
      signal: options.signal ?? new AbortController().signal,
      onUpdate: () => {},
      onProgress: options.onProgress ?? (() => {}),
    });
  }

  /**
   * Stops the server (stdio: stdin closed, then SIGTERM, then SIGKILL to its process group) or
   * ends the HTTP session. Calls in flight end as cancelled. Idempotent.
   */
  close(): Promise<void> {
    this.#closing ??= this.#shutdown();
    return this.#closing;
  }

  /** `await using` support: same as `close()`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  async #shutdown(): Promise<void> {
    this.#closeController.abort(new Error('closed'));
    const connections = new Set(this.#pending);
    if (this.#connection !== undefined) connections.add(this.#connection);
    this.#connection = undefined;
    await Promise.all([...connections].map((connection) => this.#closeConnection(connection)));
    await this.#oauth?.close();
  }

  async #closeConnection(connection: Connection): Promise<void> {
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

  async #ensureConnection(signal: AbortSignal | undefined): Promise<Connection> {
    if (this.#closing !== undefined) throw this.#closedError();
    const current = this.#connection;
    if (current !== undefined && !current.closed) return current;
    this.#connecting ??= this.#reconnect().finally(() => {
      this.#connecting = undefined;
    });
    if (signal === undefined) return this.#connecting;
    return raceAbort(this.#connecting, signal);
  }

  /**
   * For a `URL elicitation required` error (-32042): asks the elicitation handler for each URL;
   * true when the user accepted all of them (the call is worth repeating).
   */
  async #answerUrlElicitation(error: unknown, signal: AbortSignal): Promise<boolean> {
    const handler = this.#options.elicitation;
    if (handler === undefined || !(error instanceof McpError) || error.code !== -32042)
      return false;
    const data = error.data as { elicitations?: unknown } | undefined;
    const elicitations = Array.isArray(data?.elicitations) ? data.elicitations : [];
    if (elicitations.length === 0) return false;
    for (const params of elicitations) {
      const answer = await handler(params as Parameters<typeof handler>[0], {
        server: this.name,
        signal,
      });
      if (answer.action !== 'accept') return false;
    }
    return true;
  }

  /** A fetch that tells the OAuth provider when the server asks for a wider scope (403). */
  #stepUpFetch(base: FetchLike | undefined): FetchLike {
    const inner: FetchLike = base ?? ((url, init) => fetch(url, init));
    return async (url, init) => {
      const response = await inner(url, init);
      if (
        response.status === 403 &&
        /insufficient_scope/.test(response.headers.get('www-authenticate') ?? '')
      ) {
        this.#oauth?.stepUp();
      }
      return response;
    };
  }

  /** Waits for the browser to come back with a code, then trades it for tokens. */
  async #authorize(cause: unknown): Promise<void> {
    const provider = this.#oauth;
    if (provider === undefined) throw cause;
    let code: string;
    try {
      code = await provider.waitForCode(this.#closeController.signal);
    } catch (error) {
      throw new AgentError(`MCP server "${this.name}": ${errorMessage(error)}`, { cause: error });
    }
    // The transport that met the 401 knows where the server's metadata is and which scope it
    // asked for; it trades the code (closed or not: the exchange needs no session).
    const transport = this.#authTransport;
    if (transport === undefined) throw cause;
    await transport.finishAuth(code);
  }

  async #reconnect(): Promise<Connection> {
    const maxAttempts = Math.max(1, this.#options.reconnect?.maxAttempts ?? 3);
    const delayMs = Math.max(0, this.#options.reconnect?.delayMs ?? 500);
    let lastError: unknown;
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      if (this.#closing !== undefined) throw this.#closedError();
      try {
        return await this.#openWithFallback();
      } catch (error) {
        lastError = error;
        // The server wants authorization: wait for the user, then connect again with the token.
        if (this.#oauth?.awaitingAuthorization === true) {
          await this.#authorize(error);
          attempt--;
          continue;
        }
      }
      if (attempt < maxAttempts) {
        try {
          await abortableDelay(delayMs * 2 ** (attempt - 1), this.#closeController.signal);
        } catch {
          throw this.#closedError();
        }
      }
    }
    const previously = this.#lastDisconnect === undefined ? '' : ` It ${this.#lastDisconnect}.`;
    throw new ToolError(
      `MCP server "${this.name}" is unavailable: ${maxAttempts} attempt${maxAttempts === 1 ? '' : 's'} to reconnect failed (${errorMessage(lastError)}).${previously}`,
      { kind: 'failed', cause: lastError },
    );
  }

  /** Opens a new connection, lists the tools, and makes it the current one. */
  /**
   * Connects; an HTTP server that refuses the Streamable HTTP `initialize` POST with 400, 404 or
   * 405 is tried once more over the 2024-11-05 HTTP+SSE transport, as the specification's
   * backwards-compatibility procedure says, and that transport is kept for it.
   */
  async #openWithFallback(): Promise<Connection> {
    try {
      return await this.#open();
    } catch (error) {
      if (this.#options.transport.type !== 'http' || this.#legacySse || !refusedPost(error))
        throw error;
      this.#legacySse = true;
      try {
        return await this.#open();
      } catch {
        this.#legacySse = false;
        throw error;
      }
    }
  }

  async #open(): Promise<Connection> {
    let transport: Transport;
    try {
      transport = await this.#createTransport(this.#options.transport);
    } catch (error) {
      throw new AgentError(`Cannot connect to MCP server "${this.name}": ${describeError(error)}`, {
        cause: error,
      });
    }
    const stdio = isStdioProcessTransport(transport) ? transport : undefined;
    const client = new Client(
      this.#options.clientInfo ?? { name: '@agent/tools-mcp', version: packageVersion },
      { capabilities: clientCapabilities(this.#options) },
    );
    installClientHandlers(client, this.name, this.#options, () => this.#roots);
    const connection: Connection = {
      client,
      transport,
      stdio,
      closed: false,
      closedByOwner: false,
      disconnectReason: undefined,
      probing: false,
    };
    client.onclose = () => this.#onClosed(connection);
    client.onerror = (error) => this.#onTransportError(connection, error);
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
      for (const listener of this.#resourceListeners) {
        try {
          listener(notification.params.uri);
        } catch (error) {
          this.#report(error);
        }
      }
    });
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
      this.#options.onResourcesChanged?.();
    });
    client.setNotificationHandler(PromptListChangedNotificationSchema, () => {
      this.#options.onPromptsChanged?.();
    });
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      if (this.#connection === connection) void this.#refresh(connection, false);
    });
    this.#pending.add(connection);
    try {
      await client.connect(transport, { timeout: this.#options.connectTimeoutMs ?? 30_000 });
      deliverInOrder(transport);
      if (
        this.#resourceTools === undefined &&
        this.#options.resourceTools !== false &&
        client.getServerCapabilities()?.resources !== undefined
      ) {
        this.#resourceTools = createResourceTools({
          server: this.name,
          listResources: (cursor, signal) => this.listResources(cursor, signal),
          listResourceTemplates: (cursor, signal) => this.listResourceTemplates(cursor, signal),
          readResource: (uri, signal) => this.readResource(uri, signal),
        });
      }
      const logLevel = this.#options.logLevel;
      if (logLevel !== undefined && client.getServerCapabilities()?.logging !== undefined)
        await client.setLoggingLevel(logLevel);
      const listed = await this.#listTools(connection);
      if (this.#closing !== undefined) throw this.#closedError();
      this.#applyTools(listed, !this.#listedOnce);
      this.#listedOnce = true;
      this.#connection = connection;
      return connection;
    } catch (error) {
      // Described before closing: afterwards every process has "exited".
      const description = this.#describeFailure(connection, error);
      await this.#closeConnection(connection);
      if (ToolError.isInstance(error) && this.#closing !== undefined) throw error;
      throw new AgentError(`Cannot connect to MCP server "${this.name}": ${description}`, {
        cause: error,
      });
    } finally {
      this.#pending.delete(connection);
    }
  }

  async #createTransport(config: McpTransportConfig): Promise<Transport> {
    switch (config.type) {
      case 'stdio': {
        // Loaded on demand so the package root stays free of Node-only imports.
        const { StdioProcessTransport } = await import('./stdio-transport.js');
        return new StdioProcessTransport({
          command: config.command,
          ...(config.args === undefined ? {} : { args: config.args }),
          ...(config.env === undefined ? {} : { env: config.env }),
          ...(config.inheritEnv === undefined ? {} : { inheritEnv: config.inheritEnv }),
          ...(config.passEnv === undefined ? {} : { passEnv: config.passEnv }),
          ...(config.cwd === undefined ? {} : { cwd: config.cwd }),
          ...(config.onStderr === undefined ? {} : { onStderr: config.onStderr }),
          ...(config.closeGraceMs === undefined ? {} : { closeGraceMs: config.closeGraceMs }),
          ...(config.sandbox === undefined ? {} : { sandbox: config.sandbox }),
          ...(config.maxMessageBytes === undefined
            ? {}
            : { maxMessageBytes: config.maxMessageBytes }),
          ...(config.processGroup === undefined ? {} : { processGroup: config.processGroup }),
        });
      }
      case 'http': {
        let authProvider = config.authProvider;
        if (config.oauth?.clientCredentials !== undefined) {
          const { clientCredentialsProvider } = await import('./oauth.js');
          this.#clientCredentials ??= await clientCredentialsProvider(
            config.oauth.clientCredentials,
          );
          authProvider = this.#clientCredentials;
        } else if (config.oauth !== undefined) {
          // Loaded on demand: it starts a loopback listener (Node only).
          const { LoopbackOAuthProvider } = await import('./oauth.js');
          this.#oauth ??= await LoopbackOAuthProvider.start(this.name, config.oauth);
          authProvider = this.#oauth;
        }
        const fetchFn = this.#oauth === undefined ? config.fetch : this.#stepUpFetch(config.fetch);
        if (this.#legacySse) {
          return new SSEClientTransport(new URL(config.url), {
            ...(config.headers === undefined ? {} : { requestInit: { headers: config.headers } }),
            ...(authProvider === undefined ? {} : { authProvider }),
            ...(fetchFn === undefined ? {} : { fetch: fetchFn }),
          });
        }
        const transport = new StreamableHTTPClientTransport(new URL(config.url), {
          ...(config.headers === undefined ? {} : { requestInit: { headers: config.headers } }),
          ...(authProvider === undefined ? {} : { authProvider }),
          ...(fetchFn === undefined ? {} : { fetch: fetchFn }),
        });
        if (this.#oauth !== undefined) this.#authTransport = transport;
        return transport;
      }
      case 'custom':
        return config.create();
      default: {
        const unknown: never = config;
        throw new AgentError(`Unknown MCP transport type: ${JSON.stringify(unknown)}`);
      }
    }
  }

  /**
   * Lists every page of tools. Parsed leniently: the SDK's schema rejects the whole list when one
   * tool's `inputSchema` is not `type: "object"`; here such a tool is kept (its parameters become
   * `{ type: 'object' }`) and a tool that is not a tool at all is skipped and reported.
   */
  async #listTools(connection: Connection): Promise<ListedTool[]> {
    const tools: ListedTool[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    for (let page = 0; page < maxToolPages; page++) {
      const result = await connection.client.request(
        { method: 'tools/list', params: cursor === undefined ? {} : { cursor } },
        PaginatedResultSchema,
        { timeout: this.#options.requestTimeoutMs ?? 60_000 },
      );
      const raw: unknown = result.tools;
      if (!Array.isArray(raw)) {
        throw new Error('the tools/list answer has no "tools" array');
      }
      for (const candidate of raw) {
        const listed = this.#parseTool(candidate);
        if (listed !== undefined) tools.push(listed);
      }
      cursor = result.nextCursor;
      if (cursor === undefined || seen.has(cursor)) break;
      seen.add(cursor);
    }
    // The SDK validates structuredContent against output schemas it cached from listTools(),
    // which this lenient listing bypasses. (Private in its types; guarded in case it goes.)
    const cache = (connection.client as unknown as { cacheToolMetadata?: (tools: Tool[]) => void })
      .cacheToolMetadata;
    if (typeof cache === 'function') {
      cache.call(
        connection.client,
        tools.map((listed) => listed.definition),
      );
    }
    return tools;
  }

  #parseTool(raw: unknown): ListedTool | undefined {
    const strict = ToolSchema.safeParse(raw);
    if (strict.success) return { definition: strict.data, rawInputSchema: strict.data.inputSchema };
    if (raw !== null && typeof raw === 'object') {
      const { outputSchema: _dropped, ...rest } = raw as Record<string, unknown>;
      const patched = ToolSchema.safeParse({ ...rest, inputSchema: { type: 'object' } });
      if (patched.success) {
        return {
          definition: patched.data,
          rawInputSchema: (raw as { inputSchema?: unknown }).inputSchema,
        };
      }
    }
    this.#report(
      new AgentError(
        `MCP server "${this.name}" listed something that is not a tool, skipped: ${clip(JSON.stringify(raw) ?? String(raw), 300)}`,
      ),
    );
    return undefined;
  }

  /** Re-lists the tools; concurrent requests coalesce into one more listing. */
  async #refresh(connection: Connection, rethrow: boolean): Promise<void> {
    if (this.#refreshing !== undefined) {
      this.#refreshAgain = true;
      if (rethrow) await this.#refreshing;
      return;
    }
    const run = async () => {
      do {
        this.#refreshAgain = false;
        const listed = await this.#listTools(connection);
        this.#applyTools(listed, false);
      } while (this.#refreshAgain);
    };
    this.#refreshing = run().finally(() => {
      this.#refreshing = undefined;
    });
    try {
      await this.#refreshing;
    } catch (error) {
      if (rethrow) throw error;
      this.#report(
        new AgentError(
          `MCP server "${this.name}": refreshing the tool list failed: ${errorMessage(error)}`,
          { cause: error },
        ),
      );
    }
  }

  /** Builds the tools of a listing, keeping unchanged ones, and tells listeners what changed. */
  #applyTools(listed: readonly ListedTool[], initial: boolean): void {
    const filter = this.#options.toolFilter;
    const entries = new Map<string, ToolEntry>();
    const byWireName = new Map<string, string>();
    for (const { definition, rawInputSchema } of listed) {
      if (filter !== undefined && !filter(definition)) continue;
      const fingerprint = JSON.stringify([definition, rawInputSchema]);
      const previous = this.#entries.get(definition.name);
      const entry =
        previous !== undefined && previous.fingerprint === fingerprint
          ? previous
          : this.#buildEntry(definition, rawInputSchema, fingerprint);
      const clash = byWireName.get(entry.tool.name);
      if (clash !== undefined) {
        throw new AgentError(
          `MCP server "${this.name}": tools "${clash}" and "${definition.name}" both get the wire name "${entry.tool.name}"; exclude one with toolFilter`,
        );
      }
      byWireName.set(entry.tool.name, definition.name);
      entries.set(definition.name, entry);
    }
    const before = new Map(this.#tools.map((tool) => [tool.name, tool]));
    const tools = [...entries.values()].map((entry) => entry.tool);
    for (const tool of this.#resourceTools ?? []) {
      if (byWireName.has(tool.name)) continue; // the server's own tool of that name wins
      tools.push(tool);
    }
    const change: McpToolsChange = { added: [], removed: [], changed: [] };
    for (const tool of tools) {
      const old = before.get(tool.name);
      if (old === undefined) change.added.push(tool.name);
      else if (old !== tool) change.changed.push(tool.name);
    }
    const now = new Set(tools.map((tool) => tool.name));
    for (const name of before.keys()) if (!now.has(name)) change.removed.push(name);
    this.#entries = entries;
    this.#tools = tools;
    const changed = change.added.length + change.removed.length + change.changed.length > 0;
    if (initial || !changed) return;
    for (const listener of this.#listeners) {
      try {
        listener(this.tools(), change);
      } catch (error) {
        this.#report(error);
      }
    }
  }

  #buildEntry(definition: Tool, rawInputSchema: unknown, fingerprint: string): ToolEntry {
    const server = this.name;
    const mcpName = definition.name;
    const wireName = mcpToolWireName(server, mcpName, { prefix: this.#options.prefix !== false });
    const taskRequired = definition.execution?.taskSupport === 'required';
    const subjects = [`${server}/${mcpName}`] as const;
    const tool: McpAgentTool = {
      name: wireName,
      label: definition.title ?? definition.annotations?.title ?? mcpName,
      description:
        definition.description !== undefined && definition.description.trim() !== ''
          ? definition.description
          : `Tool "${mcpName}" of MCP server "${server}".`,
      parameters: toToolParameters(rawInputSchema),
      source: `mcp:${server}`,
      policy: this.#policyFor(definition),
      permissionSubjects: () => subjects,
      execute: (args, ctx) => this.#call(mcpName, taskRequired, args, ctx),
    };
    return { definition, fingerprint, tool, taskRequired };
  }

  #policyFor(definition: Tool): ToolPolicy<Record<string, unknown>> {
    const trust = this.#options.trustAnnotations ?? true;
    const annotations = definition.annotations;
    const readOnly = trust && annotations?.readOnlyHint === true;
    // MCP's default for a tool that is not read-only is destructiveHint: true.
    const destructive = !trust || (!readOnly && annotations?.destructiveHint !== false);
    const serverKey = `mcp:${this.name}`;
    const derived: ToolPolicy<Record<string, unknown>> = readOnly
      ? { permission: 'read-only' }
      : {
          permission: 'full-access',
          // Writes to one server's shared state never overlap; destructive ones also keep the
          // model's order within a batch.
          resourceKey: () => serverKey,
          ...(destructive ? { exclusive: true } : {}),
        };
    if (this.#options.timeoutMs !== undefined) derived.timeoutMs = this.#options.timeoutMs;
    return this.#options.policy?.(definition, derived) ?? derived;
  }

  async #call(
    mcpName: string,
    taskRequired: boolean,
    args: Record<string, unknown>,
    ctx: ToolContext,
  ): Promise<ToolResult<McpToolResultDetails>> {
    if (args === null || typeof args !== 'object' || Array.isArray(args)) {
      throw ToolError.invalidArguments(ctx.toolName, 'expected a JSON object');
    }
    if (ctx.signal.aborted) throw ToolError.cancelled(ctx.toolName);
    const mirror = mirrorOf(ctx.signal);
    // Tasks send many requests over time, not one at once: they get a signal of their own.
    const own = taskRequired || !mirrorsCollect ? new AbortController() : undefined;
    const forward = own === undefined ? undefined : () => own.abort(mirror.signal.reason);
    if (forward !== undefined) mirror.signal.addEventListener('abort', forward);
    const signal = own?.signal ?? mirror.signal;
    /** The listeners this call's requests added to the mirror's signal. */
    const added: AbortListener[] = [];
    let connection: Connection | undefined;
    try {
      for (let attempt = 0; ; attempt++) {
        // The usual case, a live connection, without a promise hop.
        const current = this.#connection;
        connection =
          current !== undefined && !current.closed && this.#closing === undefined
            ? current
            : await this.#ensureConnection(signal);
        try {
          const sentBefore = added.length;
          const raw = taskRequired
            ? await this.#callAsTask(connection, mcpName, args, signal, ctx)
            : // Parsed with CallToolResultSchema; the SDK's return type also admits the 2024 shape.
              ((await this.#send(
                connection,
                mcpName,
                args,
                signal,
                own === undefined ? mirror : undefined,
                added,
                ctx,
              )) as CallToolResult);
          // Answered, so sent, yet no listener collected: the SDK no longer adds it at once.
          if (own === undefined && added.length === sentBefore) mirrorsCollect = false;
          const result = toToolResult(raw, { server: this.name, tool: mcpName });
          if (result.isError === true) {
            const protocolError = protocolErrorInResult(
              result,
              this.#errorContext(mcpName, ctx, signal, connection),
            );
            if (protocolError !== undefined) throw protocolError;
          }
          return result;
        } catch (error) {
          if (signal.aborted || ToolError.isInstance(error)) throw error;
          // The server needs the user to finish something in a browser first (URL elicitation):
          // show it through the elicitation handler, then call again once.
          if (attempt < 2 && (await this.#answerUrlElicitation(error, signal))) continue;
          // Step-up (403 insufficient_scope) or an expired grant: authorise, then call again.
          if (this.#oauth?.awaitingAuthorization === true && attempt < 2) {
            await this.#authorize(error);
            continue;
          }
          if (isSessionLost(error)) {
            this.#markLost(connection, `ended the HTTP session (${errorMessage(error)})`);
            // The server refused the call before running it, so sending it again is safe.
            if (attempt === 0) continue;
          } else if (isConnectionFailure(error)) {
            this.#markLost(connection, `is unreachable (${describeError(error)})`);
          }
          throw error;
        }
      }
    } catch (error) {
      throw toCallError(error, this.#errorContext(mcpName, ctx, signal, connection));
    } finally {
      if (forward !== undefined) mirror.signal.removeEventListener('abort', forward);
      mirror.release(added);
    }
  }

  /** Sends tools/call; the listener the SDK adds to the mirror's signal goes into `added`. */
  #send(
    connection: Connection,
    mcpName: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
    mirror: AbortMirror | undefined,
    added: AbortListener[],
    ctx: ToolContext,
  ): Promise<unknown> {
    if (mirror !== undefined) mirror.collecting = added;
    try {
      return connection.client.callTool({ name: mcpName, arguments: args }, CallToolResultSchema, {
        signal,
        timeout: noRequestTimeout,
        onprogress: (progress) => reportProgress(ctx, progress),
      });
    } finally {
      if (mirror !== undefined) mirror.collecting = undefined;
    }
  }

  /** What an error message about a call needs (built only when a call fails). */
  #errorContext(
    mcpName: string,
    ctx: ToolContext,
    signal: AbortSignal,
    connection: Connection | undefined,
  ): CallErrorContext {
    return {
      server: this.name,
      tool: mcpName,
      wireName: ctx.toolName,
      signal,
      disconnectReason: connection?.disconnectReason,
      adapterClosed: this.#closing !== undefined,
    };
  }

  /** Tools that require MCP tasks: create the task, report its status, cancel it on abort. */
  async #callAsTask(
    connection: Connection,
    mcpName: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
    ctx: ToolContext,
  ): Promise<CallToolResult> {
    const tasks = connection.client.experimental.tasks;
    const stream = tasks.callToolStream({ name: mcpName, arguments: args }, CallToolResultSchema, {
      signal,
      timeout: noRequestTimeout,
      task: {},
      onprogress: (progress) => reportProgress(ctx, progress),
    });
    let taskId: string | undefined;
    const cancelTask = () => {
      if (taskId !== undefined) {
        tasks.cancelTask(taskId, { timeout: pingTimeoutMs }).catch(() => undefined);
      }
    };
    signal.addEventListener('abort', cancelTask, { once: true });
    try {
      const iterator = stream[Symbol.asyncIterator]();
      for (;;) {
        const next = await raceAbort(iterator.next(), signal);
        if (next.done === true) throw new Error('the task ended without a result');
        const message = next.value;
        switch (message.type) {
          case 'taskCreated':
            taskId = message.task.taskId;
            ctx.onProgress(`Task ${taskId} created`);
            break;
          case 'taskStatus':
            ctx.onProgress(message.task.statusMessage ?? `Task ${message.task.status}`);
            break;
          case 'result':
            return CallToolResultSchema.parse(message.result);
          case 'error':
            throw message.error;
          default: {
            const unknown: never = message;
            throw new Error(`Unexpected task message ${JSON.stringify(unknown)}`);
          }
        }
      }
    } finally {
      signal.removeEventListener('abort', cancelTask);
    }
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
    this.#report(
      new AgentError(
        `MCP server "${this.name}" ${connection.disconnectReason}; the next call reconnects`,
      ),
    );
  }

  #onTransportError(connection: Connection, error: Error): void {
    if (connection.closed || connection.closedByOwner) return;
    this.#report(new AgentError(`MCP server "${this.name}": ${error.message}`, { cause: error }));
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
      this.#markLost(
        connection,
        `is unreachable (${describeError(error)}; after: ${cause.message})`,
      );
    } finally {
      connection.probing = false;
    }
  }

  #markLost(connection: Connection, reason: string): void {
    if (connection.closed) return;
    connection.disconnectReason ??= reason;
    if (this.#connection === connection) this.#connection = undefined;
    // Closing rejects every request still waiting on this connection.
    connection.client.close().catch(() => undefined);
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
    return tail === ''
      ? `${how} (no stderr output)`
      : `${how}; its stderr ended with:\n${tail.slice(-stderrInMessageChars)}`;
  }

  #describeFailure(connection: Connection, error: unknown): string {
    const detail = describeError(error);
    const stdio = connection.stdio;
    if (stdio === undefined) return detail;
    if (stdio.exit !== undefined)
      return `${detail}; the process ${this.#describeClose(connection)}`;
    const tail = stdio.stderrTail.trim();
    return tail === ''
      ? detail
      : `${detail}; its stderr so far:\n${tail.slice(-stderrInMessageChars)}`;
  }

  #closedError(): ToolError {
    return new ToolError(`MCP server "${this.name}" was closed`, { kind: 'cancelled' });
  }

  #report(error: unknown): void {
    this.#options.onError?.(error instanceof Error ? error : new Error(String(error)));
  }
}

function isStdioProcessTransport(transport: Transport): transport is StdioProcessTransport {
  return 'stderrTail' in transport && 'exit' in transport;
}

function isSessionLost(error: unknown): boolean {
  if (!(error instanceof StreamableHTTPError)) return false;
  return error.code === 404 || (error.code === 400 && /session/i.test(error.message));
}

function reportProgress(ctx: ToolContext, progress: Progress): void {
  const { total } = progress;
  const fraction =
    total !== undefined && total > 0
      ? Math.min(1, Math.max(0, progress.progress / total))
      : undefined;
  const text =
    progress.message ??
    (total === undefined ? `${progress.progress}` : `${progress.progress}/${total}`);
  ctx.onProgress(text, fraction);
}

/**
 * False once a request was sent without adding its listener synchronously (an SDK that changed
 * how it sends): from then on each call gets an AbortController of its own, as before.
 */
let mirrorsCollect = true;

function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
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

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}
