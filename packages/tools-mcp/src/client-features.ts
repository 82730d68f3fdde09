/**
 * The client side of MCP beyond tools, each behind a handler the application supplies: a
 * server may ask the user for input (elicitation, form or URL mode), ask the application's model
 * for a completion (sampling), ask which directories the client works in (roots), and send log
 * messages. A capability is declared only when its handler is given, so a server never asks for
 * what nobody can answer.
 */
import { setOwnProperty } from '@agent/core';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  type ClientCapabilities,
  type CreateMessageRequest,
  CreateMessageRequestSchema,
  type CreateMessageResult,
  type ElicitRequest,
  ElicitRequestSchema,
  type ElicitResult,
  ErrorCode,
  ListRootsRequestSchema,
  type LoggingLevel,
  LoggingMessageNotificationSchema,
  McpError,
  type Root,
} from '@modelcontextprotocol/sdk/types.js';

/** A tool call of ours that was running on the server when it asked: who made it. */
export interface McpCaller {
  /** The chain of sub-agents that made the call (`ctx.run.agentPath`; `[]` for the main agent). */
  agentPath: readonly string[];
  /** The tool's wire name. */
  toolName: string;
}

/** What a handler learns about the request besides its parameters. */
export interface McpRequestContext {
  /** The server's name (as given to the adapter). */
  server: string;
  /** Aborted when the server cancels the request or the connection ends. */
  signal: AbortSignal;
  /**
   * The calls of ours running on this server when it asked, so a prompt can say which agent's
   * call it comes from. MCP ties a server's request to no call of the client's, so every call in
   * flight is listed (one, usually); for a URL elicitation that failed a call (-32042), that call
   * alone. Empty when none was running.
   */
  callers: readonly McpCaller[];
}

/**
 * Answers `elicitation/create`: form mode (`params.requestedSchema`, show the fields) or URL mode
 * (`params.mode === 'url'`, show `params.url` for the user to open). Return `{ action: 'accept',
 * content }`, `{ action: 'decline' }` or `{ action: 'cancel' }`. Fields the user leaves out get the
 * schema's `default` (SEP-1034) before the answer is sent.
 */
export type McpElicitationHandler = (
  params: ElicitRequest['params'],
  context: McpRequestContext,
) => Promise<ElicitResult>;

/**
 * Answers `sampling/createMessage` with a completion, typically from the application's own model
 * behind the user's approval; throw to refuse (the server gets an error).
 */
export type McpSamplingHandler = (
  params: CreateMessageRequest['params'],
  context: McpRequestContext,
) => Promise<CreateMessageResult>;

/** A log message a server sent (`notifications/message`). */
export interface McpLogEntry {
  server: string;
  level: LoggingLevel;
  logger?: string;
  data: unknown;
}

/** A directory the client works in: a path (made a `file://` URI) or a root as MCP has it. */
export type McpRoot = string | Root;

/** The client-side options of the adapter (see {@link McpToolAdapterOptions}). */
export interface McpClientFeatures {
  /** Answers elicitation requests (form and URL mode). Without it the capability is not declared. */
  elicitation?: McpElicitationHandler;
  /** Answers sampling requests. Without it the capability is not declared. */
  sampling?: McpSamplingHandler;
  /** Roots offered to the server (`roots/list`); change them with `adapter.setRoots()`. */
  roots?: readonly McpRoot[];
  /** Receives the server's log messages. */
  onLog?: (entry: McpLogEntry) => void;
  /** Asks the server to send log messages at this level and above (`logging/setLevel`). */
  logLevel?: LoggingLevel;
}

/** The capabilities to declare for the features configured. */
export function clientCapabilities(features: McpClientFeatures): ClientCapabilities {
  const capabilities: ClientCapabilities = {};
  if (features.elicitation !== undefined) capabilities.elicitation = { form: {}, url: {} };
  if (features.sampling !== undefined) capabilities.sampling = {};
  if (features.roots !== undefined) capabilities.roots = { listChanged: true };
  return capabilities;
}

/** Roots as MCP sends them: paths become `file://` URIs named after their last segment. */
export function toMcpRoots(roots: readonly McpRoot[]): Root[] {
  return roots.map((root) => {
    if (typeof root !== 'string') return root;
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(root)) return { uri: root };
    const uri = fileUri(root);
    const name = root
      .replace(/(?<!\/)\/+$/, '')
      .split('/')
      .pop();
    return name === undefined || name === '' ? { uri } : { uri, name };
  });
}

/** A `file://` URI for an absolute path (POSIX, or Windows `C:\\…`), without Node's `url` module. */
function fileUri(path: string): string {
  const slashed = path.replaceAll('\\', '/');
  const absolute = /^[a-zA-Z]:\//.test(slashed) ? `/${slashed}` : slashed;
  return `file://${absolute
    .split('/')
    .map((segment) => encodeURIComponent(segment).replace(/%3A/gi, ':'))
    .join('/')}`;
}

/** SEP-1034: an accepted form answer gets the requested schema's defaults for missing fields. */
export function withDefaults(result: ElicitResult, params: ElicitRequest['params']): ElicitResult {
  if (result.action !== 'accept' || !('requestedSchema' in params)) return result;
  const properties = params.requestedSchema?.properties ?? {};
  const content: Record<string, unknown> = { ...(result.content ?? {}) };
  for (const [name, schema] of Object.entries(properties)) {
    const fallback = (schema as { default?: unknown }).default;
    if (fallback === undefined || (Object.hasOwn(content, name) && content[name] !== undefined))
      continue;
    // Defined, not assigned: a field named `__proto__` is a field, not the object's prototype.
    setOwnProperty(content, name, fallback);
  }
  return { ...result, content: content as ElicitResult['content'] };
}

/** Elicitation and sampling requests of one server's connection being answered at once, at most. */
export const maxServerRequestsAtOnce = 4;

/**
 * Runs the handlers of one connection's elicitation and sampling requests, at most
 * {@link maxServerRequestsAtOnce} at a time; past that a request is refused with an error the
 * server reads. Each asks the user (or a model, at the user's cost): a server that sent a
 * thousand at once had a thousand questions or completions under way.
 */
function requestGate(server: string): <T>(handler: () => Promise<T>) => Promise<T> {
  let running = 0;
  return async (handler) => {
    if (running >= maxServerRequestsAtOnce)
      throw new McpError(
        ErrorCode.InternalError,
        `The client is already answering ${maxServerRequestsAtOnce} requests of MCP server "${server}"; ask again once one is answered`,
      );
    running++;
    try {
      return await handler();
    } finally {
      running--;
    }
  };
}

/** Installs the handlers of the configured features on a client (before it connects). */
export function installClientHandlers(
  client: Client,
  server: string,
  features: McpClientFeatures,
  state: { roots: () => readonly McpRoot[]; callers: () => readonly McpCaller[] },
): void {
  const { elicitation, sampling, onLog } = features;
  const currentRoots = state.roots;
  const gate = requestGate(server);
  if (elicitation !== undefined) {
    client.setRequestHandler(ElicitRequestSchema, (request, extra) =>
      gate(async () =>
        withDefaults(
          await elicitation(request.params, {
            server,
            signal: extra.signal,
            callers: state.callers(),
          }),
          request.params,
        ),
      ),
    );
  }
  if (sampling !== undefined) {
    client.setRequestHandler(CreateMessageRequestSchema, (request, extra) =>
      gate(() =>
        sampling(request.params, { server, signal: extra.signal, callers: state.callers() }),
      ),
    );
  }
  if (features.roots !== undefined) {
    client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: toMcpRoots(currentRoots()) }));
  }
  if (onLog !== undefined) {
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      const { level, logger, data } = notification.params;
      onLog({ server, level, data, ...(logger === undefined ? {} : { logger }) });
    });
  }
}
