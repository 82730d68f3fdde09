import type { Compaction, CompactionReason } from './compaction.js';
import type { ProviderError } from './errors.js';
import type { AssistantMessage, Message, ToolResultMessage, Usage } from './messages.js';
import type { StreamEvent } from './provider.js';
import type { ToolResult } from './tool.js';

/** Why a run ended. */
export type AgentStopReason =
  | 'completed'
  | 'max-turns'
  | 'terminated'
  | 'aborted'
  | 'error'
  | 'budget-exhausted'
  | 'loop-detected';

/**
 * Everything a run reports, in order. Tool events carry `toolCallId` and `toolName`;
 * `tool-execution-end` events come in completion order, result messages in call order. The tool
 * events of a call that another tool made through `ctx.callTool` (a code-mode script's) also
 * carry `parentToolCallId`, the id of that tool's call; such a call has no result message.
 */
export type AgentEvent =
  | { type: 'agent-start'; runId: string }
  | { type: 'turn-start'; runId: string; turn: number }
  | { type: 'message-start'; message: Message }
  | {
      type: 'message-update';
      /** The assistant message so far (the same object each time, updated in place). */
      message: AssistantMessage;
      /** The provider event that changed it. */
      event: StreamEvent;
    }
  | { type: 'message-end'; message: Message }
  | {
      type: 'tool-execution-start';
      toolCallId: string;
      toolName: string;
      args: unknown;
      parentToolCallId?: string;
    }
  | {
      type: 'tool-execution-update';
      toolCallId: string;
      toolName: string;
      partial: ToolResult;
      parentToolCallId?: string;
    }
  | {
      type: 'progress';
      toolCallId: string;
      toolName: string;
      text: string;
      /** Fraction in [0, 1] when known. */
      progress?: number;
      parentToolCallId?: string;
    }
  | {
      /**
       * An aborted or timed-out tool did not stop within the grace period (`abortGraceMs`): its
       * result was sent, but it may still be running, and it holds its resource key until it stops.
       */
      type: 'tool-execution-orphaned';
      toolCallId: string;
      toolName: string;
      graceMs: number;
      resourceKey?: string;
      parentToolCallId?: string;
    }
  | {
      type: 'tool-execution-end';
      toolCallId: string;
      toolName: string;
      result: ToolResult;
      isError: boolean;
      parentToolCallId?: string;
    }
  | {
      type: 'turn-end';
      runId: string;
      turn: number;
      message: AssistantMessage;
      /** Results of this turn's calls, in call order. */
      toolResults: ToolResultMessage[];
    }
  | {
      /**
       * Older turns are being summarised to make room (`AgentOptions.compaction`): before a model
       * call whose context passed the threshold, after a context-overflow error (the call is
       * then retried once), or on `agent.compact()` (no `runId` then).
       */
      type: 'compaction-start';
      runId?: string;
      reason: CompactionReason;
      /** Estimated tokens of the next request as it was. */
      tokensBefore: number;
    }
  | {
      /** The compaction ended: with `compaction` when it was made, with `error` when the summary call failed. */
      type: 'compaction-end';
      runId?: string;
      reason: CompactionReason;
      compaction?: Compaction;
      error?: string;
    }
  | {
      type: 'agent-end';
      runId: string;
      stopReason: AgentStopReason;
      /** Messages added by this run, in order. */
      messages: Message[];
      /** Set when `stopReason` is `error` (or `loop-detected`: which call repeated). */
      error?: string;
      /** Set when `stopReason` is `budget-exhausted`: which budget, e.g. "the budget of 5 model calls is spent". */
      budgetReason?: string;
      /** The provider's typed error (status, retryability) when a model call ended the run. */
      providerError?: ProviderError;
      /** Usage of this run and every sub-agent run below it (the result's `treeUsage`); set by the loop. */
      treeUsage?: Usage;
    };

/** The type names of {@link AgentEvent}. */
export type AgentEventType = AgentEvent['type'];
