import type { PermissionGate, PermissionRequest } from './agent-options.js';
import { claudeCodeRule } from './claude-code-names.js';
import { AgentError } from './errors.js';
import { familiesNamedBy, pathFamiliesOf } from './path-rules.js';
import { askApprover } from './permission-approval.js';
import { PermissionGrants, parseGrant } from './permission-grants.js';
import {
  matchesParts,
  matchesPathRule,
  type ParsedRule,
  type ParsedRuleKind,
  parseRule,
  parseToolPattern,
  type SubjectPattern,
} from './permission-rules.js';
import type {
  PermissionApprover,
  PermissionEvaluation,
  PermissionGrant,
  PermissionMode,
  PermissionOutcome,
  PermissionPolicyOptions,
  PermissionQuery,
  PolicyTool,
} from './permission-types.js';
import type { AnyAgentTool, PathDenialCheck, PathFamily, PermissionTier } from './tool.js';
import { matchesToolPattern } from './tool-registry.js';
import { unmatchableRuleProblems } from './unmatchable-rules.js';

export { matchesSubjectPattern } from './permission-rules.js';
export type {
  ApprovalAnswer,
  ApprovalContext,
  ApprovalDecision,
  PermissionApprover,
  PermissionDecider,
  PermissionEvaluation,
  PermissionGrant,
  PermissionMode,
  PermissionOutcome,
  PermissionPolicyOptions,
  PermissionQuery,
  PolicyTool,
} from './permission-types.js';

const modes: readonly PermissionMode[] = [
  'default',
  'read-only',
  'workspace-write',
  'full-access',
  'plan',
];

const tiersByMode: Record<PermissionMode, readonly PermissionTier[]> = {
  default: [],
  'read-only': ['read-only'],
  'workspace-write': ['read-only', 'workspace-write'],
  'full-access': ['read-only', 'workspace-write', 'full-access'],
  plan: ['read-only'],
};

/** Modes that let nothing write: a call they let run may only read (`readOnly`). */
const readOnlyModes: ReadonlySet<PermissionMode> = new Set(['read-only', 'plan']);

/** Why a call that is not read-only is denied in plan mode (what the model reads). */
const planModeDenial =
  'Plan mode: only read-only tools run until the user approves a plan. Explore with read-only tools, then present the plan for approval.';

function assertMode(mode: unknown): asserts mode is PermissionMode {
  if (!modes.includes(mode as PermissionMode)) {
    throw new AgentError(
      `Invalid permission mode ${JSON.stringify(mode)}: expected one of ${modes.join(', ')}`,
    );
  }
}

/** A tool's rule names, kept while its name, aliases and source stay the same objects. */
interface CachedNames {
  toolName: string;
  aliases: readonly string[] | undefined;
  source: string | undefined;
  names: readonly { name: string; source?: string }[];
}

/** Rule names by tool: every call of a tool asks for the same list. */
const namesByTool = new WeakMap<object, CachedNames>();

/** Every name a rule about this tool may use: canonical first, then aliases. */
function toolNames(query: PermissionQuery): readonly { name: string; source?: string }[] {
  const { tool } = query;
  const source = tool?.source;
  const aliases = tool?.aliases;
  const cached = tool === undefined ? undefined : namesByTool.get(tool);
  if (
    cached !== undefined &&
    cached.toolName === query.toolName &&
    cached.aliases === aliases &&
    cached.source === source
  )
    return cached.names;
  const names = [query.toolName, ...(aliases ?? [])].map((name) =>
    source === undefined ? { name } : { name, source },
  );
  if (tool !== undefined)
    namesByTool.set(tool, { toolName: query.toolName, aliases, source, names });
  return names;
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
 * 3. an ask rule matches any subject → ask;
 * 4. a PreToolUse hook allowed the call (`allowedBy`) → allow; else the call is **opaque** (its
 *    tool cannot name everything it will run) → ask;
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
  readonly #grants = new PermissionGrants();
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
      this.#grants.add(parseGrant(grant, index));
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
      this.#hidingPatterns[family].some((pattern) => matchesPathRule(path, pattern)),
    { covers: (family: PathFamily) => this.#hidingPatterns[family].length > 0 },
  );

  /**
   * The absolute paths the deny and ask rules on tools of `family` cover as a whole, for an OS
   * sandbox to hide from commands: `Read(./.env)` → `<root>/.env`, `read_file(secrets/**)` →
   * `<root>/secrets`. A pattern with a wildcard elsewhere (a leading `*`, `*.pem`) names no
   * one path and is left out (the rules still cover the names a command gives). Needs the tools.
   */
  pathsToHide(family: PathFamily = 'read'): string[] {
    const paths = new Set<string>();
    for (const parts of this.#hidingParts(family)) {
      const whole = wholePathOf(parts);
      // The name as written, and accented letters spelt both ways (the file has one of them).
      if (whole !== undefined)
        for (const spelling of [whole, whole.normalize('NFC'), whole.normalize('NFD')])
          paths.add(spelling);
    }
    return [...paths];
  }

  /**
   * The path patterns of the deny and ask rules on tools of `family` that {@link pathsToHide}
   * cannot name as one path — `*.pem`, `**\/.env`, `<root>/config/*.secret` — as absolute
   * patterns (`*` matches any run of characters, `/` included; a folder matched covers what is
   * inside it), for an OS sandbox to look for the paths they cover. Needs the tools.
   */
  pathPatternsToHide(family: PathFamily = 'read'): string[] {
    const patterns = new Set<string>();
    for (const parts of this.#hidingParts(family))
      if (wholePathOf(parts) === undefined) patterns.add(parts.join('*'));
    return [...patterns];
  }

  /** The path patterns (split at `*`) of the deny and ask rules on tools of `family`. */
  #hidingParts(family: PathFamily): (readonly string[])[] {
    return [...this.#denyRules, ...this.#askRules].flatMap((rule) => {
      const parts = rule.pathSubject?.parts;
      return parts === undefined || this.#families.get(rule)?.includes(family) !== true
        ? []
        : [parts];
    });
  }

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
  readonly gate: PermissionGate = (request) => {
    // Decided by the rules (most calls): answered at once, without a promise to wait for.
    const decided = this.evaluate(request);
    if (decided.behavior !== 'ask') return decided;
    return this.check(request, request.signal === undefined ? {} : { signal: request.signal });
  };

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
    return this.#grants.values().map((grant) => ({ ...grant }));
  }

  /** Forgets every runtime grant. */
  clearGrants(): void {
    this.#grants.clear();
  }

  /**
   * Steps 1–5 without asking anyone: whether the call is allowed, denied, or needs a question.
   * An allowed call is `readOnly` when the mode lets nothing write and the call is at the
   * `read-only` tier (see `#readOnlyIn`).
   */
  evaluate(query: PermissionQuery): PermissionEvaluation {
    return this.#readOnlyIn(this.#evaluateSteps(query), query);
  }

  /**
   * `outcome`, marked `readOnly` when it allows a `read-only`-tier call in a mode that lets
   * nothing write (`read-only`, `plan`), however it was allowed: the tier is the tool's own
   * judgment of the call, which a tool with an OS sandbox then enforces rather than trusts.
   */
  #readOnlyIn<T extends PermissionEvaluation | PermissionOutcome>(
    outcome: T,
    query: PermissionQuery,
  ): T {
    if (outcome.behavior !== 'allow' || query.tier !== 'read-only') return outcome;
    return readOnlyModes.has(this.#mode) ? { ...outcome, readOnly: true } : outcome;
  }

  #evaluateSteps(query: PermissionQuery): PermissionEvaluation {
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
        const hit = subjects.find((candidate) =>
          isPath ? matchesPathRule(candidate, subject) : matchesParts(candidate, subject),
        );
        if (hit !== undefined) return { rule, subject: hit };
      }
      return undefined;
    };

    // The paths a call also touches (a shell line's file arguments) are under the path rules of
    // their family, whatever the tool: `deny read_file(.env)` also denies `cat .env`.
    const touchedMatch = (rules: readonly ParsedRule[]) => {
      for (const family of ['read', 'write'] as const) {
        const paths = query.paths?.[family] ?? [];
        if (paths.length === 0) continue;
        for (const rule of rules) {
          const pattern = rule.pathSubject;
          if (pattern === undefined || this.#families.get(rule)?.includes(family) !== true)
            continue;
          const hit = paths.find((candidate) => matchesPathRule(candidate, pattern));
          if (hit !== undefined) return { rule, subject: hit };
        }
      }
      return undefined;
    };

    const denied = firstMatch(this.#denyRules) ?? touchedMatch(this.#denyRules);
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
    const grantFor = (subject: string | undefined) => this.#grants.get(query.toolName, subject);
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

    const askRule = (firstMatch(this.#askRules) ?? touchedMatch(this.#askRules))?.rule.text;
    const ask = (): PermissionEvaluation => ({
      behavior: 'ask',
      ...(askRule === undefined ? {} : { askRule }),
      ...(query.opaque === undefined ? {} : { opaque: query.opaque }),
    });
    // An ask rule is the user's own demand for a question: nothing waives it.
    if (askRule !== undefined) return ask();
    // A hook the user configured to judge calls allowed this one: that is their answer (an
    // opaque line's too), given after everything above had its say.
    if (query.allowedBy !== undefined) return { behavior: 'allow', decidedBy: 'hook' };
    // A call the tool cannot fully name is always a question.
    if (query.opaque !== undefined) return ask();

    if (tiersByMode[this.#mode].includes(query.tier)) {
      return { behavior: 'allow', decidedBy: 'mode' };
    }
    // Allow rules are matched against the canonical name only: an alias never widens an allow.
    const allowRules = this.#allowRules.filter(
      (rule) => matchesToolPattern(canonical, rule.toolPattern) || viaFamily(rule),
    );
    // Code (a REPL cell) is allowed by a rule only as the code written in it, literally: a `*`
    // inside code could hide anything, so it is the multiplication it looks like, not a
    // wildcard. `tool(*)` alone still means every call, as the bare name does.
    const literal = query.tool?.policy?.subjectsAreCode === true;
    const coveringRule = (subject: string | undefined): ParsedRule | undefined =>
      allowRules.find((rule) => {
        if (rule.subject === undefined || (literal && rule.subjectText === '*')) return true;
        if (literal) return subject !== undefined && subject === rule.subjectText;
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
    return ask();
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
    return this.#grants
      .values()
      .some((grant) => grant.tool === tool.name && grant.decision === 'allow');
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
    // A resumed run's call the user answered before its process stopped: that answer is this
    // question's (everything above — deny rules, "never", plan mode, the mode — was applied anew).
    if (request.approvedEarlier === true)
      return this.#readOnlyIn({ behavior: 'allow', decidedBy: 'approver' }, request);
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
      return askApprover({
        approver,
        request,
        askRule: again.askRule,
        signal,
        addGrant: (grant) => this.#grants.add(grant),
      }).then((outcome) => this.#readOnlyIn(outcome, request));
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
}

/** A permission gate from policy options; use {@link PermissionPolicy} to change the mode or read grants later. */
export function createPermissionGate(options: PermissionPolicyOptions = {}): PermissionGate {
  return new PermissionPolicy(options).gate;
}

/**
 * The one absolute path a pattern names as a whole — itself, or a folder for `folder/**`
 * (`/ws/secrets/` + `` + ``) — else undefined (a wildcard elsewhere: `*.pem`, `/ws/*.key`).
 */
function wholePathOf(parts: readonly string[]): string | undefined {
  const [first = '', ...rest] = parts;
  if (!first.startsWith('/')) return undefined;
  if (rest.length === 0) return first;
  if (first.endsWith('/') && first.length > 1 && rest.every((part) => part === ''))
    return first.slice(0, -1);
  return undefined;
}
