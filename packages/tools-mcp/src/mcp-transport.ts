// Creating the transport to an MCP server, and what we know about transports' failures.
import { AgentError, ToolError } from '@agent/core';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike, Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { boundedFetch } from './bounded-fetch.js';
import { refuseForeignLoopbackListener } from './foreign-listener.js';
import { scopeHeadersToOrigin } from './header-scope.js';
import type { McpHttpTransportConfig, McpTransportConfig } from './mcp-options.js';
import { boundReconnectDelay, paceStreamOpens } from './sse-reconnect.js';
import type { StdioProcessTransport } from './stdio-transport.js';

/** Default of an HTTP transport's `maxMessageBytes`: the stdio transport's. */
const defaultMaxHttpMessageBytes = 256 * 1024 * 1024;

/** What an HTTP transport gets from the adapter's authorization (see `McpAuth`). */
export interface HttpTransportAuth {
  /** The auth provider and fetch for an HTTP transport of this configuration. */
  forHttp(config: McpHttpTransportConfig): Promise<{
    authProvider: OAuthClientProvider | undefined;
    fetch: FetchLike | undefined;
  }>;
  /** The Streamable HTTP transport just created with them (the one that may trade a code). */
  usedBy(transport: StreamableHTTPClientTransport): void;
}

/** How to create a transport: the auth for HTTP and whether the server speaks only HTTP+SSE. */
export interface CreateTransportOptions {
  readonly server: string;
  readonly auth: HttpTransportAuth;
  /** The server speaks only the 2024-11-05 HTTP+SSE transport. */
  readonly legacySse: boolean;
}

/** Creates the transport a configuration describes (stdio and OAuth loaded on demand). */
export async function createTransport(
  config: McpTransportConfig,
  options: CreateTransportOptions,
): Promise<Transport> {
  switch (config.type) {
    case 'stdio': {
      const refused = config.beforeStart?.();
      // `denied`: the owner's answer, which no retry changes (the connector does not retry it).
      if (refused !== undefined)
        throw new ToolError(`MCP server "${options.server}" was not started: ${refused}`, {
          kind: 'denied',
        });
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
      const http = userinfoAsHeader(config);
      const { authProvider, fetch: given } = await options.auth.forHttp(http);
      const scoped = scopeHeadersToOrigin(
        refuseForeignLoopbackListener(
          given ?? ((url, init) => fetch(url, init)),
          new URL(String(http.url)),
          Object.keys(http.headers ?? {}),
        ),
        new URL(String(http.url)).origin,
        Object.keys(http.headers ?? {}),
      );
      const fetchFn = boundedFetch(scoped, {
        server: options.server,
        maxBytes: http.maxMessageBytes ?? defaultMaxHttpMessageBytes,
      });
      if (options.legacySse) {
        return new SSEClientTransport(new URL(http.url), {
          ...(http.headers === undefined ? {} : { requestInit: { headers: http.headers } }),
          ...(authProvider === undefined ? {} : { authProvider }),
          fetch: paceStreamOpens(fetchFn),
        });
      }
      const transport = new StreamableHTTPClientTransport(new URL(http.url), {
        ...(http.headers === undefined ? {} : { requestInit: { headers: http.headers } }),
        ...(authProvider === undefined ? {} : { authProvider }),
        fetch: fetchFn,
      });
      boundReconnectDelay(transport);
      options.auth.usedBy(transport);
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
 * A URL's user name and password (`https://user:pass@host/mcp`, as curl takes them) sent the way
 * fetch can: as Basic authorization (unless `headers` already authorizes), the URL without them.
 * fetch refuses a URL that holds credentials, and its error quoted the password to the terminal.
 */
export function userinfoAsHeader(config: McpHttpTransportConfig): McpHttpTransportConfig {
  let url: URL;
  try {
    url = new URL(String(config.url));
  } catch {
    return config;
  }
  if (url.username === '' && url.password === '') return config;
  const credentials = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  url.username = '';
  url.password = '';
  const headers = { ...config.headers };
  if (!Object.keys(headers).some((name) => name.toLowerCase() === 'authorization'))
    headers.Authorization = `Basic ${basicCredentials(credentials)}`;
  return { ...config, url: url.href, headers };
}

/** `user:password`'s UTF-8 bytes in base64, as Basic authorization sends them (no Node Buffer: the package root runs outside Node too). */
export function basicCredentials(text: string): string {
  let binary = '';
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** Whether a connect failed because the server refused the Streamable HTTP POST (400/404/405). */
export function refusedPost(error: unknown): boolean {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof StreamableHTTPError && [400, 404, 405].includes(cause.code ?? 0))
      return true;
  }
  return false;
}

/** Whether an HTTP server ended the session (404, or a 400 that says so): the call never ran. */
export function isSessionLost(error: unknown): boolean {
  if (!(error instanceof StreamableHTTPError)) return false;
  return error.code === 404 || (error.code === 400 && /session/i.test(error.message));
}

/** Whether a transport is our stdio process transport (it knows the exit and stderr). */
export function isStdioProcessTransport(transport: Transport): transport is StdioProcessTransport {
  return 'stderrTail' in transport && 'exit' in transport;
}

/**
 * Keeps a transport's messages in order for the client. The SDK runs a notification's handler a
 * microtask after it arrives but a response's at once, so a final progress notification that
 * arrives just before its result (same chunk) found its handler already gone and was dropped.
 * After a notification, the messages that follow in the same tick are therefore delivered one
 * microtask apart, each after the handlers the previous one scheduled. Messages that follow no
 * notification (a plain call's response) are delivered at once: no promise per message.
 */
export function deliverInOrder(transport: Transport): void {
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
