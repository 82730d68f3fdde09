/**
 * Any set of `AgentTool`s as an MCP server: each call through core's `executeTool` — the loop's own path, so arguments
 * are validated, the permission gate and hooks apply on the server side, timeouts and resource
 * locks hold — with progress notifications and cancellation.
 */
import { randomUUID } from 'node:crypto';
import {
  AgentError,
  type AgentHooks,
  type AnyAgentTool,
  executeTool,
  jsonContentAsText,
  type PathDenialCheck,
  type PermissionGate,
  type ToolResultMessage,
} from '@agent/core';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
  McpError,
  type Tool,
  type ToolAnnotations,
} from '@modelcontextprotocol/sdk/types.js';

/** Options of the tool server. */
export interface ToolServerOptions {
  /** The tools served, by their names. */
  tools: readonly AnyAgentTool[];
  /** How the server introduces itself [`agent-tools`, `0.1.0`]. */
  name?: string;
  version?: string;
  /** Instructions for the client's model. */
  instructions?: string;
  /** Decides each call, on the server side, as in an agent [allow]. */
  permissionGate?: PermissionGate;
  /** Handed to tools as `ctx.isPathDenied` (e.g. `policy.isPathDenied`): search and listings leave covered paths out. */
  isPathDenied?: PathDenialCheck;
  hooks?: AgentHooks;
  /**
   * The gate and hooks of one client session's calls, in place of `permissionGate` and `hooks`:
   * hooks that keep state per session (a rate limit, an audit log) then see each client apart.
   * Called with the session's id (a UUID) for each server instance — over stdio one, for its one
   * client; over HTTP one per request, with the session its client was given at `initialize`
   * (see `serveHttp`) — so it should be cheap, and keep nothing per session itself.
   */
  forSession?: (sessionId: string) => Pick<ToolServerOptions, 'permissionGate' | 'hooks'>;
  /** Per-call timeout when a tool's policy sets none, in ms [600000]. */
  timeoutMs?: number;
  /**
   * Tool calls that run at once for the server's clients together (over HTTP: every holder of
   * the token); further calls wait their turn [8].
   */
  maxConcurrentCalls?: number;
  /**
   * Calls that may wait for a turn; a call past them is refused at once with a JSON-RPC error
   * (code -32000) saying so, so a client flooding the server cannot queue without bound [32].
   */
  maxQueuedCalls?: number;
}

/** Default of {@link ToolServerOptions.maxConcurrentCalls}. */
export const defaultMaxConcurrentCalls = 8;
/** Default of {@link ToolServerOptions.maxQueuedCalls}. */
export const defaultMaxQueuedCalls = 32;

/** JSON-RPC error code of a call refused because too many are running and waiting. */
export const serverBusyErrorCode = -32000;

/**
 * Turns for tool calls: at most `limit` run at once, at most `queueLimit` wait (first come, first
 * served), the rest are refused. Shared by every server instance of one `serveHttp`.
 */
export class CallSlots {
  readonly #limit: number;
  readonly #queueLimit: number;
  #running = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(options: Pick<ToolServerOptions, 'maxConcurrentCalls' | 'maxQueuedCalls'>) {
    this.#limit = positive(
      'maxConcurrentCalls',
      options.maxConcurrentCalls ?? defaultMaxConcurrentCalls,
    );
    this.#queueLimit = atLeastZero(
      'maxQueuedCalls',
      options.maxQueuedCalls ?? defaultMaxQueuedCalls,
    );
  }

  /** Calls running now. */
  get running(): number {
    return this.#running;
  }

  /** Calls waiting for a turn now. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /**
   * Resolves with the function that gives the turn back once the call may run; rejects with an
   * `McpError` when the queue is full, or when `signal` aborts while it waits.
   */
  async take(signal: AbortSignal): Promise<() => void> {
    if (this.#running < this.#limit && this.#waiting.length === 0) return this.#started();
    if (this.#waiting.length >= this.#queueLimit) {
      throw new McpError(
        serverBusyErrorCode,
        `Too many tool calls at once: ${this.#running} running and ${this.#waiting.length} waiting ` +
          `(maxConcurrentCalls ${this.#limit}, maxQueuedCalls ${this.#queueLimit}); ` +
          'call again when one has ended',
      );
    }
    if (signal.aborted)
      throw new McpError(serverBusyErrorCode, 'Cancelled while waiting for a turn');
    return new Promise((resolve, reject) => {
      const turn = () => {
        signal.removeEventListener('abort', cancel);
        resolve(this.#started());
      };
      const cancel = () => {
        const index = this.#waiting.indexOf(turn);
        if (index >= 0) this.#waiting.splice(index, 1);
        reject(new McpError(serverBusyErrorCode, 'Cancelled while waiting for a turn'));
      };
      signal.addEventListener('abort', cancel, { once: true });
      this.#waiting.push(turn);
    });
  }

  #started(): () => void {
    this.#running += 1;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.#running -= 1;
      // The turn passes straight to the first waiting call.
      this.#waiting.shift()?.();
    };
  }
}

function positive(name: string, value: number): number {
  if (!(value >= 1)) throw new RangeError(`${name} must be a number >= 1, got ${String(value)}`);
  return value;
}

function atLeastZero(name: string, value: number): number {
  if (!(value >= 0)) throw new RangeError(`${name} must be a number >= 0, got ${String(value)}`);
  return value;
}

/** A tool's annotations, from its policy: read-only tools are read-only and idempotent. */
function annotationsOf(tool: AnyAgentTool): ToolAnnotations {
  const permission = tool.policy?.permission ?? 'full-access';
  const annotations: ToolAnnotations = {
    readOnlyHint: permission === 'read-only',
    destructiveHint: permission === 'full-access',
    idempotentHint: permission === 'read-only',
    openWorldHint: permission === 'full-access',
  };
  if (tool.label !== undefined && tool.label !== tool.name) annotations.title = tool.label;
  return annotations;
}

function toMcpTool(tool: AnyAgentTool): Tool {
  return {
    name: tool.name,
    ...(tool.label === undefined || tool.label === tool.name ? {} : { title: tool.label }),
    description: tool.description,
    inputSchema: tool.parameters as Tool['inputSchema'],
    annotations: annotationsOf(tool),
  };
}

/**
 * A result as MCP content. JSON blocks go as text (every client reads that) and, when the result's
 * only JSON block is an object, also as `structuredContent` (MCP's structured tool output).
 */
function toCallResult(message: ToolResultMessage): CallToolResult {
  const json = message.content.filter((block) => block.type === 'json');
  const structured =
    json.length === 1 &&
    json[0]?.value !== null &&
    typeof json[0]?.value === 'object' &&
    !Array.isArray(json[0]?.value)
      ? (json[0]?.value as Record<string, unknown>)
      : undefined;
  return {
    content: jsonContentAsText(message.content).map((block) =>
      block.type === 'text'
        ? { type: 'text' as const, text: block.text }
        : { type: 'image' as const, data: block.data, mimeType: block.mimeType },
    ),
    ...(structured === undefined ? {} : { structuredContent: structured }),
    ...(message.isError ? { isError: true } : {}),
  };
}

/**
 * The tool calls running on a server, by their JSON-RPC id, so that a `notifications/cancelled`
 * reaching another server instance (stateless HTTP: each POST gets its own) still stops them.
 */
export class InFlightCalls {
  readonly #calls = new Map<string | number, Set<AbortController>>();

  /** Records a running call; the returned function forgets it. */
  start(id: string | number, controller: AbortController): () => void {
    let calls = this.#calls.get(id);
    if (calls === undefined) {
      calls = new Set();
      this.#calls.set(id, calls);
    }
    calls.add(controller);
    return () => {
      calls.delete(controller);
      if (calls.size === 0 && this.#calls.get(id) === calls) this.#calls.delete(id);
    };
  }

  /** Aborts the running calls with this id (ids are the client's; see serveHttp); how many. */
  cancel(id: string | number, reason: unknown): number {
    const calls = [...(this.#calls.get(id) ?? [])];
    for (const controller of calls) controller.abort(reason);
    return calls.length;
  }
}

/**
 * Numbers every served call of this process: a call's `toolCallId` must be its own (hooks and gates
 * keep state per id), and JSON-RPC ids are only unique within one client's session — two HTTP
 * clients both send id 1.
 */
let servedCalls = 0;

/** An MCP server (the SDK's low-level `Server`) that lists and calls the tools. */
export function createToolServer(options: ToolServerOptions): Server {
  return createToolServerWith(options, { slots: new CallSlots(options), sessionId: randomUUID() });
}

/**
 * {@link createToolServer} with state shared across server instances (serveHttp's: one per
 * request): the calls running, by id, for cancellation, and the turns for calls; and the client
 * session the instance serves (for `forSession`).
 */
export function createToolServerWith(
  options: ToolServerOptions,
  shared: { inFlight?: InFlightCalls; slots: CallSlots; sessionId: string },
): Server {
  const { inFlight, slots } = shared;
  const { permissionGate, hooks } = options.forSession?.(shared.sessionId) ?? options;
  const byName = new Map(options.tools.map((tool) => [tool.name, tool]));
  const server = new Server(
    { name: options.name ?? 'agent-tools', version: options.version ?? '0.1.0' },
    {
      capabilities: { tools: {} },
      ...(options.instructions === undefined ? {} : { instructions: options.instructions }),
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: options.tools.map(toMcpTool),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = byName.get(request.params.name);
    if (tool === undefined) {
      return {
        content: [
          {
            type: 'text',
            text: `Tool not found: ${request.params.name}. Available tools: ${[...byName.keys()].join(', ')}`,
          },
        ],
        isError: true,
      };
    }
    const progressToken = request.params._meta?.progressToken;
    let step = 0;
    const cancelled = new AbortController();
    const forget = inFlight?.start(extra.requestId, cancelled);
    const signal = AbortSignal.any([extra.signal, cancelled.signal]);
    let release: () => void;
    try {
      release = await slots.take(signal);
    } catch (error) {
      forget?.();
      throw error;
    }
    const message = await executeTool(tool, request.params.arguments ?? {}, {
      signal,
      toolCallId: `${String(extra.requestId)}.${++servedCalls}`,
      ...(permissionGate === undefined ? {} : { permissionGate }),
      ...(options.isPathDenied === undefined ? {} : { isPathDenied: options.isPathDenied }),
      ...(hooks === undefined ? {} : { hooks }),
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      onEvent: (event) => {
        if (event.type !== 'progress' || progressToken === undefined) return;
        step += 1;
        void extra
          .sendNotification({
            method: 'notifications/progress',
            params: {
              progressToken,
              progress: event.progress === undefined ? step : event.progress,
              ...(event.progress === undefined ? {} : { total: 1 }),
              message: event.text,
            },
          })
          .catch(() => undefined);
      },
    }).finally(() => {
      // Given back with the call's result (a timed-out tool that ignores its signal is reported
      // after the abort grace, as in an agent).
      release();
      forget?.();
    });
    return toCallResult(message);
  });
  return server;
}

/** A running {@link serveStdio} server. */
export interface StdioToolServer {
  /**
   * Settles when the connection stops: undefined when stdin ended or `close()` was called; the
   * error when stdin failed, or the transport stopped reading (a message over the SDK reader's
   * 10 MiB: it then pauses stdin, so the input's end would never be seen and the server would
   * linger, reading nothing).
   */
  ended: Promise<Error | undefined>;
  /** Stops serving; `ended` then settles with undefined. */
  close(): Promise<void>;
}

/** What the SDK's stdio reader says when a message is over its limit, and the limit. */
const readBufferOverflow = /ReadBuffer exceeded maximum size of (\d+) bytes/;

function stdioFailure(error: Error): Error {
  const limit = readBufferOverflow.exec(error.message)?.[1];
  if (limit === undefined) return error;
  return new AgentError(
    `The client sent a message over the ${limit}-byte limit of the stdio transport; the rest of the input cannot be read as messages, so the server stops`,
    { cause: error },
  );
}

/**
 * Serves the tools over this process's stdin/stdout until the input ends or fails (`ended`).
 * A message over the SDK reader's 10 MiB ends it with an error naming the limit.
 */
export async function serveStdio(options: ToolServerOptions): Promise<StdioToolServer> {
  const server = createToolServer(options);
  let closing = false;
  let failure: Error | undefined;
  const ended = new Promise<Error | undefined>((resolve) => {
    // Also called for a line that is not JSON-RPC (which is skipped); the transport closes right
    // after the error that stops it, so the last one is why.
    server.onerror = (error) => {
      failure = error;
    };
    server.onclose = () =>
      resolve(
        closing ? undefined : stdioFailure(failure ?? new Error('The stdio transport closed')),
      );
    process.stdin.once('end', () => resolve(undefined));
    process.stdin.once('error', (error) => resolve(error));
  });
  await server.connect(new StdioServerTransport());
  return {
    ended,
    close: () => {
      closing = true;
      return server.close();
    },
  };
}

/** Connects a tool server to any transport (tests, custom hosts). */
export async function serveOn(
  options: ToolServerOptions,
  transport: Transport,
): Promise<{ server: Server; close(): Promise<void> }> {
  const server = createToolServer(options);
  await server.connect(transport);
  return { server, close: () => server.close() };
}
