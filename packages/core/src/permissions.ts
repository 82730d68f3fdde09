import type { PermissionGate, PermissionRequest } from './agent-options.js';
import { claudeCodeRule } from './claude-code-names.js';
import { AgentError, errorMessage } from './errors.js';
import { familiesNamedBy, pathFamiliesOf } from './path-rules.js';
import {
  matchesParts,
  type ParsedRule,
  type ParsedRuleKind,
  parseRule,
  parseToolPattern,
  type SubjectPattern,
} from './permission-rules.js';
import type { AnyAgentTool, PathDenialCheck, PathFamily, PermissionTier } from './tool.js';
import { matchesToolPattern } from './tool-registry.js';
import { unmatchableRuleProblems } from './unmatchable-rules.js';

export { matchesSubjectPattern } from './permission-rules.js';

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
  | { behavior: 'allow'; decidedBy: 'allow-rule' | 'mode' | 'grant'; rules?: readonly string[] }
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
      decidedBy: 'allow-rule' | 'mode' | 'grant' | 'approver';
      rules?: readonly string[];
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

const modes: readonly PermissionMode[] = [
  'default',
  'read-only',
  'workspace-write',
  'full-access',
  'plan',
];
const answers: readonly ApprovalAnswer[] = ['once', 'always', 'deny', 'never'];

const tiersByMode: Record<PermissionMode, readonly PermissionTier[]> = {
  default: [],
  'read-only': ['read-only'],
  'workspace-write': ['read-only', 'workspace-write'],
  'full-access': ['read-only', 'workspace-write', 'full-access'],
  plan: ['read-only'],
};

/** Why a call that is not read-only is denied in plan mode (what the model reads). */
const planModeDenial =
  'Plan mode: only read-only tools run until the user approves a plan. Explore with read-only tools, then present the plan for approval.';

function parseGrant(grant: unknown, index: number): PermissionGrant {
  const fail = (why: string): never => {
    throw new AgentError(`Invalid permission grant at index ${index}: ${why}`);
  };
  if (grant === null || typeof grant !== 'object') return fail('expected an object');
  const { tool, subject, decision } = grant as Record<string, unknown>;
  if (typeof tool !== 'string' || tool === '') fail('"tool" must be a non-empty string');
  if (subject !== undefined && typeof subject !== 'string') fail('"subject" must be a string');
  if (decision !== 'allow' && decision !== 'deny') fail('"decision" must be "allow" or "deny"');
  return {
    tool: tool as string,
    ...(subject === undefined ? {} : { subject: subject as string }),
    decision: decision as 'allow' | 'deny',
  };
}

function assertMode(mode: unknown): asserts mode is PermissionMode {
  if (!modes.includes(mode as PermissionMode)) {
    throw new AgentError(
      `Invalid permission mode ${JSON.stringify(mode)}: expected one of ${modes.join(', ')}`,
    );
  }
}

function grantKey(tool: string, subject: string | undefined): string {
  return JSON.stringify([tool, subject ?? null]);
}

/** Every name a rule about this tool may use: canonical first, then aliases. */
function toolNames(query: PermissionQuery): { name: string; source?: string }[] {
  const source = query.tool?.source;
  const names = [query.toolName, ...(query.tool?.aliases ?? [])];
  return names.map((name) => (source === undefined ? { name } : { name, source }));
}

function quoteSubject(subject: string): string {
  const shown = subject.length > 200 ? `${subject.slice(0, 200)}…` : subject;
  return JSON.stringify(shown);
}

/**
 * The permission rule engine behind an agent's `permissionGate` (DESIGN §4). A call is decided
 * by the first step that applies:
 *
 * 1. the tool matches `disabledTools` → deny;
 * 2. a deny rule, or a runtime `never` grant, matches any subject → deny (nothing below can
 *    override it: not an allow rule, an `always` grant, nor a mode switched to later);
 *    In `plan` mode, a tool that is not read-only → deny (nothing below can allow it);
 * 3. the call is **opaque** (its tool cannot name everything it will run) → ask;
 * 4. an ask rule matches any subject → ask;
 * 5. the mode covers the tool's tier, or every subject is covered by an allow rule or an
 *    `always` grant → allow;
 * 6. otherwise ask the approver (one question at a time; a queued call re-checks first);
 *    with no approver → deny.
 *
 * Rule language: `toolPattern` or `toolPattern(subjectPattern)`. The tool pattern is an
 * availability pattern (`name`, `*`, `prefix*`, `@source`, `@source/tool`) matched against the
 * canonical name — deny, ask and disabled patterns also against the tool's aliases, so no name
 * dodges them. The subject pattern is an anchored glob: `*` matches any run of characters
 * (including `/` and spaces), everything else is literal (`bash(git *)`,
 * `read_file(/home/me/project/*)`, `@openapi:petstore(DELETE *)`). A rule without parentheses
 * covers every subject of its tools, including calls with none; a rule with a subject pattern
 * never covers a call without subjects.
 */
export class PermissionPolicy {
  readonly #allowRules: readonly ParsedRule[];
  readonly #askRules: readonly ParsedRule[];
  readonly #denyRules: readonly ParsedRule[];
  readonly #disabled: readonly string[];
  readonly #approver: PermissionApprover | undefined;
  readonly #grants = new Map<string, PermissionGrant>();
  readonly #workspaceRoot: string | undefined;
  #tools: readonly PolicyTool[] = [];
  /** Per rule with a subject, the path families its tool pattern names among `#tools`. */
  #families = new Map<ParsedRule, readonly PathFamily[]>();
  /** Per family, the path patterns of the deny and ask rules that cover it (for `isPathDenied`). */
  #hidingPatterns: Record<PathFamily, readonly SubjectPattern[]> = { read: [], write: [] };
  #mode: PermissionMode;
  /** Settles when the approver's current question (and those queued before) are answered. */
  #approvals: Promise<void> = Promise.resolve();

  /** Parses every rule and grant; throws an `AgentError` naming the first invalid one. */
  constructor(options: PermissionPolicyOptions = {}) {
    const mode = options.mode ?? 'default';
    assertMode(mode);
    this.#mode = mode;
    const root = options.workspaceRoot;
    if (root !== undefined && (typeof root !== 'string' || !root.startsWith('/'))) {
      throw new AgentError(
        `Invalid workspaceRoot ${JSON.stringify(root)}: expected an absolute path`,
      );
    }
    this.#workspaceRoot = root;
    // A rule written as Claude Code writes it becomes one or more of ours, named as written.
    const claude =
      options.homeDirectory === undefined ? {} : { homeDirectory: options.homeDirectory };
    const parse = (kind: ParsedRuleKind) => (rule: string) => {
      const ours = claudeCodeRule(rule, kind, claude);
      if (ours === undefined) return [parseRule(rule, kind, root)];
      return ours.map((text) => ({ ...parseRule(text, kind, root), text: rule }));
    };
    this.#allowRules = (options.allow ?? []).flatMap(parse('allow'));
    this.#askRules = (options.ask ?? []).flatMap(parse('ask'));
    this.#denyRules = (options.deny ?? []).flatMap(parse('deny'));
    this.#disabled = (options.disabledTools ?? []).map(parseToolPattern);
    this.#approver = options.approver;
    (options.grants ?? []).forEach((grant, index) => {
      this.#addGrant(parseGrant(grant, index));
    });
    if (options.tools !== undefined) this.setTools(options.tools);
  }

  /**
   * Tells the policy the session's tools (replacing any given before): a path rule (one with a
   * subject) on a tool that reads paths then covers every reader — read_file, search, glob,
   * list_files… — and one on a tool that writes covers every writer (`policy.pathAccess`).
   */
  setTools(tools: readonly PolicyTool[]): void {
    this.#tools = [...tools];
    const families = new Map<ParsedRule, readonly PathFamily[]>();
    for (const rule of [...this.#allowRules, ...this.#askRules, ...this.#denyRules]) {
      if (rule.subject === undefined) continue;
      const named = familiesNamedBy(rule.toolPattern, rule.kind, this.#tools);
      if (named.length > 0) families.set(rule, named);
    }
    this.#families = families;
    const hiding = (family: PathFamily) =>
      [...this.#denyRules, ...this.#askRules].flatMap((rule) =>
        rule.pathSubject !== undefined && families.get(rule)?.includes(family) === true
          ? [rule.pathSubject]
          : [],
      );
    this.#hidingPatterns = { read: hiding('read'), write: hiding('write') };
  }

  /**
   * Whether a deny or ask rule on a path tool of `family` covers `path` (a real path): such a
   * path is never read (or written) without a question, so tools that touch many paths at once
   * leave it out. Pass as `AgentOptions.isPathDenied`. Needs the tools (`setTools`).
   */
  readonly isPathDenied: PathDenialCheck = Object.assign(
    (path: string, family: PathFamily) =>
      this.#hidingPatterns[family].some((pattern) => matchesParts(path, pattern)),
    { covers: (family: PathFamily) => this.#hidingPatterns[family].length > 0 },
  );

  /**
   * One message per rule or disabled-tool pattern that can never match `tools` [the tools given
   * to `setTools`]: a tool pattern naming no tool, a subject pattern on tools that name no
   * subjects, a path pattern no real path has (`~/…`, a trailing `/`, a relative path without a
   * workspace root). For a warning at start; the rules stay in force.
   */
  unmatchableRules(tools: readonly PolicyTool[] = this.#tools): string[] {
    const rules = [
      ...[...this.#allowRules, ...this.#askRules, ...this.#denyRules].map((rule) => ({
        kind: rule.kind,
        text: rule.text,
        toolPattern: rule.toolPattern,
        subject: rule.subjectText,
      })),
      ...this.#disabled.map((pattern) => ({
        kind: 'disabled' as const,
        text: pattern,
        toolPattern: pattern,
        subject: undefined,
      })),
    ];
    return unmatchableRuleProblems(rules, tools, this.#workspaceRoot);
  }

  /** The gate to pass as `AgentOptions.permissionGate`. */
  readonly gate: PermissionGate = (request) =>
    this.check(request, request.signal === undefined ? {} : { signal: request.signal });

  /** The current mode. */
  get mode(): PermissionMode {
    return this.#mode;
  }

  /** Changes the mode for the calls checked from now on (a queued question re-checks first). */
  setMode(mode: PermissionMode): void {
    assertMode(mode);
    this.#mode = mode;
  }

  /** The runtime grants, oldest first, as plain JSON to save and pass back as `grants`. */
  get grants(): PermissionGrant[] {
    return [...this.#grants.values()].map((grant) => ({ ...grant }));
  }

  /** Forgets every runtime grant. */
  clearGrants(): void {
    this.#grants.clear();
  }

  /** Steps 1–5 without asking anyone: whether the call is allowed, denied, or needs a question. */
  evaluate(query: PermissionQuery): PermissionEvaluation {
    const names = toolNames(query);
    const anyName = (pattern: string) => names.some((tool) => matchesToolPattern(tool, pattern));
    const canonical = names[0] ?? { name: query.toolName };
    const { subjects } = query;
    // A path tool's subjects are real paths: rules read as path patterns, and a path rule on
    // any tool of its family covers it.
    const queryFamilies = pathFamiliesOf(query.tool?.policy?.pathAccess);
    const isPath = queryFamilies.length > 0;
    const viaFamily = (rule: ParsedRule) =>
      isPath && this.#families.get(rule)?.some((family) => queryFamilies.includes(family)) === true;
    const subjectOf = (rule: ParsedRule) => (isPath ? rule.pathSubject : rule.subject);

    for (const pattern of this.#disabled) {
      if (anyName(pattern)) {
        return {
          behavior: 'deny',
          decidedBy: 'disabled',
          reason: `Tool "${query.toolName}" is disabled`,
          rule: pattern,
        };
      }
    }

    // Deny and ask rules match when they match any subject; a bare rule matches every call.
    const firstMatch = (rules: readonly ParsedRule[]) => {
      for (const rule of rules) {
        if (!anyName(rule.toolPattern) && !viaFamily(rule)) continue;
        if (rule.subject === undefined) return { rule, subject: undefined };
        const subject = subjectOf(rule);
        if (subject === undefined) continue;
        const hit = subjects.find((candidate) => matchesParts(candidate, subject));
        if (hit !== undefined) return { rule, subject: hit };
      }
      return undefined;
    };

    const denied = firstMatch(this.#denyRules);
    if (denied !== undefined) {
      const about = denied.subject === undefined ? '' : ` for ${quoteSubject(denied.subject)}`;
      return {
        behavior: 'deny',
        decidedBy: 'deny-rule',
        reason: `Denied by rule "${denied.rule.text}"${about}`,
        rule: denied.rule.text,
      };
    }

    const keys: (string | undefined)[] = subjects.length === 0 ? [undefined] : [...subjects];
    const grantFor = (subject: string | undefined) =>
      this.#grants.get(grantKey(query.toolName, subject));
    // A "never" is a deny rule of the session: nothing below (allow rules, always-grants, a mode
    // switched to later) overrides it.
    for (const subject of keys) {
      if (grantFor(subject)?.decision === 'deny') {
        const about = subject === undefined ? '' : ` for ${quoteSubject(subject)}`;
        return {
          behavior: 'deny',
          decidedBy: 'grant',
          reason: `Denied: "never" earlier this session${about}`,
        };
      }
    }

    // Plan mode: nothing that could change anything runs, whatever a rule, grant or answer says.
    if (this.#mode === 'plan' && query.tier !== 'read-only')
      return { behavior: 'deny', decidedBy: 'mode', reason: planModeDenial };

    const askRule = firstMatch(this.#askRules)?.rule.text;
    const ask: PermissionEvaluation = {
      behavior: 'ask',
      ...(askRule === undefined ? {} : { askRule }),
      ...(query.opaque === undefined ? {} : { opaque: query.opaque }),
    };
    // A call the tool cannot fully name, or one an ask rule covers, is always a question.
    if (query.opaque !== undefined || askRule !== undefined) return ask;

    if (tiersByMode[this.#mode].includes(query.tier)) {
      return { behavior: 'allow', decidedBy: 'mode' };
    }
    // Allow rules are matched against the canonical name only: an alias never widens an allow.
    const allowRules = this.#allowRules.filter(
      (rule) => matchesToolPattern(canonical, rule.toolPattern) || viaFamily(rule),
    );
    const coveringRule = (subject: string | undefined): ParsedRule | undefined =>
      allowRules.find((rule) => {
        if (rule.subject === undefined) return true;
        const pattern = subjectOf(rule);
        return subject !== undefined && pattern !== undefined && matchesParts(subject, pattern);
      });
    const used = keys.map(coveringRule);
    if (used.every((rule) => rule !== undefined)) {
      const rules = [...new Set(used.map((rule) => rule?.text ?? ''))];
      return { behavior: 'allow', decidedBy: 'allow-rule', rules };
    }
    const covered = keys.every(
      (subject) => grantFor(subject)?.decision === 'allow' || coveringRule(subject) !== undefined,
    );
    if (covered) return { behavior: 'allow', decidedBy: 'grant' };
    return ask;
  }

  /**
   * Whether steps 1–5 could allow some call of `tool` without a question — for hiding the tools
   * a session that cannot ask (a server, a `-p` run) would only ever refuse. False when the tool
   * is disabled, a deny or ask rule without a subject pattern covers it, or neither the mode, an
   * allow rule nor an `always` grant covers any of its calls. Exact for a tool without
   * `permissionSubjects`; otherwise it errs towards true (subject-level rules may still refuse
   * every call), so it is never false for a tool that `evaluate` would allow a call of.
   */
  couldAllow(
    tool: Pick<AnyAgentTool, 'name' | 'source' | 'aliases' | 'policy' | 'permissionSubjects'>,
  ): boolean {
    const query: PermissionQuery = {
      toolName: tool.name,
      // A tool whose calls carry tiers of their own could be allowed at its lowest one.
      tier:
        (tool.permissionSubjects === undefined ? undefined : tool.policy?.minimumPermission) ??
        tool.policy?.permission ??
        'full-access',
      subjects: [],
      tool,
    };
    // Every call of a tool without subjects is this one query.
    if (tool.permissionSubjects === undefined) return this.evaluate(query).behavior === 'allow';
    const names = toolNames(query);
    const anyName = (pattern: string) => names.some((name) => matchesToolPattern(name, pattern));
    if (this.#disabled.some(anyName)) return false;
    // A rule without a subject pattern covers every call of its tools.
    const coversEveryCall = (rule: ParsedRule) =>
      rule.subject === undefined && anyName(rule.toolPattern);
    if (this.#denyRules.some(coversEveryCall) || this.#askRules.some(coversEveryCall)) return false;
    if (this.#mode === 'plan' && query.tier !== 'read-only') return false;
    if (tiersByMode[this.#mode].includes(query.tier)) return true;
    // Allow rules and grants are matched against the canonical name only, as in `evaluate`.
    const canonical = names[0] ?? { name: tool.name };
    if (this.#allowRules.some((rule) => matchesToolPattern(canonical, rule.toolPattern)))
      return true;
    return [...this.#grants.values()].some(
      (grant) => grant.tool === tool.name && grant.decision === 'allow',
    );
  }

  /**
   * The full decision, asking the approver when steps 1–5 do not decide. Never rejects: an
   * approver that throws, or a `signal` that aborts while waiting, gives a denial.
   */
  async check(
    request: PermissionRequest,
    options: { signal?: AbortSignal } = {},
  ): Promise<PermissionOutcome> {
    const first = this.evaluate(request);
    if (first.behavior !== 'ask') return first;
    const approver = this.#approver;
    if (approver === undefined) {
      return {
        behavior: 'deny',
        decidedBy: 'no-approver',
        reason: `Tool "${request.toolName}" needs approval; no approver configured`,
        ...(first.askRule === undefined ? {} : { rule: first.askRule }),
      };
    }

    const { signal } = options;
    const cancelled: PermissionOutcome = {
      behavior: 'deny',
      decidedBy: 'cancelled',
      reason: 'Cancelled while waiting for approval',
    };
    if (signal?.aborted) return cancelled;

    const turn = this.#approvals.then(() => {
      if (signal?.aborted) return cancelled;
      // Re-check in turn: an `always`/`never` (or a mode change) may have answered this call meanwhile.
      const again = this.evaluate(request);
      if (again.behavior !== 'ask') return again;
      return this.#askApprover(approver, request, again.askRule, signal);
    });
    this.#approvals = turn.then(
      () => undefined,
      () => undefined,
    );
    if (signal === undefined) return turn;

    let onAbort: (() => void) | undefined;
    const aborted = new Promise<PermissionOutcome>((resolve) => {
      onAbort = () => resolve(cancelled);
      signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      return await Promise.race([turn, aborted]);
    } finally {
      if (onAbort !== undefined) signal.removeEventListener('abort', onAbort);
    }
  }

  async #askApprover(
    approver: PermissionApprover,
    request: PermissionRequest,
    askRule: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<PermissionOutcome> {
    const context: ApprovalContext = {
      ...(askRule === undefined ? {} : { askRule }),
      ...(signal === undefined ? {} : { signal }),
    };
    let decision: ApprovalDecision;
    try {
      decision = await approver(request, context);
    } catch (error) {
      return {
        behavior: 'deny',
        decidedBy: 'approver',
        reason: `The approver failed: ${errorMessage(error)}`,
      };
    }
    const answer = typeof decision === 'object' && decision !== null ? decision.answer : decision;
    const reason =
      typeof decision === 'object' && decision !== null && typeof decision.reason === 'string'
        ? decision.reason
        : undefined;
    if (!answers.includes(answer)) {
      return {
        behavior: 'deny',
        decidedBy: 'approver',
        reason: `The approver gave no valid answer (${JSON.stringify(answer) ?? String(answer)})`,
      };
    }
    if (signal?.aborted)
      return {
        behavior: 'deny',
        decidedBy: 'cancelled',
        reason: 'Cancelled while waiting for approval',
      };

    // An opaque call's "always" is a "once": its subjects do not name everything it ran, so a
    // grant for them would allow more than the user saw. A "never" is kept (denying is safe).
    if (answer === 'never' || (answer === 'always' && request.opaque === undefined)) {
      const grantDecision = answer === 'always' ? 'allow' : 'deny';
      const keys = request.subjects.length === 0 ? [undefined] : request.subjects;
      for (const subject of keys) {
        this.#addGrant({
          tool: request.toolName,
          ...(subject === undefined ? {} : { subject }),
          decision: grantDecision,
        });
      }
    }
    if (answer === 'once' || answer === 'always')
      return { behavior: 'allow', decidedBy: 'approver' };
    const unattended =
      typeof decision === 'object' && decision !== null && decision.unattended === true;
    if (unattended) {
      return {
        behavior: 'deny',
        decidedBy: 'no-approver',
        reason:
          reason === undefined || reason === ''
            ? `Tool "${request.toolName}" needs approval, and no one could be asked`
            : reason,
      };
    }
    return {
      behavior: 'deny',
      decidedBy: 'approver',
      reason:
        reason === undefined || reason === ''
          ? 'Denied by the user'
          : `Denied by the user: ${reason}`,
    };
  }

  #addGrant(grant: PermissionGrant): void {
    const key = grantKey(grant.tool, grant.subject);
    // Re-inserting keeps `grants` ordered by when each answer was last given.
    this.#grants.delete(key);
    this.#grants.set(key, grant);
  }
}

/** A permission gate from policy options; use {@link PermissionPolicy} to change the mode or read grants later. */
export function createPermissionGate(options: PermissionPolicyOptions = {}): PermissionGate {
  return new PermissionPolicy(options).gate;
}
