import type { AgentEvent } from './agent-events.js';
import type { AgentHooks, PermissionGate } from './agent-options.js';
import { executeTool } from './execute-tool.js';
import { validateArguments } from './execute-tool-calls.js';
import type { ToolResultMessage } from './messages.js';
import type { PermissionPolicy } from './permissions.js';
import type { ResourceLocks } from './resource-locks.js';
import { clipToolResultMessage } from './result-budget.js';
import {
  type AnyAgentTool,
  normalisePermissionSubjects,
  type PathDenialCheck,
  type PermissionSubjectsResult,
} from './tool.js';

// Our tools inside another framework's loop (the AI SDK, OpenAI Agents, LangChain): that loop
// decides when a tool runs, but each call still goes through our one path — validation, the
// permission gate, hooks, resource locks, timeout, abort — via `executeTool`. A question the
// gate would ask can go to the framework's own approval flow (`needsApproval`): the call is then
// allowed only if it is the very call the framework was told needs approval.

/** Options of {@link createToolRunner}. */
export interface ToolRunnerOptions {
  /** The permission rules and approver, or any gate [every call allowed]. */
  permissions?: PermissionPolicy | PermissionGate;
  /**
   * Where a question goes [framework]: `framework` — the host framework's approval flow (its
   * `needsApproval` says yes, and the call runs once the framework approved it); `approver` — the
   * policy's approver, asked while the call runs (without one: denied). A plain gate function
   * always decides inside the call.
   */
  approvals?: 'framework' | 'approver';
  /** `beforeToolExecution`, `afterToolExecution` and the update hooks, as in the loop. */
  hooks?: AgentHooks;
  /** Per-call timeout in ms when the tool's policy sets none [600000]. */
  timeoutMs?: number;
  /** See `AgentOptions.abortGraceMs` [1000]. */
  abortGraceMs?: number;
  /** Lock table for `policy.resourceKey` [the process-wide one]. */
  resourceLocks?: ResourceLocks;
  /** Handed to tools as `ctx.isPathDenied` (see `AgentOptions.isPathDenied`). */
  isPathDenied?: PathDenialCheck;
  /** Receives every call's events (start, updates, progress, end). */
  onEvent?: (event: AgentEvent) => void;
  /**
   * Clip size in characters for a result's text as the model gets it, when the tool's policy
   * sets none [30000]. The framework keeps whole results in its history, so each is clipped as
   * it is handed over (head ¾, tail ¼, one marker), not only older ones as in our loop.
   */
  maxResultChars?: number;
}

/**
 * Which conversation (or run) a call belongs to, as the adapter can tell it: a key, or a function
 * giving it (called only when a question is remembered or looked up). Two conversations sharing
 * one set of tools in a process keep their questions apart by it.
 */
export type ConversationKey = string | (() => string | Promise<string>);

/** Options of {@link ToolRunner.needsApproval}. */
export interface NeedsApprovalOptions {
  /**
   * The framework already holds the user's answer for this call (its history shows the
   * question): it is checking again before it runs the call, not asking.
   */
  answered?: boolean;
  /** The call's conversation [one shared by every call]: see {@link ConversationKey}. */
  conversation?: ConversationKey;
}

/** Runs our tools' calls for a loop another framework owns. */
export interface ToolRunner {
  /**
   * True when questions go to the framework's approval flow (a `PermissionPolicy` and
   * `approvals: 'framework'`): only then does an adapter need to give the framework a
   * `needsApproval` (which costs the framework an approval check per call).
   */
  readonly frameworkApprovals: boolean;
  /**
   * Whether the framework must ask before running this call: true only when the permission
   * steps before the approver (disabled, deny, opaque, ask, mode, allow, grants) end in a
   * question and questions go to the framework. Remembers the call, so `run` lets exactly this
   * call (same conversation, same id, same arguments) through once the framework approved it.
   * Never rejects.
   *
   * Frameworks ask again when a run resumes with the user's answer (the AI SDK from the messages,
   * the Agents SDK from a RunState) — both of which the caller may have edited or made up. So
   * only the first, live question remembers a call: asked again with other arguments, the call
   * is forgotten, and a call first seen with its answer (`options.answered`: the framework holds
   * an answer for it) is never remembered — either goes to our approver when it runs.
   */
  needsApproval(
    tool: AnyAgentTool,
    args: unknown,
    toolCallId: string,
    options?: NeedsApprovalOptions,
  ): Promise<boolean>;
  /**
   * Runs one call through the loop's path (see `executeTool`); resolves with the result message
   * the model would read — a denial or failure is an `isError` result with its `errorKind` — and
   * never rejects.
   */
  run(
    tool: AnyAgentTool,
    args: unknown,
    options?: { toolCallId?: string; signal?: AbortSignal; conversation?: ConversationKey },
  ): Promise<ToolResultMessage>;
  /** The result as the model gets it: its text clipped to the tool's `maxResultChars`. */
  forModel(tool: AnyAgentTool, message: ToolResultMessage): ToolResultMessage;
}

const defaultMaxResultChars = 30_000;

/** Arguments as a value: the raw JSON text a model sent is parsed (`undefined` when it is not JSON). */
function parsed(args: unknown): unknown {
  if (typeof args !== 'string') return args;
  try {
    return args.trim() === '' ? {} : JSON.parse(args);
  } catch {
    return undefined;
  }
}
/** Questions remembered at most: a framework that never runs a denied call leaves its entry. */
const maxPendingApprovals = 1_000;

/** What `asked` holds for a call asked again with other arguments: no arguments' JSON equals it. */
const conflicting = '';

/** The conversation's key (the empty one when the adapter names none). */
async function conversationOf(conversation: ConversationKey | undefined): Promise<string> {
  if (conversation === undefined) return '';
  return typeof conversation === 'string' ? conversation : await conversation();
}

/** The `asked` key of a call: its conversation and its id (a NUL cannot be in either's JSON). */
function askedKey(conversation: string, toolCallId: string): string {
  return `${JSON.stringify(conversation)}\u0000${toolCallId}`;
}

/** A {@link ToolRunner} over one gate and one set of options, shared by every tool it runs. */
export function createToolRunner(options: ToolRunnerOptions = {}): ToolRunner {
  const permissions = options.permissions;
  const policy = typeof permissions === 'function' ? undefined : permissions;
  const viaFramework = policy !== undefined && (options.approvals ?? 'framework') === 'framework';
  // Conversation and toolCallId → the validated arguments (JSON) of a call the framework was told
  // to ask about. Keyed by the call id alone, a question of one conversation let another
  // conversation's made-up answer through for a call with the same id and arguments.
  const asked = new Map<string, string>();

  /** The gate of one call: lets through the call the framework approved in its conversation. */
  const frameworkGate =
    (conversation: ConversationKey | undefined): PermissionGate =>
    (request) => {
      const rules = policy as PermissionPolicy;
      // Decided by the rules: answered at once (no promise), as the policy's own gate does.
      const evaluation = rules.evaluate(request);
      if (evaluation.behavior !== 'ask') return evaluation;
      return (async () => {
        const key = askedKey(await conversationOf(conversation), request.toolCallId);
        const remembered = asked.get(key);
        if (remembered !== undefined && remembered === JSON.stringify(request.args)) {
          asked.delete(key);
          return { behavior: 'allow' as const };
        }
        // Not the call the framework approved (or the rules changed since): ours decides.
        return rules.check(request, request.signal ? { signal: request.signal } : {});
      })();
    };

  const gate: PermissionGate | undefined =
    typeof permissions === 'function'
      ? permissions
      : policy === undefined
        ? undefined
        : !viaFramework
          ? policy.gate
          : frameworkGate(undefined);

  const common = {
    ...(gate === undefined ? {} : { permissionGate: gate }),
    ...(options.hooks === undefined ? {} : { hooks: options.hooks }),
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    ...(options.abortGraceMs === undefined ? {} : { abortGraceMs: options.abortGraceMs }),
    ...(options.resourceLocks === undefined ? {} : { resourceLocks: options.resourceLocks }),
    ...(options.isPathDenied === undefined ? {} : { isPathDenied: options.isPathDenied }),
    ...(options.onEvent === undefined ? {} : { onEvent: options.onEvent }),
  };

  return {
    frameworkApprovals: viaFramework,
    async needsApproval(tool, args, toolCallId, approvalOptions = {}) {
      if (!viaFramework) return false;
      const tier = tool.policy?.permission ?? 'full-access';
      // A tool that names no subjects is decided by its name alone: most calls need no parsing.
      if (tool.permissionSubjects === undefined) {
        const evaluation = policy.evaluate({ toolName: tool.name, tier, subjects: [], tool });
        if (evaluation.behavior !== 'ask') return false;
      }
      // As the loop does before its gate: prepare, validate, then the call's subjects. Invalid
      // arguments (or a tool refusing them while naming subjects) are no question: `run` reports them.
      const validated = validateArguments(tool, parsed(args));
      if (!validated.ok) return false;
      let subjects: PermissionSubjectsResult;
      try {
        subjects =
          tool.permissionSubjects === undefined
            ? []
            : await tool.permissionSubjects(validated.value);
      } catch {
        return false;
      }
      const { subjects: named, opaque, paths } = normalisePermissionSubjects(subjects);
      const evaluation = policy.evaluate({
        toolName: tool.name,
        tier,
        subjects: named,
        ...(opaque === undefined ? {} : { opaque }),
        ...(paths === undefined ? {} : { paths }),
        tool,
      });
      if (evaluation.behavior !== 'ask') return false;
      const shown = JSON.stringify(validated.value);
      const key = askedKey(await conversationOf(approvalOptions.conversation), toolCallId);
      const remembered = asked.get(key);
      if (remembered !== undefined) {
        // Asked again (a resumed run): the arguments the user saw, or none at all.
        if (remembered !== shown) asked.set(key, conflicting);
        return true;
      }
      // An answer for a call never asked here: made up, edited, or from another process.
      if (approvalOptions.answered === true) return true;
      asked.set(key, shown);
      if (asked.size > maxPendingApprovals) {
        const oldest = asked.keys().next().value;
        if (oldest !== undefined) asked.delete(oldest);
      }
      return true;
    },
    run(tool, args, runOptions = {}) {
      return executeTool(tool, args, {
        ...common,
        // The call's own conversation decides which remembered question it may answer.
        ...(viaFramework && runOptions.conversation !== undefined
          ? { permissionGate: frameworkGate(runOptions.conversation) }
          : {}),
        ...(runOptions.toolCallId === undefined ? {} : { toolCallId: runOptions.toolCallId }),
        ...(runOptions.signal === undefined ? {} : { signal: runOptions.signal }),
      });
    },
    forModel(tool, message) {
      return clipToolResultMessage(
        message,
        tool.policy?.maxResultChars ?? options.maxResultChars ?? defaultMaxResultChars,
      );
    },
  };
}
