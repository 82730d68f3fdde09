import { existsSync } from 'node:fs';
import {
  errorMessage,
  isConnectionFailure,
  neutraliseUntrustedMarkers,
  oneLineText,
  ToolError,
  type ToolErrorKind,
  type ToolResult,
} from '@agent/core';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { McpToolResultDetails } from './result-mapping.js';

/** What is known about a failed call when its error is mapped. */
export interface CallErrorContext {
  server: string;
  /** The tool's name on the server. */
  tool: string;
  /** The namespaced wire name. */
  wireName: string;
  /** The call's signal: aborted means the caller cancelled. */
  signal: AbortSignal;
  /** Why the connection went away, when it did (exit code, stderr tail, HTTP error). */
  disconnectReason: string | undefined;
  /** True when the adapter was closed by its owner. */
  adapterClosed: boolean;
}

const mcpErrorPrefix = /^MCP error (-?\d+): /;
/** The server's own answer is wrong (the SDK labels some of these "invalid params"). */
const outputSchemaFailure =
  /Structured content does not match|has an output schema but did not return structured content|Failed to validate structured content|Invalid tools\/call result/;

/** Maps anything a tool call threw to a `ToolError` of the right kind, naming the server. */
export function toCallError(error: unknown, context: CallErrorContext): ToolError {
  const { server, wireName } = context;
  if (ToolError.isInstance(error)) return error;
  if (context.signal.aborted) return ToolError.cancelled(wireName);
  if (context.adapterClosed) {
    return ToolError.cancelled(wireName, `the connection to MCP server "${server}" was closed`);
  }
  const detail = stripPrefix(describeError(error));
  if (error instanceof McpError) {
    switch (error.code) {
      case ErrorCode.ConnectionClosed:
        return new ToolError(
          `MCP server "${server}" stopped answering while "${context.tool}" was running: it ${context.disconnectReason === undefined ? 'closed the connection' : serverWords(context.disconnectReason)}`,
          { kind: 'failed', toolName: wireName, cause: error },
        );
      case ErrorCode.RequestTimeout:
        return new ToolError(`MCP server "${server}" did not answer in time: ${detail}`, {
          kind: 'timeout',
          toolName: wireName,
          cause: error,
        });
      case ErrorCode.InvalidParams:
      case ErrorCode.InvalidRequest:
      case ErrorCode.MethodNotFound:
        if (outputSchemaFailure.test(detail)) break;
        return protocolError(error.code, detail, context, error);
      default:
        break;
    }
  }
  if (context.disconnectReason !== undefined || isConnectionFailure(error)) {
    const reason =
      context.disconnectReason === undefined
        ? `is unreachable (${detail})`
        : serverWords(context.disconnectReason);
    return new ToolError(`MCP server "${server}" ${reason}`, {
      kind: 'failed',
      toolName: wireName,
      cause: error,
    });
  }
  return new ToolError(`MCP server "${server}": tool "${context.tool}" failed: ${detail}`, {
    kind: 'failed',
    toolName: wireName,
    cause: error,
  });
}

/**
 * The TypeScript SDK's `McpServer` (and servers built like it) answers an unknown tool or invalid
 * arguments with an `isError` result whose text is `MCP error -32602: …` instead of a JSON-RPC
 * error. This finds that case so the model gets the same error kind either way.
 */
export function protocolErrorInResult(
  result: ToolResult<McpToolResultDetails>,
  context: CallErrorContext,
): ToolError | undefined {
  if (result.isError !== true || result.content.length !== 1) return undefined;
  const [block] = result.content;
  if (block?.type !== 'text') return undefined;
  const match = mcpErrorPrefix.exec(block.text);
  if (match === null) return undefined;
  const code = Number(match[1]);
  if (code !== ErrorCode.InvalidParams && code !== ErrorCode.MethodNotFound) return undefined;
  const detail = stripPrefix(block.text);
  if (outputSchemaFailure.test(detail) || /^Output validation error/.test(detail)) return undefined;
  return protocolError(code, detail, context, undefined);
}

function protocolError(
  code: number,
  detail: string,
  context: CallErrorContext,
  cause: unknown,
): ToolError {
  const { server, tool, wireName } = context;
  const options = (kind: ToolErrorKind) => ({
    kind,
    toolName: wireName,
    ...(cause === undefined ? {} : { cause }),
  });
  if (code === ErrorCode.MethodNotFound || /\b(not found|unknown tool|disabled)\b/i.test(detail)) {
    if (/requires task augmentation/.test(detail)) {
      return new ToolError(`MCP server "${server}": ${detail}`, options('failed'));
    }
    return new ToolError(
      `Tool not found: MCP server "${server}" has no tool "${tool}" (any more): ${detail}`,
      options('not-found'),
    );
  }
  if (code === ErrorCode.InvalidParams) {
    return new ToolError(`Invalid arguments: ${detail}`, options('invalid-args'));
  }
  return new ToolError(`MCP server "${server}" rejected the call: ${detail}`, options('failed'));
}

/** Longest part of a server's error message that goes into our error, in characters. */
const maxDetailChars = 2_000;

/**
 * What the server said, as it goes into our error message: the prefix the SDK's servers put in
 * (it can come twice) taken off, and — the server wrote it, our error does not fence it — on one
 * line (a new line could pose as the system's), cut at 2,000 characters, marker imitations
 * replaced.
 */
function stripPrefix(message: string): string {
  return serverWords(message.replace(/^(MCP error -?\d+: )+/, ''));
}

/**
 * Text that holds the server's words (an HTTP error's body, the stderr tail of a process that
 * died) as it goes into an error the model reads: our error does not fence it, so it is one line
 * (a new line could pose as the system's), cut at 2,000 characters, marker imitations replaced.
 */
export function serverWords(text: string): string {
  return oneLineText(neutraliseUntrustedMarkers(text), maxDetailChars);
}

/** A message with its causes, e.g. `fetch failed: connect ECONNREFUSED 127.0.0.1:4000`. */
export function describeError(error: unknown): string {
  const issues = (error as { issues?: unknown } | null)?.issues;
  if (Array.isArray(issues) && issues.length > 0) {
    const first = issues[0] as { path?: unknown; message?: unknown };
    const at = Array.isArray(first.path) ? first.path.join('.') : '';
    return `the server's answer does not follow the MCP schema (at "${at}": ${String(first.message)}${issues.length > 1 ? `, and ${issues.length - 1} more` : ''})`;
  }
  const parts: string[] = [];
  let hint = '';
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current !== undefined && current !== null; depth++) {
    const message = errorMessage(current);
    if (!parts.includes(message)) parts.push(message);
    hint ||= notStartedHint(current);
    current = (current as { cause?: unknown }).cause;
  }
  return parts.join(': ') + hint;
}

/**
 * What to change when a server's program was not found (`spawn … ENOENT`): the whole command line
 * in "command" — `"command": "npx -y @modelcontextprotocol/server-filesystem ."`, as a README's
 * shell line reads — or a program not on the PATH. Before, only "spawn npx -y … ENOENT".
 */
function notStartedHint(error: unknown): string {
  const { code, syscall, path } = error as { code?: unknown; syscall?: unknown; path?: unknown };
  if (code !== 'ENOENT' || typeof syscall !== 'string' || !syscall.startsWith('spawn')) return '';
  if (typeof path !== 'string' || path === '') return '';
  const words = path.trim().split(/\s+/);
  const [program = ''] = words;
  // A first word that is a program's name or an existing file: the rest are its arguments (a
  // path with spaces that does not exist is not cut up).
  if (words.length > 1 && (!program.includes('/') || existsSync(program)))
    return ` — "command" holds a whole command line: it names the program alone ("${program}"), and the rest goes in "args" (${JSON.stringify(words.slice(1))})`;
  return ` — no program "${path}" was found (${path.includes('/') ? 'check the path' : 'not on the PATH: check its spelling, install it, or give its full path'})`;
}
