/**
 * Any set of `AgentTool`s served as an MCP server (`@agent/tools-mcp/serve`): over stdio or
 * Streamable HTTP, each call through core's `executeTool` — the loop's own path, so arguments
 * are validated, the permission gate and hooks apply on the server side, timeouts and resource
 * locks hold — with progress notifications and cancellation.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type AgentHooks,
  type AnyAgentTool,
  executeTool,
  type PermissionGate,
  type ToolResultMessage,
} from '@agent/core';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
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
  hooks?: AgentHooks;
  /** Per-call timeout when a tool's policy sets none, in ms [600000]. */
  timeoutMs?: number;
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

function toCallResult(message: ToolResultMessage): CallToolResult {
  return {
    content: message.content.map((block) =>
      block.type === 'text'
        ? { type: 'text' as const, text: block.text }
        : { type: 'image' as const, data: block.data, mimeType: block.mimeType },
    ),
    ...(message.isError ? { isError: true } : {}),
  };
}

/** An MCP server (the SDK's low-level `Server`) that lists and calls the tools. */
export function createToolServer(options: ToolServerOptions): Server {
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
    const message = await executeTool(tool, request.params.arguments ?? {}, {
      signal: extra.signal,
      toolCallId: String(extra.requestId),
      ...(options.permissionGate === undefined ? {} : { permissionGate: options.permissionGate }),
      ...(options.hooks === undefined ? {} : { hooks: options.hooks }),
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
    });
    return toCallResult(message);
  });
  return server;
}

/** Serves the tools over this process's stdin/stdout until the input ends. */
export async function serveStdio(options: ToolServerOptions): Promise<{ close(): Promise<void> }> {
  const server = createToolServer(options);
  await server.connect(new StdioServerTransport());
  return { close: () => server.close() };
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

/** Options of {@link serveHttp}. */
export interface HttpServeOptions extends ToolServerOptions {
  /** [127.0.0.1] */
  host?: string;
  /** [0: any free port] */
  port?: number;
  /** The MCP endpoint's path [/mcp]. */
  path?: string;
  /**
   * `Host` values accepted (`name:port`) [on a loopback address: `127.0.0.1`, `localhost` and
   * `[::1]` with the port]. A request with another `Host`, or an `Origin` whose host is not one of
   * them, is refused with 403: a web page cannot reach the tools through DNS rebinding.
   */
  allowedHosts?: readonly string[];
}

function isLoopback(address: string): boolean {
  return address === '127.0.0.1' || address === '::1' || address.startsWith('127.');
}

function refuse(response: ServerResponse, why: string): void {
  response.writeHead(403, { 'content-type': 'application/json' });
  response.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: why }, id: null }));
}

async function readBody(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text === '' ? undefined : JSON.parse(text);
}

/**
 * Serves the tools over Streamable HTTP at `http://host:port/mcp`, stateless: each request gets
 * its own server instance (tools have no session state), progress streamed on the response.
 */
export async function serveHttp(
  options: HttpServeOptions,
): Promise<{ url: string; close(): Promise<void> }> {
  const path = options.path ?? '/mcp';
  let allowed: ReadonlySet<string> | undefined;
  const http = createServer((request: IncomingMessage, response: ServerResponse) => {
    if (allowed !== undefined) {
      const host = (request.headers.host ?? '').toLowerCase();
      if (!allowed.has(host)) {
        refuse(response, `Host "${host}" is not allowed`);
        return;
      }
      const origin = request.headers.origin;
      if (origin !== undefined) {
        let originHost = '';
        try {
          originHost = new URL(origin).host.toLowerCase();
        } catch {
          originHost = '';
        }
        if (!allowed.has(originHost)) {
          refuse(response, `Origin "${origin}" is not allowed`);
          return;
        }
      }
    }
    const url = new URL(request.url ?? '/', 'http://localhost');
    if (url.pathname !== path) {
      response.writeHead(404).end();
      return;
    }
    if (request.method !== 'POST') {
      // Stateless: no server-initiated stream, no session to end.
      response.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    void (async () => {
      const server = createToolServer(options);
      // No sessionIdGenerator: stateless mode.
      const transport = new StreamableHTTPServerTransport({});
      response.on('close', () => {
        void transport.close();
        void server.close();
      });
      try {
        const body = await readBody(request);
        await server.connect(transport);
        await transport.handleRequest(request, response, body);
      } catch (error) {
        if (!response.headersSent) {
          response.writeHead(400, { 'content-type': 'application/json' });
          response.end(
            JSON.stringify({
              jsonrpc: '2.0',
              error: { code: -32700, message: `Parse error: ${String(error)}` },
              id: null,
            }),
          );
        }
      }
    })();
  });
  await new Promise<void>((resolve) =>
    http.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve),
  );
  const { address, port } = http.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  if (options.allowedHosts !== undefined)
    allowed = new Set(options.allowedHosts.map((name) => name.toLowerCase()));
  else if (isLoopback(address))
    allowed = new Set([
      `${host}:${port}`,
      `localhost:${port}`,
      `127.0.0.1:${port}`,
      `[::1]:${port}`,
    ]);
  return {
    url: `http://${host}:${port}${path}`,
    close: () =>
      new Promise((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}
