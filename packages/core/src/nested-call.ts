import type { AgentEvent } from './agent-events.js';
import { type ExecuteToolCallsParams, executeToolCalls } from './execute-tool-calls.js';
import type { ToolCallContent, ToolResultMessage } from './messages.js';
import type { AnyAgentTool, ToolContext } from './tool.js';
import type { ToolLookup } from './tool-catalogue.js';

// A tool that runs other tools (code mode: a script whose functions are tools) gets
// `ctx.callTool`: each nested call goes through the same `executeToolCalls` path as a call the
// model made — validation, permission gate, hooks, resource locks, timeout, events — so it can do
// nothing a direct call could not.

/**
 * The `ctx.callTool` of the call `parent`: nested calls run under `signal` (the parent's, and the
 * call's own when given), and their events carry `parentToolCallId` so a UI can show them under
 * it; their permission requests name the parent tool (`parentToolName`).
 */
export function nestedToolCaller(
  params: ExecuteToolCallsParams,
  parent: { toolCallId: string; toolName: string },
  signal: AbortSignal,
): NonNullable<ToolContext['callTool']> {
  const parentToolCallId = parent.toolCallId;
  let count = 0;
  const emit = (event: AgentEvent) => params.emit(tagged(event, parentToolCallId));
  return async (
    tool: AnyAgentTool,
    args: unknown,
    options: { signal?: AbortSignal } = {},
  ): Promise<ToolResultMessage> => {
    count++;
    const call: ToolCallContent = {
      type: 'toolCall',
      id: `${parentToolCallId}/${count}`,
      name: tool.name,
      arguments: JSON.stringify(args ?? {}),
    };
    const outcome = await executeToolCalls({
      ...params,
      calls: [call],
      registry: singleTool(tool),
      strategy: { type: 'sequential' },
      runSignal: options.signal === undefined ? signal : AbortSignal.any([signal, options.signal]),
      // The parent call counted toward the model's per-turn cap; its tool limits its own calls.
      maxToolCallsPerTurn: Number.POSITIVE_INFINITY,
      emit,
      steeringPending: () => false,
      parentToolCallId,
      parentToolName: parent.toolName,
    });
    const [result] = outcome.results;
    if (result === undefined) throw new Error('callTool: the loop gave no result (a bug)');
    return result;
  };
}

function singleTool(tool: AnyAgentTool): ToolLookup {
  return {
    get: (name) => (name === tool.name ? tool : undefined),
    names: () => [tool.name],
  };
}

/** The tool events of a nested call carry the id of the call that made it. */
function tagged(event: AgentEvent, parentToolCallId: string): AgentEvent {
  switch (event.type) {
    case 'tool-execution-start':
    case 'tool-execution-update':
    case 'progress':
    case 'tool-execution-orphaned':
    case 'tool-execution-end':
      // Deeper nesting keeps the innermost parent.
      return event.parentToolCallId === undefined ? { ...event, parentToolCallId } : event;
    default:
      return event;
  }
}
