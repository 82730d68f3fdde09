import type { AgentEvent, AgentRunResult, PermissionRequest, Usage } from '@agent/core';
import { messageText } from '@agent/core';
import { z } from 'zod';
import { streamRedactor } from '../ui/redaction.js';

// The machine-readable output of `-p --output-format json|stream-json`. The zod schemas are the
// source of truth: `stream-json.schema.json` beside the package is generated from them (a test
// keeps the two equal) and every line the CLI prints is one of these objects.

const usageSchema = z
  .object({
    input: z.number(),
    output: z.number(),
    cacheRead: z.number(),
    cacheWrite: z.number(),
    totalTokens: z.number(),
    /** Dollars, when the model's prices are known. */
    cost: z.number().optional(),
  })
  .strict();

const stopReasonSchema = z
  .string()
  .describe('completed | terminated | max-turns | aborted | error | …');

const toolResultSummarySchema = z
  .object({
    toolCallId: z.string(),
    toolName: z.string(),
    isError: z.boolean(),
    errorKind: z.string().optional(),
  })
  .strict();

/**
 * What `--output-format json` and `stream-json` print on stdout when the CLI stops on an error of
 * its own — before a run (no key, a settings slip, a bad option) or between runs (a stdin line that
 * is not a message): the message stderr has, and the exit code. Before, stdout stayed empty and a
 * script parsing it failed on no JSON at all.
 */
export const startErrorSchema = z
  .object({ type: z.literal('error'), message: z.string(), exitCode: z.number() })
  .strict();

/** One line of `--output-format stream-json`. */
export const streamJsonEventSchema = z.discriminatedUnion('type', [
  z
    .object({
      type: z.literal('run-start'),
      sessionId: z.string(),
      model: z.string(),
      cwd: z.string(),
      permissionMode: z.string(),
      /** Whether bash runs in the OS sandbox, and what it may do there. */
      sandbox: z.string(),
      /** Set when the command hooks run in the OS sandbox (a folder not trusted): what they may do. */
      hooksSandbox: z.string().optional(),
      tools: z.array(z.string()),
    })
    .strict(),
  z.object({ type: z.literal('text-delta'), text: z.string() }).strict(),
  z.object({ type: z.literal('thinking'), text: z.string() }).strict(),
  z
    .object({
      type: z.literal('assistant'),
      text: z.string(),
      toolCalls: z.array(
        z.object({ id: z.string(), name: z.string(), arguments: z.string() }).strict(),
      ),
      usage: usageSchema,
    })
    .strict(),
  z
    .object({
      type: z.literal('tool-start'),
      toolCallId: z.string(),
      toolName: z.string(),
      arguments: z.unknown(),
      agentPath: z
        .array(z.string())
        .optional()
        .describe("For a sub-agent's call: the sub-agents that made it, outermost first."),
      parentToolCallId: z
        .string()
        .optional()
        .describe("For a sub-agent's call: the top-level call that started the sub-agent."),
    })
    .strict(),
  z
    .object({
      type: z.literal('tool-progress'),
      toolCallId: z.string(),
      toolName: z.string(),
      text: z.string(),
      progress: z.number().optional(),
    })
    .strict(),
  z
    .object({
      type: z.literal('tool-result'),
      toolCallId: z.string(),
      toolName: z.string(),
      isError: z.boolean(),
      errorKind: z.string().optional(),
      text: z.string(),
      agentPath: z
        .array(z.string())
        .optional()
        .describe("For a sub-agent's call: the sub-agents that made it, outermost first."),
      parentToolCallId: z
        .string()
        .optional()
        .describe("For a sub-agent's call: the top-level call that started the sub-agent."),
    })
    .strict(),
  z
    .object({
      type: z.literal('permission-asked'),
      toolCallId: z.string(),
      toolName: z.string(),
      subjects: z.array(z.string()),
      tier: z.string(),
      opaque: z
        .string()
        .optional()
        .describe(
          'Why the call is asked whatever the rules and mode say: what the tool cannot name (a shell line it cannot analyse), or "runs outside the OS sandbox".',
        ),
      agentPath: z
        .array(z.string())
        .optional()
        .describe('The sub-agents that ask, outermost first; absent when the agent itself asks.'),
      parentToolCallId: z
        .string()
        .optional()
        .describe(
          'For a call a tool made (a code-mode script through run_script): the call of that tool.',
        ),
      parentToolName: z
        .string()
        .optional()
        .describe('For a call a tool made: that tool (run_script for a script), not the model.'),
    })
    .strict(),
  z
    .object({
      type: z.literal('permission-answered'),
      toolCallId: z.string(),
      toolName: z.string(),
      answer: z.enum(['once', 'always', 'deny', 'never']),
      reason: z.string().optional(),
    })
    .strict(),
  z.object({ type: z.literal('usage'), turn: z.number(), usage: usageSchema }).strict(),
  z
    .object({
      /** Older messages were summarised to fit the model's window (or a summary failed: `error`). */
      type: z.literal('compaction'),
      reason: z.enum(['threshold', 'overflow', 'manual']),
      tokensBefore: z.number().optional(),
      tokensAfter: z.number().optional(),
      /** Index of the first message still sent as it is. */
      firstKeptIndex: z.number().optional(),
      summary: z.string().optional(),
      error: z.string().optional(),
    })
    .strict(),
  z
    .object({
      type: z.literal('run-end'),
      sessionId: z.string(),
      stopReason: stopReasonSchema,
      turns: z.number(),
      usage: usageSchema,
      finalText: z.string(),
      deniedWithoutApprover: z.number(),
      toolResults: z.array(toolResultSummarySchema),
      error: z.string().optional(),
    })
    .strict(),
  startErrorSchema,
]);

/** The one object `--output-format json` prints when the run ends. */
export const jsonResultSchema = z
  .object({
    type: z.literal('result'),
    sessionId: z.string(),
    stopReason: stopReasonSchema,
    finalText: z.string(),
    turns: z.number(),
    usage: usageSchema,
    /** Calls denied because they needed approval and `-p` had no one to ask. */
    deniedWithoutApprover: z.number(),
    /** Every tool call of the run and whether it failed (a non-zero exit, a denial, bad arguments…). */
    toolResults: z.array(toolResultSummarySchema),
    error: z.string().optional(),
  })
  .strict();

/**
 * One line of `--input-format stream-json` on stdin: a user message, in the shape Claude Code's
 * `--input-format stream-json` uses (`content` a string or text parts).
 */
export const streamJsonInputSchema = z
  .object({
    type: z.literal('user'),
    message: z
      .object({
        role: z.literal('user'),
        content: z.union([
          z.string().min(1),
          z.array(z.object({ type: z.literal('text'), text: z.string() }).strict()).min(1),
        ]),
      })
      .strict(),
    /** Ignored; accepted so lines written for Claude Code pass. */
    session_id: z.string().optional(),
    parent_tool_use_id: z.string().nullable().optional(),
  })
  .strict();

/** One line of stream-json input. */
export type StreamJsonInput = z.infer<typeof streamJsonInputSchema>;

/** One line of stream-json output. */
export type StreamJsonEvent = z.infer<typeof streamJsonEventSchema>;
/** The json output. */
export type JsonResult = z.infer<typeof jsonResultSchema>;

/**
 * The output format a `-p` run asked for, from its options or — where they could not be parsed —
 * from `argv` itself (`--output-format json`, `--output-format=json`): an option slip is said on
 * stdout too.
 */
export function requestedOutputFormat(
  argv: readonly string[],
  options: { command: string; outputFormat: string } | undefined,
): string {
  if (options !== undefined) return options.command === 'run' ? options.outputFormat : 'text';
  let format = 'text';
  argv.forEach((word, i) => {
    if (word === '--output-format') format = argv[i + 1] ?? format;
    else if (word.startsWith('--output-format=')) format = word.slice('--output-format='.length);
  });
  return format;
}

/** The stdout line for an error the CLI stops on, where a JSON format was asked for; else undefined. */
export function startErrorLine(
  format: string,
  message: string,
  exitCode: number,
): string | undefined {
  if (format !== 'json' && format !== 'stream-json') return undefined;
  const line: z.infer<typeof startErrorSchema> = { type: 'error', message, exitCode };
  return `${JSON.stringify(line)}\n`;
}

/** The published JSON Schema of both formats (what `stream-json.schema.json` holds). */
export function outputJsonSchema(): Record<string, unknown> {
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title: 'agent -p output',
    description:
      'Each line of --output-format stream-json is a StreamJsonEvent; --output-format json prints one JsonResult per run, or one StartError when the CLI stops on an error of its own (as stream-json prints an `error` line). Each line of --input-format stream-json (stdin) is a StreamJsonInput.',
    $defs: {
      StreamJsonInput: z.toJSONSchema(streamJsonInputSchema, { target: 'draft-2020-12' }),
      StreamJsonEvent: z.toJSONSchema(streamJsonEventSchema, { target: 'draft-2020-12' }),
      JsonResult: z.toJSONSchema(jsonResultSchema, { target: 'draft-2020-12' }),
      StartError: z.toJSONSchema(startErrorSchema, { target: 'draft-2020-12' }),
    },
  };
}

function usageOf(usage: Usage): z.infer<typeof usageSchema> {
  const { input, output, cacheRead, cacheWrite, totalTokens } = usage;
  return {
    input,
    output,
    cacheRead,
    cacheWrite,
    totalTokens,
    ...(usage.cost === undefined ? {} : { cost: usage.cost.total }),
  };
}

/**
 * Maps agent events to stream-json lines (none for events the format leaves out), one run's
 * events in order: text deltas go through a stream redactor, so a credential split across two
 * deltas is redacted like one in a single line (a tail that may begin one is sent with the next
 * delta, or before the message's `assistant` line).
 */
export function createStreamJsonMapper(): (event: AgentEvent) => StreamJsonEvent[] {
  let redactor = streamRedactor();
  return (event) => {
    if (event.type === 'message-update' && event.event.type === 'text-start')
      redactor = streamRedactor();
    if (event.type === 'message-update' && event.event.type === 'text-delta') {
      const text = redactor.push(event.event.delta);
      return text === '' ? [] : [{ type: 'text-delta', text }];
    }
    if (event.type === 'message-update' && event.event.type === 'text-end') {
      const text = redactor.flush();
      return text === '' ? [] : [{ type: 'text-delta', text }];
    }
    return streamJsonEvents(event);
  };
}

/** Maps one agent event to stream-json lines (text deltas as they are: see createStreamJsonMapper). */
export function streamJsonEvents(event: AgentEvent): StreamJsonEvent[] {
  switch (event.type) {
    case 'message-update': {
      const update = event.event;
      if (update.type === 'text-delta' && update.delta !== '')
        return [{ type: 'text-delta', text: update.delta }];
      if (update.type === 'thinking-end' && update.thinking !== '')
        return [{ type: 'thinking', text: update.thinking }];
      return [];
    }
    case 'tool-execution-start':
      return [
        {
          type: 'tool-start',
          toolCallId: event.toolCallId,
          toolName: event.toolName,
          arguments: event.args,
        },
      ];
    case 'progress':
      return [
        {
          type: 'tool-progress',
          toolCallId: event.toolCallId,
          toolName: event.toolName,
          text: event.text,
          ...(event.progress === undefined ? {} : { progress: event.progress }),
        },
      ];
    case 'message-end': {
      const { message } = event;
      if (message.role === 'assistant') {
        const toolCalls = message.content.flatMap((block) =>
          block.type === 'toolCall'
            ? [{ id: block.id, name: block.name, arguments: block.arguments }]
            : [],
        );
        const text = messageText(message);
        return [{ type: 'assistant', text, toolCalls, usage: usageOf(message.usage) }];
      }
      if (message.role !== 'toolResult') return [];
      return [
        {
          type: 'tool-result',
          toolCallId: message.toolCallId,
          toolName: message.toolName,
          isError: message.isError,
          ...(message.errorKind === undefined ? {} : { errorKind: message.errorKind }),
          text: messageText(message),
        },
      ];
    }
    case 'tool-execution-update':
      return childToolEvents(event.partial.details, event.toolCallId, []);
    case 'turn-end':
      return [{ type: 'usage', turn: event.turn, usage: usageOf(event.message.usage) }];
    case 'compaction-end': {
      const { compaction } = event;
      if (compaction === undefined)
        return [
          {
            type: 'compaction',
            reason: event.reason,
            error: event.error ?? 'compaction failed',
          },
        ];
      return [
        {
          type: 'compaction',
          reason: compaction.reason,
          tokensBefore: compaction.tokensBefore,
          tokensAfter: compaction.tokensAfter,
          firstKeptIndex: compaction.firstKeptIndex,
          summary: compaction.summary,
        },
      ];
    }
    default:
      return [];
  }
}

/** What a sub-agent tool streams (`@agent/subagent`'s SubAgentUpdateDetails), duck-typed. */
interface ChildUpdate {
  agentName: string;
  event: AgentEvent;
}

function isChildUpdate(value: unknown): value is ChildUpdate {
  if (value === null || typeof value !== 'object') return false;
  const record = value as Record<string, unknown>;
  return (
    typeof record.childLoopId === 'string' &&
    typeof record.agentName === 'string' &&
    typeof record.event === 'object' &&
    record.event !== null
  );
}

/**
 * A sub-agent's tool calls and results as `tool-start` / `tool-result` lines naming the chain and
 * the top-level call: a consumer that audits every call sees what a delegated task did too (its
 * ids repeat the parent's, so `parentToolCallId` and `agentPath` tell them apart).
 */
function childToolEvents(
  details: unknown,
  parentToolCallId: string,
  outer: readonly string[],
): StreamJsonEvent[] {
  if (!isChildUpdate(details)) return [];
  const agentPath = [...outer, details.agentName];
  const { event } = details;
  if (event.type === 'tool-execution-update')
    return childToolEvents(event.partial.details, parentToolCallId, agentPath);
  if (event.type !== 'tool-execution-start' && event.type !== 'message-end') return [];
  if (event.type === 'message-end' && event.message.role !== 'toolResult') return [];
  return streamJsonEvents(event).map((line) =>
    line.type === 'tool-start' || line.type === 'tool-result'
      ? { ...line, agentPath, parentToolCallId }
      : line,
  );
}

/** The `permission-asked` line for a request the approver is about to answer. */
export function permissionAsked(request: PermissionRequest): StreamJsonEvent {
  return {
    type: 'permission-asked',
    toolCallId: request.toolCallId,
    toolName: request.toolName,
    subjects: [...request.subjects],
    tier: request.tier,
    ...(request.opaque === undefined ? {} : { opaque: request.opaque }),
    ...(request.agentPath === undefined || request.agentPath.length === 0
      ? {}
      : { agentPath: [...request.agentPath] }),
    ...(request.parentToolCallId === undefined
      ? {}
      : { parentToolCallId: request.parentToolCallId }),
    ...(request.parentToolName === undefined ? {} : { parentToolName: request.parentToolName }),
  };
}

/** The summary shared by `run-end` and the json result. */
export function runSummary(
  sessionId: string,
  result: AgentRunResult,
  deniedWithoutApprover: number,
): JsonResult {
  return {
    type: 'result',
    sessionId,
    stopReason: result.stopReason,
    finalText: result.finalMessage === undefined ? '' : messageText(result.finalMessage),
    turns: result.turns,
    usage: usageOf(result.treeUsage),
    deniedWithoutApprover,
    toolResults: result.messages.flatMap((message) =>
      message.role === 'toolResult'
        ? [
            {
              toolCallId: message.toolCallId,
              toolName: message.toolName,
              isError: message.isError,
              ...(message.errorKind === undefined ? {} : { errorKind: message.errorKind }),
            },
          ]
        : [],
    ),
    ...(result.error === undefined ? {} : { error: result.error }),
  };
}
