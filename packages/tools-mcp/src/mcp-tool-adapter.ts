import {
  AgentError,
  type AgentTool,
  abortableDelay,
  errorMessage,
  type ToolContext,
  type ToolRegistry,
  type ToolResult,
} from '@agent/core';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  type CompleteRequest,
  type CompleteResult,
  type GetPromptResult,
  type Implementation,
  type ListPromptsResult,
  type ListResourcesResult,
  type ListResourceTemplatesResult,
  PromptListChangedNotificationSchema,
  type ReadResourceResult,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  type ServerCapabilities,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { installClientHandlers, type McpCaller, type McpRoot } from './client-features.js';
import { McpAuth } from './mcp-auth.js';
import { type Connection, McpConnector } from './mcp-connection.js';
import type { McpToolAdapterOptions, McpToolsChangedListener } from './mcp-options.js';
import {
  configuredSecrets,
  hideSecretsInAnyError,
  hideSecretsInJson,
  LearnedSecrets,
} from './mcp-secrets.js';
import { pacedNotification } from './notification-pacer.js';
import { createResourceTools } from './resource-tools.js';
import { defaultMaxResultChars } from './result-budget.js';
import type { McpToolResultDetails } from './result-mapping.js';
import { callerOf, callTool } from './tool-call.js';
import {
  applyTools,
  defaultMaxDescriptionChars,
  type ListedTool,
  listTools,
  type ToolEntry,
  toolEntry,
} from './tool-listing.js';
import { mcpToolWireName } from './tool-names.js';
import { mcpOrigin } from './untrusted-result.js';

/** Shortest time between the starts of two listings a server's list_changed asked for, in ms. */
const minRefreshIntervalMs = 1000;

/** An MCP tool as an `AgentTool`: arguments are the JSON object the tool's input schema describes. */
export type McpAgentTool = AgentTool<Record<string, unknown>, McpToolResultDetails>;

/** Where the adapter's connection stands. */
export type McpConnectionStatus = 'connected' | 'disconnected' | 'closed';

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
  readonly #closeController = new AbortController();
  readonly #auth: McpAuth;
  readonly #connector: McpConnector;
  /** Hides the configured credentials and the OAuth tokens obtained in what the model reads (mcp-secrets.ts). */
  readonly #hide: (text: string) => string;
  #entries = new Map<string, ToolEntry>();
  #tools: McpAgentTool[] = [];
  #closing: Promise<void> | undefined;
  #refreshing: Promise<void> | undefined;
  #refreshAgain = false;
  #listedOnce = false;
  #roots: readonly McpRoot[];
  /** Who made each call running now: a server's question during a call names them. */
  readonly #inFlight = new Set<McpCaller>();
  /** The list_resources/read_resource tools, once the server declared resources. */
  #resourceTools: McpAgentTool[] | undefined;
  readonly #resourceListeners = new Set<(uri: string) => void>();
  /** onResourcesChanged and onPromptsChanged, at most once a second (notification-pacer.ts). */
  readonly #resourcesChanged = pacedNotification(
    () => this.#options.onResourcesChanged?.(),
    (error) => this.#report(error),
  );
  readonly #promptsChanged = pacedNotification(
    () => this.#options.onPromptsChanged?.(),
    (error) => this.#report(error),
  );

  private constructor(options: McpToolAdapterOptions) {
    this.#roots = options.roots ?? [];
    if (options.name === '' || options.name.includes('/')) {
      throw new AgentError(
        `Invalid MCP server name ${JSON.stringify(options.name)}: it must be non-empty and must not contain "/"`,
      );
    }
    this.name = options.name;
    this.#options = options;
    const secrets = new LearnedSecrets(configuredSecrets(options.transport));
    this.#hide = secrets.hide;
    if (options.onToolsChanged !== undefined) this.#listeners.add(options.onToolsChanged);
    const closeSignal = this.#closeController.signal;
    this.#auth = new McpAuth({
      server: this.name,
      elicitation: options.elicitation,
      closeSignal,
      secrets,
    });
    this.#connector = new McpConnector({
      server: this.name,
      options,
      auth: this.#auth,
      closeSignal,
      setUp: (client, connection) => this.#setUp(client, connection),
      ready: (connection) => this.#ready(connection),
      report: (error) => this.#report(error),
    });
  }

  /**
   * Starts (or reaches) the server, performs the MCP handshake and lists its tools. Rejects with
   * a message naming the server (and, for stdio, its exit code and stderr) when that fails.
   */
  static async connect(options: McpToolAdapterOptions): Promise<McpToolAdapter> {
    const adapter = new McpToolAdapter(options);
    try {
      try {
        await adapter.#connector.open();
      } catch (error) {
        // A server that wants authorization: once the user has authorised, connect again.
        if (!adapter.#auth.awaitingAuthorization) throw error;
        await adapter.#auth.authorize(error);
        await adapter.#connector.open();
      }
    } catch (error) {
      await adapter.close();
      // A server's error may quote what it was sent: the user sees it, a log may keep it.
      throw hideSecretsInAnyError(error, adapter.#hide);
    }
    return adapter;
  }

  /** The server's tools as `AgentTool`s, as last listed (stable objects while unchanged). */
  tools(): McpAgentTool[] {
    return [...this.#tools];
  }

  /** Lists the tools again (reconnecting if needed) and returns the new list. */
  async refreshTools(): Promise<McpAgentTool[]> {
    try {
      const connection = await this.#connector.ensure(undefined);
      await this.#refresh(connection, true);
    } catch (error) {
      throw hideSecretsInAnyError(error, this.#hide);
    }
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

  /** Reads a resource by URI (`resources/read`), with the configured credentials hidden in it. */
  async readResource(uri: string, signal?: AbortSignal): Promise<ReadResourceResult> {
    const result = await this.#request(signal, (client, options) =>
      client.readResource({ uri }, options),
    );
    return hideSecretsInJson(result, this.#hide);
  }

  /**
   * Subscribes to a resource's updates (`resources/subscribe`); `listener` gets the URI of each
   * `notifications/resources/updated`, at most once a second (the last update included).
   * Returns the unsubscribe function.
   */
  async subscribeResource(
    uri: string,
    listener: (uri: string) => void,
  ): Promise<() => Promise<void>> {
    const paced = pacedNotification(
      () => listener(uri),
      (error) => this.#report(error),
    );
    const wrapped = (updated: string) => {
      if (updated === uri) paced.notify();
    };
    this.#closeController.signal.addEventListener('abort', () => paced.cancel(), { once: true });
    this.#resourceListeners.add(wrapped);
    try {
      await this.#request(undefined, (client, options) =>
        client.subscribeResource({ uri }, options),
      );
    } catch (error) {
      this.#resourceListeners.delete(wrapped);
      paced.cancel();
      throw error;
    }
    return async () => {
      this.#resourceListeners.delete(wrapped);
      paced.cancel();
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

  /**
   * A prompt filled in with its arguments (`prompts/get`): messages to send to the model, with the
   * configured credentials hidden (an application sends them as the user's own words, unredacted).
   */
  async getPrompt(
    name: string,
    args: Record<string, string> = {},
    signal?: AbortSignal,
  ): Promise<GetPromptResult> {
    const result = await this.#request(signal, (client, options) =>
      client.getPrompt({ name, arguments: args }, options),
    );
    return hideSecretsInJson(result, this.#hide);
  }

  /** Completions for a prompt's or a resource template's argument (`completion/complete`). */
  complete(params: CompleteRequest['params'], signal?: AbortSignal): Promise<CompleteResult> {
    return this.#request(signal, (client, options) => client.complete(params, options));
  }

  async #request<T>(
    signal: AbortSignal | undefined,
    run: (client: Client, options: { signal?: AbortSignal; timeout: number }) => Promise<T>,
  ): Promise<T> {
    const connection = await this.#connector.ensure(signal);
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
    const connection = this.#connector.current;
    if (connection !== undefined && !connection.closed)
      await connection.client.sendRootsListChanged();
  }

  /** Where the connection stands; a `disconnected` adapter reconnects on the next call. */
  get status(): McpConnectionStatus {
    if (this.#closing !== undefined) return 'closed';
    const connection = this.#connector.current;
    return connection !== undefined && !connection.closed ? 'connected' : 'disconnected';
  }

  /** The server's name and version from the handshake. */
  get serverInfo(): Implementation | undefined {
    return this.#connector.current?.client.getServerVersion();
  }

  /** The server's capabilities from the handshake. */
  get serverCapabilities(): ServerCapabilities | undefined {
    return this.#connector.current?.client.getServerCapabilities();
  }

  /**
   * The server's instructions for the model, if it gave any (worth adding to the system prompt,
   * as the server's words): cut at `maxDescriptionChars` [10,000] with a note, like a description.
   */
  get instructions(): string | undefined {
    const given = this.#connector.current?.client.getInstructions();
    // Hidden like its results: a server naming the token it was started with.
    const instructions = given === undefined ? undefined : this.#hide(given);
    const max = this.#options.maxDescriptionChars ?? defaultMaxDescriptionChars;
    if (instructions === undefined || instructions.length <= max) return instructions;
    return `${instructions.slice(0, max)}… [instructions cut at ${max.toLocaleString('en-US')} characters]`;
  }

  /** The stdio server's process id while it runs. */
  get pid(): number | undefined {
    return this.#connector.current?.stdio?.pid;
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
    this.#resourcesChanged.cancel();
    this.#promptsChanged.cancel();
    await this.#connector.closeAll();
    await this.#auth.close();
  }

  /** Installs the client features' handlers and the adapter's notification handlers. */
  #setUp(client: Client, connection: Connection): void {
    installClientHandlers(client, this.name, this.#options, {
      roots: () => this.#roots,
      callers: () => [...this.#inFlight],
    });
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
      for (const listener of this.#resourceListeners) {
        try {
          listener(notification.params.uri);
        } catch (error) {
          this.#report(error);
        }
      }
    });
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () =>
      this.#resourcesChanged.notify(),
    );
    client.setNotificationHandler(PromptListChangedNotificationSchema, () =>
      this.#promptsChanged.notify(),
    );
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      if (this.#connector.current === connection) void this.#refresh(connection, false);
    });
  }

  /** After the handshake: the resource tools, the log level, and the first listing of tools. */
  async #ready(connection: Connection): Promise<void> {
    const client = connection.client;
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
        untrustedOrigin: this.#untrustedOrigin(),
        maxResultChars: this.#options.maxResultChars ?? defaultMaxResultChars,
        hide: this.#hide,
      });
    }
    // Within what is left of connectTimeoutMs: a server that answered the handshake but never
    // the listing held connect() for requestTimeoutMs more (60 s where the user allowed 30).
    const left = () =>
      Math.max(
        1,
        (this.#options.connectTimeoutMs ?? 30_000) - (performance.now() - connection.openedAt),
      );
    const logLevel = this.#options.logLevel;
    if (logLevel !== undefined && client.getServerCapabilities()?.logging !== undefined)
      await client.setLoggingLevel(logLevel, {
        timeout: Math.min(this.#options.requestTimeoutMs ?? 60_000, left()),
      });
    const listed = await this.#listTools(connection, left());
    if (this.#connector.closing) throw this.#connector.closedError();
    this.#applyTools(listed, !this.#listedOnce);
    this.#listedOnce = true;
  }

  #listTools(connection: Connection, atMostMs = Number.POSITIVE_INFINITY): Promise<ListedTool[]> {
    return listTools(connection.client, {
      server: this.name,
      timeoutMs: Math.min(this.#options.requestTimeoutMs ?? 60_000, atMostMs),
      report: (error) => this.#report(error),
      maxTools: this.#options.maxTools,
    });
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
        const started = performance.now();
        const listed = await this.#listTools(connection);
        this.#applyTools(listed, false);
        // Changes that came meanwhile wait for their turn: a server sending list_changed as
        // fast as it can write had the client list (and parse) its tools back to back.
        const wait = minRefreshIntervalMs - (performance.now() - started);
        if (this.#refreshAgain && wait > 0)
          await abortableDelay(wait, this.#closeController.signal).catch(() => undefined);
      } while (this.#refreshAgain && !this.#closeController.signal.aborted);
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
    const { entries, tools, change } = applyTools({
      server: this.name,
      listed,
      filter: this.#options.toolFilter,
      previousEntries: this.#entries,
      previousTools: this.#tools,
      extraTools: this.#resourceTools ?? [],
      // What the model reads of a tool (title, description, schemas) has the server's configured
      // credentials hidden, as its results do: a server naming the token it was started with in
      // a description or a schema default showed it to the model on every turn.
      build: (definition, rawInputSchema, fingerprint) =>
        toolEntry(
          hideSecretsInJson(definition, this.#hide),
          hideSecretsInJson(rawInputSchema, this.#hide),
          fingerprint,
          {
            server: this.name,
            options: this.#options,
            call: (mcpName, taskRequired, args, ctx) =>
              this.#call(mcpName, taskRequired, args, ctx),
          },
        ),
    });
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

  async #call(
    mcpName: string,
    taskRequired: boolean,
    args: Record<string, unknown>,
    ctx: ToolContext,
  ): Promise<ToolResult<McpToolResultDetails>> {
    // A fresh object per call: two calls of one agent and tool are two entries.
    const caller = callerOf(ctx);
    this.#inFlight.add(caller);
    try {
      return await callTool({
        server: this.name,
        connector: this.#connector,
        auth: this.#auth,
        mcpName,
        taskRequired,
        args,
        ctx,
        untrustedOrigin: this.#untrustedOrigin(),
        maxResultChars: this.#options.maxResultChars ?? defaultMaxResultChars,
        hide: this.#hide,
      });
    } finally {
      this.#inFlight.delete(caller);
    }
  }

  /** Who the results come from, for the untrusted-content note; `undefined` when not marked. */
  #untrustedOrigin(): string | undefined {
    return this.#options.markUntrusted === false ? undefined : mcpOrigin(this.name);
  }

  #report(error: unknown): void {
    this.#options.onError?.(hideSecretsInAnyError(error, this.#hide));
  }
}
