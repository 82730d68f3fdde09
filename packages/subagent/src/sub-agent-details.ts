import {
  type AgentEvent,
  type AgentRunResult,
  type AgentStopReason,
  type Message,
  messageText,
  toolCallsOf,
  type Usage,
} from '@agent/core';

/** What a sub-agent call's result carries in `details` (for UIs and logs; never sent to the model). */
export interface SubAgentDetails {
  /** Id of the child run (its `runId`); also set as the result's `childLoopId`. */
  childLoopId: string;
  /** The sub-agent tool's name. */
  agentName: string;
  /** Nesting depth of the child loop: 1 for a sub-agent called by the root agent. */
  depth: number;
  /** Why the child run ended. */
  stopReason: AgentStopReason;
  /** Model calls the child made. */
  turns: number;
  /** Tool calls the child's model asked for. */
  toolCalls: number;
  /** Token usage summed over the child's own model calls. */
  usage: Usage;
  /** `usage` plus that of every sub-agent the child started in turn (the child's `treeUsage`). */
  totalUsage: Usage;
  /** The child's error, when `stopReason` is `error`. */
  error?: string;
  /** The structured result the child submitted, when the tool has an `output` schema. */
  output?: unknown;
  /** The child's report through the summary tool, when the tool has `summary: true`. */
  summary?: { taskDescription: string; contextSummary?: string | undefined; taskResult: string };
  /** The child's whole conversation, when the tool was created with `includeMessages`. */
  messages?: Message[];
}

/** `details` of the partial results a sub-agent call streams through `onUpdate`: one child event each. */
export interface SubAgentUpdateDetails {
  /** Id of the child run the event belongs to. */
  childLoopId: string;
  /** The sub-agent tool's name. */
  agentName: string;
  /** Nesting depth of the child loop (1 for a sub-agent called by the root agent). */
  depth: number;
  /** The child's event, as its own `Agent` emitted it. */
  event: AgentEvent;
}

/** Whether a value is the `details` of a finished sub-agent call (from any copy of this package). */
export function isSubAgentDetails(value: unknown): value is SubAgentDetails {
  if (value === null || typeof value !== 'object') return false;
  const record = value as Record<string, unknown>;
  return (
    typeof record.childLoopId === 'string' &&
    typeof record.agentName === 'string' &&
    isUsage(record.totalUsage)
  );
}

/** Whether a value is the `details` of a sub-agent's streamed update. */
export function isSubAgentUpdateDetails(value: unknown): value is SubAgentUpdateDetails {
  if (value === null || typeof value !== 'object') return false;
  const record = value as Record<string, unknown>;
  return (
    typeof record.childLoopId === 'string' &&
    typeof record.agentName === 'string' &&
    typeof record.event === 'object' &&
    record.event !== null
  );
}

/** Builds the details of a finished child run. */
export function summariseChildRun(
  result: AgentRunResult,
  info: { agentName: string; depth: number; includeMessages: boolean },
): SubAgentDetails {
  let toolCalls = 0;
  for (const message of result.messages) {
    if (message.role === 'assistant') toolCalls += toolCallsOf(message).length;
  }
  // The run tree's usage, counted by core as each model call ends (aborted nested calls included).
  const totalUsage = structuredClone(result.treeUsage);
  const details: SubAgentDetails = {
    childLoopId: result.runId,
    agentName: info.agentName,
    depth: info.depth,
    stopReason: result.stopReason,
    turns: result.turns,
    toolCalls,
    usage: structuredClone(result.usage),
    totalUsage,
  };
  if (result.error !== undefined) details.error = result.error;
  if (info.includeMessages) details.messages = result.messages;
  return details;
}

/** Every non-empty text the child's model wrote, oldest first, separated by blank lines. */
export function everythingSaid(messages: readonly Message[]): string {
  return messages
    .filter((message) => message.role === 'assistant')
    .map((message) => messageText(message).trim())
    .filter((text) => text !== '')
    .join('\n\n');
}

function isUsage(value: unknown): value is Usage {
  return (
    value !== null &&
    typeof value === 'object' &&
    typeof (value as Record<string, unknown>).totalTokens === 'number'
  );
}
