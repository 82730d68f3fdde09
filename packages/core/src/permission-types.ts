// The permission policy's public types: modes, approvers and their answers, grants, queries and
// outcomes.
import type { PermissionRequest } from './agent-options.js';
import type { AnyAgentTool, PermissionTier, TouchedPaths } from './tool.js';

/**
 * What the session allows without asking, by the tool's tier: `default` nothing, `read-only`
 * read-only tools, `workspace-write` read-only and workspace-write tools, `full-access` every
 * tool not denied or asked by a rule. `plan`: read-only tools as in `read-only`, and every other
 * call denied — no rule, grant or answer lets it run — until the mode changes (the agent
 * proposes a plan, and the front end switches the mode once the user approves it).
 */
export type PermissionMode = 'default' | 'read-only' | 'workspace-write' | 'full-access' | 'plan';

/** The approver's answer: `once`/`deny` decide this call; `always`/`never` also become runtime grants. */
export type ApprovalAnswer = 'once' | 'always' | 'deny' | 'never';

/**
 * An approver's answer, optionally with a reason the model reads when it denies. `unattended`
 * says no one was asked (an approver for a run that cannot ask anybody, such as a script): its
 * denial reads as the reason alone, decided by `no-approver`, never "Denied by the user".
 */
export type ApprovalDecision =
  | ApprovalAnswer
  | { answer: ApprovalAnswer; reason?: string; unattended?: boolean };

/** What an approver is told beside the request. */
export interface ApprovalContext {
  /** The ask rule that forced the question, when one did. */
  askRule?: string;
  /** Aborted when the caller of `check` stops waiting; dismiss the prompt then. */
  signal?: AbortSignal;
}

/** Asks a human (or anything else) about one call; questions come one at a time, in call order. */
export type PermissionApprover = (
  request: PermissionRequest,
  context: ApprovalContext,
) => ApprovalDecision | Promise<ApprovalDecision>;

/**
 * A runtime grant (plain JSON): an `always` (allow) or `never` (deny) answer for one canonical
 * tool name and one exact subject. A grant without `subject` covers only calls with no subjects.
 */
export interface PermissionGrant {
  tool: string;
  subject?: string;
  decision: 'allow' | 'deny';
}

/** What a call is checked against; a {@link PermissionRequest} is one. */
export interface PermissionQuery {
  /** The tool's canonical name (not the alias the model used). */
  toolName: string;
  /** The tier the call needs (the tool's, unless its `permissionSubjects` gave the call one). */
  tier: PermissionTier;
  /** What the call touches, from the tool's `permissionSubjects`. */
  subjects: readonly string[];
  /** Set when the tool cannot name everything the call does: never allowed without a question. */
  opaque?: string;
  /** Real paths the call also reads or writes (a shell line's file arguments): path rules cover them. */
  paths?: TouchedPaths;
  /**
   * Set when a program the user configured to judge calls (a PreToolUse hook) allowed this one,
   * with its reason: it stands in for the question — an opaque call's too — but never for a
   * disabled tool, a deny rule, a "never", plan mode or an ask rule.
   */
  allowedBy?: string;
  /**
   * The tool, for `@source` patterns, alias names and its path family (`policy.pathAccess`);
   * without it only `toolName` is matched.
   */
  tool?: Pick<AnyAgentTool, 'name' | 'source' | 'aliases' | 'policy'>;
}

/** What the policy needs to know of a session's tools: names, source, path access, whether it names subjects. */
export type PolicyTool = Pick<
  AnyAgentTool,
  'name' | 'source' | 'aliases' | 'policy' | 'permissionSubjects'
>;

/**
 * Options of a {@link PermissionPolicy}. Rules are `toolPattern` or `toolPattern(subjectPattern)`;
 * see {@link PermissionPolicy} for the language and the order they are applied in.
 */
export interface PermissionPolicyOptions {
  /** What is allowed without a rule or a question [default: nothing]. */
  mode?: PermissionMode;
  /** Rules that let a call run when they cover every one of its subjects. */
  allow?: readonly string[];
  /** Rules that force a question when they match any subject (even in `full-access` mode). */
  ask?: readonly string[];
  /** Rules that deny a call when they match any subject. */
  deny?: readonly string[];
  /** Tool patterns (`name`, `*`, `prefix*`, `@source`, `@source/tool`) the user switched off. */
  disabledTools?: readonly string[];
  /** Asked when nothing else decides; without one such calls are denied. */
  approver?: PermissionApprover;
  /** Grants saved from an earlier session (`policy.grants`). */
  grants?: readonly PermissionGrant[];
  /**
   * The workspace root by real path (file tools' subjects are real paths): relative path
   * patterns (`read_file(secret.txt)`, `read_file(./src/*)`) resolve against it.
   */
  workspaceRoot?: string;
  /**
   * The session's tools (or call `setTools` once they are known): they make the path families,
   * so a path rule on any reader (or writer) covers every one, and `unmatchableRules` checks rules
   * against them.
   */
  tools?: readonly PolicyTool[];
  /**
   * The user's home directory, for `~/` in Claude Code path rules (`Read(~/.ssh/**)`); without
   * it such a rule can never match (`unmatchableRules` says so).
   */
  homeDirectory?: string;
}

/** The outcome of the steps before the approver: decided, or a question is needed. */
export type PermissionEvaluation =
  | {
      behavior: 'allow';
      decidedBy: 'allow-rule' | 'mode' | 'grant' | 'hook';
      rules?: readonly string[];
      /**
       * The call may only read: the session's mode lets nothing write (`read-only`, `plan`) and
       * the call is at the `read-only` tier, however it was allowed. A tool that can enforce it
       * (an OS sandbox) runs the call without write access — its own analysis may be wrong.
       */
      readOnly?: boolean;
    }
  | {
      behavior: 'deny';
      decidedBy: 'disabled' | 'deny-rule' | 'grant' | 'mode';
      reason: string;
      rule?: string;
    }
  | { behavior: 'ask'; askRule?: string; opaque?: string };

/** A final answer with what decided it; assignable to the gate's `PermissionDecision`. */
export type PermissionOutcome =
  | {
      behavior: 'allow';
      decidedBy: 'allow-rule' | 'mode' | 'grant' | 'hook' | 'approver';
      rules?: readonly string[];
      /**
       * The call may only read: the session's mode lets nothing write (`read-only`, `plan`) and
       * the call is at the `read-only` tier, however it was allowed. A tool that can enforce it
       * (an OS sandbox) runs the call without write access — its own analysis may be wrong.
       */
      readOnly?: boolean;
    }
  | {
      behavior: 'deny';
      decidedBy:
        | 'disabled'
        | 'deny-rule'
        | 'grant'
        | 'mode'
        | 'approver'
        | 'no-approver'
        | 'cancelled';
      reason: string;
      rule?: string;
    };

/** What decided a call, for UIs and logs. */
export type PermissionDecider = PermissionOutcome['decidedBy'];
