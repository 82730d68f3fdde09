import type { AgentEvent } from './agent-events.js';
import type { AgentHooks, PermissionGate } from './agent-options.js';
import {
  defaultAbortGraceMs,
  defaultToolTimeoutMs,
  executeToolCalls,
} from './execute-tool-calls.js';
import type { AssistantMessage, ToolCallContent, ToolResultMessage } from './messages.js';
import { neverAborted } from './never-aborted.js';
import { type ResourceLocks, sharedResourceLocks } from './resource-locks.js';
import { RunBudget, type RunContext } from './run-context.js';
import type { AnyAgentTool, PathDenialCheck } from './tool.js';
import { ToolRegistry } from './tool-registry.js';

/** Options of {@link executeTool}. */
export interface ExecuteToolOptions {
  /** Aborts the call. */
  signal?: AbortSignal;
  /** Decides whether the call may run [allow]. */
  permissionGate?: PermissionGate;
  /** Handed to the tool as `ctx.isPathDenied` (see `AgentOptions.isPathDenied`). */
  isPathDenied?: PathDenialCheck;
  hooks?: AgentHooks;
  /** Per-call timeout in ms when the tool's policy sets none [600000]. */
  timeoutMs?: number;
  /** See `AgentOptions.abortGraceMs` [1000]. */
  abortGraceMs?: number;
  /** Lock table for `policy.resourceKey` [the process-wide one]. */
  resourceLocks?: ResourceLocks;
  /** Receives the call's events (start, updates, progress, end). */
  onEvent?: (event: AgentEvent) => void;
  /** The id the call gets [`call_1`]. */
  toolCallId?: string;
}

/** One-tool registries by tool: a framework adapter runs the same tools call after call. */
const registries = new WeakMap<AnyAgentTool, ToolRegistry>();

/** A registry holding just `tool` (made once per tool; made again if its name changed). */
function registryOf(tool: AnyAgentTool): ToolRegistry {
  const cached = registries.get(tool);
  if (cached !== undefined && cached.get(tool.name) === tool) return cached;
  const registry = new ToolRegistry([tool]);
  registries.set(tool, registry);
  return registry;
}

/**
 * Runs one tool call without a model, through exactly the loop's path: `prepareArguments` →
 * validate → permission gate → `beforeToolExecution` → execute (timeout, abort, resource lock) →
 * normalise → `afterToolExecution`. `args` may be a value or the raw JSON text a model would
 * send. Never throws: every failure is the returned `isError` result, as the model would read it.
 */
export async function executeTool(
  tool: AnyAgentTool,
  args: unknown,
  options: ExecuteToolOptions = {},
): Promise<ToolResultMessage> {
  const call: ToolCallContent = {
    type: 'toolCall',
    id: options.toolCallId ?? 'call_1',
    name: tool.name,
    arguments: typeof args === 'string' ? args : (JSON.stringify(args) ?? ''),
  };
  const assistant: AssistantMessage = {
    role: 'assistant',
    content: [call],
    provider: 'none',
    model: 'none',
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 },
    stopReason: 'toolUse',
    timestamp: Date.now(),
  };
  const signal = options.signal ?? neverAborted;
  const run: RunContext = {
    runId: 'execute-tool',
    agentPath: [],
    depth: 0,
    budget: new RunBudget(),
    ...(options.permissionGate === undefined ? {} : { permissionGate: options.permissionGate }),
    ...(options.isPathDenied === undefined ? {} : { isPathDenied: options.isPathDenied }),
    ...(options.hooks === undefined ? {} : { hooks: options.hooks }),
  };
  const outcome = await executeToolCalls({
    calls: [call],
    assistant,
    registry: registryOf(tool),
    strategy: { type: 'sequential' },
    runSignal: signal,
    hooks: options.hooks ?? {},
    permissionGate: options.permissionGate,
    run,
    locks: options.resourceLocks ?? sharedResourceLocks,
    defaultTimeoutMs: options.timeoutMs ?? defaultToolTimeoutMs,
    abortGraceMs: options.abortGraceMs ?? defaultAbortGraceMs,
    maxToolCallsPerTurn: Number.POSITIVE_INFINITY,
    emit: options.onEvent ?? (() => undefined),
    // No one to tell: the start and end events are not even built.
    ...(options.onEvent === undefined ? { listening: () => false } : {}),
    steeringPending: () => false,
  });
  const [result] = outcome.results;
  if (result === undefined) throw new Error('executeTool: the loop gave no result (a bug)');
  return result;
}
