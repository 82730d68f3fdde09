import type * as z from 'zod';
import type { AgentEvent } from './agent-events.js';
import type { Compaction, CompactionOptions } from './compaction.js';
import type { LoopDetectionOptions } from './loop-detector.js';
import type { AssistantMessage, Message } from './messages.js';
import type { HostedTool, Provider, ThinkingLevel, ToolChoice } from './provider.js';
import type { ResourceLocks } from './resource-locks.js';
import type { ParentRun, RunBudgetLimits } from './run-context.js';
import type { RunJournal } from './run-journal.js';
import type { ToolExecutionStrategy } from './strategy.js';
import type { StructuredOutputOptions } from './structured-output.js';
import type {
  AnyAgentTool,
  PathDenialCheck,
  PermissionTier,
  ToolResult,
  TouchedPaths,
} from './tool.js';
import type { ToolSearchOptions } from './tool-catalogue.js';
import type { ToolRegistry } from './tool-registry.js';

/** A tool call about to run (or running), as hooks and the permission gate see it. */
export interface ToolCallInfo {
  toolCallId: string;
  /** The tool's canonical name. */
  toolName: string;
  /** The name the model used (an alias, possibly). */
  requestedName: string;
  /** Validated arguments. */
  args: unknown;
  tool: AnyAgentTool;
  /** The assistant message that asked for the call (for a nested call: for its parent). */
  assistantMessage: AssistantMessage;
  /** Set for a call another tool made through `ctx.callTool`: the id of that tool's call. */
  parentToolCallId?: string;
  /**
   * Set with `parentToolCallId`: the name of the tool that made the call (`run_script` for a
   * code-mode script), so an approver can say a script asked, not the model.
   */
  parentToolName?: string;
}

/**
 * What `beforeToolExecution` decides: run, skip with a reason the model reads, or run with other
 * arguments. Replaced arguments are validated again and, when a permission gate is set, put to
 * it again when they differ (a rule or the user's answer about the old arguments says nothing
 * about the new ones).
 */
export type BeforeToolExecutionDecision =
  | { action: 'allow' }
  | { action: 'skip'; reason: string }
  | { action: 'replace'; args: unknown };

/** Optional hooks around tool execution; each may be async. A hook fires strictly before its paired event. */
export interface AgentHooks {
  /** Before `tool-execution-start`. Returning nothing allows the call. */
  beforeToolExecution?: (
    call: ToolCallInfo,
  ) => BeforeToolExecutionDecision | undefined | Promise<BeforeToolExecutionDecision | undefined>;
  /** After `tool-execution-end`, before the result message; may replace the result. */
  afterToolExecution?: (
    call: ToolCallInfo,
    result: ToolResult,
  ) => ToolResult | undefined | Promise<ToolResult | undefined>;
  /** Before each `tool-execution-update`; `false` suppresses the event (the tool keeps running). */
  beforeToolExecutionUpdate?: (
    call: ToolCallInfo,
    partial: ToolResult,
  ) => boolean | Promise<boolean>;
  /** After each emitted `tool-execution-update`. */
  afterToolExecutionUpdate?: (call: ToolCallInfo, partial: ToolResult) => void | Promise<void>;
}

/** What the permission gate is asked. */
export interface PermissionRequest extends ToolCallInfo {
  /**
   * The tier this call needs: the one `permissionSubjects` gave it, else the tool's
   * `policy.permission` (`full-access` when it declares none).
   */
  tier: PermissionTier;
  /** What the call touches, from the tool's `permissionSubjects`. */
  subjects: readonly string[];
  /**
   * Set when the tool cannot name everything the call will do (a reason such as "arithmetic over
   * variables"): the call must be asked, never allowed by a rule, a grant or the mode.
   */
  opaque?: string;
  /**
   * Real paths the call also reads or writes, from `permissionSubjects` (a shell line's file
   * arguments): path rules on readers and writers cover them.
   */
  paths?: TouchedPaths;
  /**
   * Set when a program the user configured to judge calls (a PreToolUse hook) allowed this one,
   * with its reason: it stands in for the question — an opaque call's too — but never for a
   * disabled tool, a deny rule, a "never", plan mode or an ask rule.
   */
  allowedBy?: string;
  /**
   * Set when a run resumed from its journal is about to run a call the gate allowed before the
   * process stopped, through an answer (the approver's, or a gate that did not say what allowed
   * it): that answer may stand in for the question again — but the disabled tools, deny rules,
   * "never" grants, plan mode and mode of now still apply (the user may have tightened them
   * before resuming). A call allowed by a rule, the mode or a hook is put to the gate without it.
   */
  approvedEarlier?: boolean;
  /** Aborted when the run is aborted: stop asking (the loop stops waiting for the gate then anyway). */
  signal?: AbortSignal;
  /**
   * The chain of sub-agents asking, from the root (`['helper', 'researcher']`); empty for the
   * root agent's own calls. Lets an approver say "helper › researcher wants to run …".
   */
  agentPath?: readonly string[];
}

/** The permission gate's answer; a denial reaches the model as a `denied` result with the reason. */
export type PermissionDecision =
  | {
      behavior: 'allow';
      /**
       * What allowed the call (`PermissionPolicy` says: `approver`, `grant`, `allow-rule`, `mode`,
       * `hook`). A run journal keeps whether it was an answer, for `approvedEarlier` on resume.
       */
      decidedBy?: string;
      /**
       * Allowed only to read (the session's mode lets nothing write): the loop passes it to the
       * tool as `ToolContext.readOnly`, and a tool that can (an OS sandbox) runs the call so.
       */
      readOnly?: boolean;
    }
  | { behavior: 'deny'; reason: string };

/** Decides whether a validated call may run; called in call order, before `beforeToolExecution`. */
export type PermissionGate = (
  request: PermissionRequest,
) => PermissionDecision | Promise<PermissionDecision>;

/** Options of an {@link Agent}. Only `provider` and `model` are required. */
export interface AgentOptions {
  provider: Provider;
  /** Model id passed to the provider. */
  model: string;
  systemPrompt?: string;
  /** The tools, as a list or a registry. */
  tools?: readonly AnyAgentTool[] | ToolRegistry;
  /** A conversation to continue (plain JSON, e.g. from `agent.toJSON()`). */
  messages?: readonly Message[];
  /** How the calls of one turn are scheduled [parallel]. */
  toolExecution?: ToolExecutionStrategy;
  toolChoice?: ToolChoice;
  thinkingLevel?: ThinkingLevel;
  /** Output-token limit per model call. */
  maxOutputTokens?: number;
  temperature?: number;
  /**
   * A structured result: the agent gets a `structured_output` tool taking this schema (a zod
   * object schema, or options with a name, a description and how often to remind a model that
   * stops without it). A valid call ends the run as `completed` with `result.output` set; an
   * invalid one goes back to the model to fix; a run that ends without one is an `error`.
   */
  output?: z.ZodType | StructuredOutputOptions;
  /** Tools the provider runs itself (its own web search); see `ProviderRequest.hostedTools`. */
  hostedTools?: readonly HostedTool[];
  /** Model calls per run before it stops with `max-turns` [100]; a sub-agent's never exceed its parent's. */
  maxTurns?: number;
  /** Calls per turn that run; the rest get a not-executed result [unlimited]; a sub-agent's never exceed its parent's. */
  maxToolCallsPerTurn?: number;
  /** Default per-call timeout in ms, when the tool's policy sets none [600000]; a sub-agent's never exceed its parent's. */
  toolTimeoutMs?: number;
  /**
   * After a call is aborted or times out, how long its tool may take to stop before it is reported
   * (`tool-execution-orphaned`, and a note in its result) as still running, in ms [1000]. Such a
   * tool keeps its resource key until its promise settles.
   */
  abortGraceMs?: number;
  /**
   * Repeated identical operations (tool + `policy.identity`) in a row: from `warnAfter` [3] on
   * each result tells the model it is repeating itself; at `stopAfter` [6] the run ends with stop
   * reason `loop-detected`. `false` turns it off.
   */
  loopDetection?: LoopDetectionOptions | false;
  /** Limits of the whole run tree (model calls, tokens, cost, time); sub-agents draw from them. */
  budget?: RunBudgetLimits;
  /**
   * Starts this agent's runs inside a parent run (a sub-agent): its chain, depth limit and budget
   * come from the parent's `ToolContext.run`. Used by `@agent/subagent`.
   */
  parentRun?: ParentRun;
  /**
   * Context compaction [on]: when the estimated next request passes `threshold` of the model's
   * window (from `contextWindow` or `provider.modelInfo`), older turns are summarised by the model
   * into one message that stands in for them in what is sent; a context-overflow error compacts
   * and retries the call once. The stored conversation stays whole. `false` turns it off.
   */
  compaction?: CompactionOptions | false;
  /** Compactions of the conversation passed in `messages` (from `agent.toJSON()`), oldest first. */
  compactions?: readonly Compaction[];
  /** Default clip size in characters for older tool results sent to the model [30000]. */
  maxResultChars?: number;
  /**
   * Deferred tools: tools marked `defer: true` (or matched by `toolSearch.defer`, or deferred
   * automatically when the catalogue is over budget) are not sent to the model; it gets a
   * `tool_search` tool that finds and loads them instead. See `ToolSearchOptions`.
   */
  toolSearch?: ToolSearchOptions;
  /**
   * Per-tool definition budget in JSON characters [24000, ~6k tokens]: a bigger definition is
   * sent shortened (deep schema levels described in words); validation still uses the full schema.
   */
  maxToolDefinitionChars?: number;
  hooks?: AgentHooks;
  /** Permission gate; without one every call is allowed. */
  permissionGate?: PermissionGate;
  /**
   * Which real paths permission rules keep each path family from (e.g. `policy.isPathDenied`):
   * handed to tools as `ctx.isPathDenied`, so search, glob and list_files leave those paths out.
   * A sub-agent also applies its parent's.
   */
  isPathDenied?: PathDenialCheck;
  /** Lock table for `resourceKey`; defaults to one shared by every agent of the process. */
  resourceLocks?: ResourceLocks;
  /**
   * Records every step of each run (model responses, permission decisions, tool results) before
   * the run moves on, so `run(undefined, { runId })` can resume a run whose process died: recorded
   * steps are replayed, not repeated, and a call that was running is reported as interrupted
   * unless its tool is `repeatable`. See `RunJournal`.
   */
  journal?: RunJournal;
  /** Receives every event of every run, synchronously, in order. */
  onEvent?: (event: AgentEvent) => void;
}
