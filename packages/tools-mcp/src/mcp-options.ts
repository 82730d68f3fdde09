import type { AgentTool, ToolPolicy } from '@agent/core';
import type { Sandbox, SandboxMode, SandboxOptions } from '@agent/sandbox';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { FetchLike, Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { McpClientFeatures } from './client-features.js';
import type { McpOAuthOptions } from './oauth.js';
import type { McpToolResultDetails } from './result-mapping.js';

/** Starts a local server as a child process and speaks MCP over its stdin/stdout (Node only). */
export interface McpStdioTransportConfig {
  type: 'stdio';
  /** Executable to run; no shell is involved (`npx`, `uvx`, `node`, `/path/to/server`). */
  command: string;
  args?: readonly string[];
  /**
   * Added as given to a minimal inherited environment (HOME, PATH, SHELL, TERM, USER, LOGNAME):
   * the way to give this server a credential it needs.
   */
  env?: Record<string, string>;
  /**
   * Pass `process.env` instead of that minimal set [false], without the variables that hold
   * credentials (`credentialFreeEnvironment` of `@agent/core`: API keys, tokens, passwords).
   */
  inheritEnv?: boolean;
  /** Names of the host's variables this server gets too, credentials or not (exact names) [none]. */
  passEnv?: readonly string[];
  /** Working directory of the server [the host's]. */
  cwd?: string;
  /** Receives the server's stderr as it arrives; the tail is always kept for error messages. */
  onStderr?: (text: string) => void;
  /** `close()` waits this long after closing stdin, and again after SIGTERM, before escalating, in ms [2000]. */
  closeGraceMs?: number;
  /**
   * Run the server in the OS sandbox of `@agent/sandbox` (opt-in): a `Sandbox`, a mode, or
   * sandbox options (writable roots default to `cwd`; network off unless `network` says so).
   */
  sandbox?: Sandbox | SandboxMode | Partial<SandboxOptions>;
  /**
   * Largest message the server may send, in bytes [256 MiB] (the SDK's own reader stops at
   * 10 MiB). A longer one stops the server with an error naming this limit; the next call
   * reconnects. A server that stops reading its input while more than this waits to be written
   * to it is stopped the same way.
   */
  maxMessageBytes?: number;
  /**
   * Start the server in a process group of its own (POSIX) [true]: `close()` stops its
   * grandchildren too, and neither a Ctrl-C in the terminal nor the terminal itself reaches it.
   * On Linux the group stays in the host's session (a new session would be a scheduling autogroup
   * of its own, slow under load): the server is started through `perl`, which sets the group,
   * lets go of the terminal and execs the server (same pid). Without `perl`, and on other
   * systems, it gets a new session instead. False starts it as a plain child, like the SDK's
   * transport.
   */
  processGroup?: boolean;
  /**
   * Asked before each start of the process (the first, and each reconnect): a reason it returns
   * refuses that start — the connect fails naming it, and nothing is spawned. For a host that
   * pins what the server runs (files a sandboxed command could have rewritten since).
   */
  beforeStart?: () => string | undefined;
}

/** A remote (or local) server over Streamable HTTP. */
export interface McpHttpTransportConfig {
  type: 'http';
  /** The server's MCP endpoint, e.g. `https://example.com/mcp`. */
  url: string | URL;
  /**
   * Sent with every request to the server's origin (e.g. `Authorization`); never to another
   * origin, such as the OAuth metadata, registration and token endpoints its 401 names.
   */
  headers?: Record<string, string>;
  /** OAuth for servers that require it (the SDK's provider interface), if you run the flow yourself. */
  authProvider?: OAuthClientProvider;
  /**
   * OAuth done by the adapter (authorization code + PKCE with a loopback redirect, dynamic or
   * pre-registered client, refresh, step-up): you only say how to show the URL. See `McpOAuthOptions`.
   */
  oauth?: McpOAuthOptions;
  /** A custom fetch (proxies, tests, instrumentation). */
  fetch?: FetchLike;
  /**
   * Largest message the server may send, in bytes [256 MiB]: a JSON answer whole, or one event of
   * a stream. A longer one ends the connection with an error naming this limit (an endless answer
   * filled the memory); the next call reconnects.
   */
  maxMessageBytes?: number;
}

/** Any other SDK transport (SSE, WebSocket, in-memory…): a factory, called again on each reconnect. */
export interface McpCustomTransportConfig {
  type: 'custom';
  create: () => Transport | Promise<Transport>;
}

/** How to reach an MCP server. */
export type McpTransportConfig =
  | McpStdioTransportConfig
  | McpHttpTransportConfig
  | McpCustomTransportConfig;

/** What changed in a server's tool list (wire names). */
export interface McpToolsChange {
  added: string[];
  removed: string[];
  /** Same wire name, new definition (description, schema, annotations…). */
  changed: string[];
}

/** Called with the whole new list after the server's tools changed. */
export type McpToolsChangedListener = (
  tools: AgentTool<Record<string, unknown>, McpToolResultDetails>[],
  change: McpToolsChange,
) => void;

/** Options of {@link McpToolAdapter.connect}. */
export interface McpToolAdapterOptions extends McpClientFeatures {
  /**
   * The server's name: the namespace of its tools' wire names (`name__tool`), their `source`
   * (`mcp:name`) and permission subjects (`name/tool`). Must not contain `/`.
   */
  name: string;
  transport: McpTransportConfig;
  /**
   * Prefix the tools' wire names with the server's name (`name__tool`) [true]. With false a tool
   * keeps its own name (sanitised), as some agents expose MCP tools; two tools that then share a
   * wire name (here, or with another source in one agent) are refused with an error naming both,
   * never silently shadowed. `source`, permission subjects (`name/tool`) and the resource tools
   * (`name__list_resources`) keep the server's name either way.
   */
  prefix?: boolean;
  /** Keep only the tools for which this returns true (by their MCP definition). */
  toolFilter?: (tool: Tool) => boolean;
  /**
   * Let the server's annotations set how calls are scheduled [true]: a `readOnlyHint` tool runs
   * in parallel; otherwise it is serialised per server, and destructive tools are `exclusive`.
   * With false every tool is `exclusive`. Every tool is `full-access` for the permission gate
   * either way, unless `trustReadOnlyHint` is set.
   */
  trustAnnotations?: boolean;
  /**
   * Let `readOnlyHint` make a tool `read-only` for the permission gate [false]: it then runs
   * without asking in read-only and plan mode (and is served by a read-only `agent mcp serve`).
   * The hint is the server's claim, not a check: set it only for a server you trust to say so
   * truly (an allow rule for the tools you know are safe is narrower).
   */
  trustReadOnlyHint?: boolean;
  /** Adjusts the derived policy of each tool (e.g. to set `maxResultChars`). */
  policy?: (
    tool: Tool,
    derived: ToolPolicy<Record<string, unknown>>,
  ) => ToolPolicy<Record<string, unknown>>;
  /**
   * Longest tool description passed on, in characters [10000]: a longer one is cut (with a note
   * at its end) and reported to `onError`, since the model reads every description on every turn.
   * The server's `instructions` are cut at the same length.
   */
  maxDescriptionChars?: number;
  /**
   * Characters of a tool result's text (and structured content) the model reads [100000]: past
   * them the text is cut, head and tail kept, with a note; images past 20 per result or 20 MiB
   * together are left out, said in the note. The agent loop clips only older results, so the
   * newest would otherwise reach the provider whole. `details` keep the server's blocks.
   */
  maxResultChars?: number;
  /** The most tools taken from the server's listing, in its order [10000]; the rest are left out, reported. */
  maxTools?: number;
  /** Per-call timeout in ms, enforced by the agent loop [the loop's default]. */
  timeoutMs?: number;
  /** Time for starting the server, the `initialize` handshake and the first `tools/list`, in ms [30000]. */
  connectTimeoutMs?: number;
  /** Time for `tools/list` and other non-tool requests, in ms [60000]. */
  requestTimeoutMs?: number;
  /** Reconnecting after the server went away: attempts per call, and the first delay (doubling) in ms [3, 500]. */
  reconnect?: { maxAttempts?: number; delayMs?: number };
  /** Called after the server's tool list changed (`notifications/tools/list_changed`, or a reconnect). */
  onToolsChanged?: McpToolsChangedListener;
  /** Background problems: a failed refresh, a lost connection, a malformed message. */
  onError?: (error: Error) => void;
  /** How this client introduces itself [`{ name: '@agent/tools-mcp', version }`]. */
  clientInfo?: { name: string; version: string };
  /**
   * Offer the server's resources to the model as `<name>__list_resources` and
   * `<name>__read_resource` (read-only) when the server declares resources [true].
   */
  resourceTools?: boolean;
  /**
   * Mark what the server returns as untrusted before the model reads it [true]: text of tool
   * results and resources goes between random-id `UNTRUSTED MCP CONTENT` markers the server cannot
   * forge (imitations inside replaced), structured content stays a JSON block after a note.
   * `false` passes results on unmarked: for a server you wrote, or a program that parses them.
   */
  markUntrusted?: boolean;
  /**
   * The server's resource list changed (`notifications/resources/list_changed`); called at most
   * once a second, the last change included (a flood is not a flood of listings).
   */
  onResourcesChanged?: () => void;
  /** The server's prompt list changed (`notifications/prompts/list_changed`); paced the same way. */
  onPromptsChanged?: () => void;
}
