// One tools/call: over the live connection or a new one, as an MCP task when the tool requires
// it, repeated once after a lost session, an authorization or a URL elicitation.
import {
  errorMessage,
  hideSecretsInError,
  hideSecretsInResult,
  isConnectionFailure,
  type ToolContext,
  ToolError,
  type ToolResult,
} from '@agent/core';
import {
  type CallToolResult,
  CallToolResultSchema,
  type Progress,
} from '@modelcontextprotocol/sdk/types.js';
import { type AbortListener, type AbortMirror, mirrorOf } from './abort-mirror.js';
import type { McpCaller } from './client-features.js';
import type { McpAuth } from './mcp-auth.js';
import { type Connection, type McpConnector, pingTimeoutMs, raceAbort } from './mcp-connection.js';
import {
  type CallErrorContext,
  describeError,
  protocolErrorInResult,
  serverWords,
  toCallError,
} from './mcp-errors.js';
import { isSessionLost } from './mcp-transport.js';
import { boundResult } from './result-budget.js';
import { type McpToolResultDetails, toToolResult } from './result-mapping.js';
import { markUntrustedResult } from './untrusted-result.js';

/** The SDK's own request timeout would cut tool calls at 60 s; the agent loop owns call timeouts. */
const noRequestTimeout = 2_147_483_647;

/**
 * False once a request was sent without adding its listener synchronously (an SDK that changed
 * how it sends): from then on each call gets an AbortController of its own, as before.
 */
let mirrorsCollect = true;

/** One call of a server's tool. */
export interface ToolCallOptions {
  readonly server: string;
  readonly connector: McpConnector;
  readonly auth: McpAuth;
  /** The tool's name on the server (not the wire name). */
  readonly mcpName: string;
  /** The tool requires MCP tasks. */
  readonly taskRequired: boolean;
  readonly args: Record<string, unknown>;
  readonly ctx: ToolContext;
  /** Who wrote the result, for the untrusted-content note; `undefined` returns it unmarked. */
  readonly untrustedOrigin: string | undefined;
  /** Characters of text the model reads of the result (see result-budget.ts). */
  readonly maxResultChars: number;
  /** Hides the configured credentials in a text (see mcp-secrets.ts). */
  readonly hide: (text: string) => string;
}

/** Who made a call, as an elicitation or sampling handler is told. */
export function callerOf(ctx: ToolContext): McpCaller {
  return { agentPath: ctx.run?.agentPath ?? [], toolName: ctx.toolName };
}

/** Calls a server's tool; failures are thrown as `ToolError`s that name the server and tool. */
export async function callTool(
  options: ToolCallOptions,
): Promise<ToolResult<McpToolResultDetails>> {
  const { server, connector, auth, mcpName, taskRequired, args } = options;
  const original = options.ctx;
  if (args === null || typeof args !== 'object' || Array.isArray(args)) {
    throw ToolError.invalidArguments(original.toolName, 'expected a JSON object');
  }
  if (original.signal.aborted) throw ToolError.cancelled(original.toolName);
  // A server may send progress as fast as it can write: passed on at most every 200 ms, the
  // latest held back passed on before the result (3,000 notifications were 3,000 terminal lines).
  const progress = progressThrottle(original.onProgress);
  const ctx: ToolContext = { ...original, onProgress: progress.report };
  const mirror = mirrorOf(ctx.signal);
  // Tasks send many requests over time, not one at once: they get a signal of their own.
  const own = taskRequired || !mirrorsCollect ? new AbortController() : undefined;
  const forward = own === undefined ? undefined : () => own.abort(mirror.signal.reason);
  if (forward !== undefined) mirror.signal.addEventListener('abort', forward);
  const signal = own?.signal ?? mirror.signal;
  /** The listeners this call's requests added to the mirror's signal. */
  const added: AbortListener[] = [];
  let connection: Connection | undefined;
  const errorContext = (): CallErrorContext => ({
    server,
    tool: mcpName,
    wireName: ctx.toolName,
    signal,
    disconnectReason: connection?.disconnectReason,
    adapterClosed: connector.closing,
  });
  try {
    for (let attempt = 0; ; attempt++) {
      // The usual case, a live connection, without a promise hop.
      connection = connector.live ?? (await connector.ensure(signal));
      try {
        const sentBefore = added.length;
        const raw = taskRequired
          ? await callAsTask({ connection, mcpName, args, signal, ctx })
          : // Parsed with CallToolResultSchema; the SDK's return type also admits the 2024 shape.
            ((await send({
              connection,
              mcpName,
              args,
              signal,
              mirror: own === undefined ? mirror : undefined,
              added,
              ctx,
            })) as CallToolResult);
        // Answered, so sent, yet no listener collected: the SDK no longer adds it at once.
        if (own === undefined && added.length === sentBefore) mirrorsCollect = false;
        const mapped = toToolResult(raw, { server, tool: mcpName });
        if (mapped.isError === true) {
          const protocolError = protocolErrorInResult(mapped, errorContext());
          if (protocolError !== undefined) throw protocolError;
        }
        const { result, note } = boundResult(mapped, options.maxResultChars);
        const marked =
          options.untrustedOrigin === undefined
            ? result
            : markUntrustedResult(result, options.untrustedOrigin);
        // Our note on what was cut stays outside the server's fenced words.
        const shown =
          note === undefined
            ? marked
            : { ...marked, content: [...marked.content, { type: 'text' as const, text: note }] };
        // What the user configured as credentials never comes back to the model (mcp-secrets.ts).
        return hideSecretsInResult(shown, options.hide);
      } catch (error) {
        if (signal.aborted || ToolError.isInstance(error)) throw error;
        // The server needs the user to finish something in a browser first (URL elicitation):
        // show it through the elicitation handler, then call again once.
        if (attempt < 2 && (await auth.answerUrlElicitation(error, signal, callerOf(ctx))))
          continue;
        // Step-up (403 insufficient_scope) or an expired grant: authorise, then call again.
        if (auth.awaitingAuthorization && attempt < 2) {
          await auth.authorize(error);
          continue;
        }
        if (isSessionLost(error)) {
          // The server's answer (an HTTP error's body) is in the message: bounded here, as it is kept.
          connector.markLost(
            connection,
            `ended the HTTP session (${serverWords(errorMessage(error))})`,
          );
          // The server refused the call before running it, so sending it again is safe.
          if (attempt === 0) continue;
        } else if (isConnectionFailure(error)) {
          connector.markLost(connection, `is unreachable (${describeError(error)})`);
        }
        throw error;
      }
    }
  } catch (error) {
    throw hideSecretsInError(toCallError(error, errorContext()), options.hide);
  } finally {
    progress.flush();
    if (forward !== undefined) mirror.signal.removeEventListener('abort', forward);
    mirror.release(added);
  }
}

interface SendOptions {
  readonly connection: Connection;
  readonly mcpName: string;
  readonly args: Record<string, unknown>;
  readonly signal: AbortSignal;
  /** The mirror whose listeners this request adds are collected, when the call uses it. */
  readonly mirror: AbortMirror | undefined;
  /** Where the listener the SDK adds to the mirror's signal goes. */
  readonly added: AbortListener[];
  readonly ctx: ToolContext;
}

/** Sends tools/call; the listener the SDK adds to the mirror's signal goes into `added`. */
function send(options: SendOptions): Promise<unknown> {
  const { connection, mcpName, args, signal, mirror, added, ctx } = options;
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

/** Tools that require MCP tasks: create the task, report its status, cancel it on abort. */
async function callAsTask(options: Omit<SendOptions, 'mirror' | 'added'>): Promise<CallToolResult> {
  const { connection, mcpName, args, signal, ctx } = options;
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

/** Minimum time between two progress reports of one call, in ms. */
const progressIntervalMs = 200;

/**
 * `onProgress` at most once per 200 ms: a report that comes sooner waits for its turn, replaced
 * by any later one; `flush()` passes on the one waiting (before the call's result).
 */
function progressThrottle(onProgress: ToolContext['onProgress']): {
  report: ToolContext['onProgress'];
  flush: () => void;
} {
  let last = Number.NEGATIVE_INFINITY;
  let waiting: { text: string; fraction: number | undefined } | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const emit = () => {
    if (waiting === undefined) return;
    const { text, fraction } = waiting;
    waiting = undefined;
    last = performance.now();
    onProgress(text, fraction);
  };
  return {
    report(text, fraction) {
      waiting = { text, fraction };
      if (timer !== undefined) return;
      const wait = last + progressIntervalMs - performance.now();
      if (wait <= 0) {
        emit();
        return;
      }
      timer = setTimeout(() => {
        timer = undefined;
        emit();
      }, wait);
    },
    flush() {
      clearTimeout(timer);
      timer = undefined;
      emit();
    },
  };
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
