import type { AgentHooks, PermissionGate } from './agent-options.js';
import { addUsage, emptyUsage, type Usage } from './messages.js';
import type { PathDenialCheck } from './tool.js';

/**
 * Limits for a whole run tree: a parent sets them, and every sub-agent run started from its tools
 * draws from the same counters (a child may add narrower limits of its own, never wider ones).
 */
export interface RunBudgetLimits {
  /** Model calls, counted when each call starts. */
  maxModelCalls?: number;
  /**
   * Tool calls, counted when each is about to run (the model's and those a tool makes through
   * `ctx.callTool`, in every sub-agent): a call past it gets a not-executed result, and the run
   * stops before its next model call.
   */
  maxToolCalls?: number;
  /** Tokens (input + output + cache, as `usage.totalTokens`), counted after each call. */
  maxTokens?: number;
  /** Cost in dollars (`usage.cost.total`, when the model's prices are known), counted after each call. */
  maxCost?: number;
  /**
   * Wall-clock time in ms from the run's start: checked before each model call, and when it runs
   * out what is running (a model stream, tool calls, a sub-agent's run) is cancelled.
   */
  timeoutMs?: number;
}

/**
 * Shared counters of a run and every run below it. `used` is the usage of the whole subtree;
 * consuming in a child counts in each ancestor too, and a child stops when any budget on its
 * chain is spent.
 */
export class RunBudget {
  readonly #limits: RunBudgetLimits;
  readonly #parent: RunBudget | undefined;
  readonly #deadline: number | undefined;
  readonly #used: Usage = emptyUsage();
  #modelCalls = 0;
  #toolCalls = 0;
  /** Set once a tool call was refused because `maxToolCalls` is spent: no further model call then. */
  #toolCallsSpent = false;

  constructor(limits: RunBudgetLimits = {}, parent?: RunBudget) {
    for (const [name, value] of Object.entries(limits)) {
      if (value !== undefined && !(typeof value === 'number' && value >= 0)) {
        throw new RangeError(`budget.${name} must be a number >= 0, got ${String(value)}`);
      }
    }
    this.#limits = limits;
    this.#parent = parent;
    this.#deadline = limits.timeoutMs === undefined ? undefined : Date.now() + limits.timeoutMs;
  }

  /** Usage of this run and every run below it (cost included when known). */
  get used(): Usage {
    return structuredClone(this.#used);
  }

  /** Model calls started in this run and below it. */
  get modelCalls(): number {
    return this.#modelCalls;
  }

  /** Tool calls started in this run and below it. */
  get toolCalls(): number {
    return this.#toolCalls;
  }

  /** Ms until the earliest time budget on this budget's chain runs out (0 once it has), or undefined. */
  msUntilDeadline(): number | undefined {
    const own = this.#deadline === undefined ? undefined : Math.max(0, this.#deadline - Date.now());
    const inherited = this.#parent?.msUntilDeadline();
    if (own === undefined) return inherited;
    return inherited === undefined ? own : Math.min(own, inherited);
  }

  /** Why no further model call may start (this budget or an ancestor's), or undefined. */
  exhausted(): string | undefined {
    const limits = this.#limits;
    if (limits.maxModelCalls !== undefined && this.#modelCalls >= limits.maxModelCalls) {
      return `the budget of ${limits.maxModelCalls} model calls is spent`;
    }
    if (this.#toolCallsSpent) return toolCallsSpent(limits.maxToolCalls);
    if (limits.maxTokens !== undefined && this.#used.totalTokens >= limits.maxTokens) {
      return `the budget of ${limits.maxTokens} tokens is spent (${this.#used.totalTokens} used)`;
    }
    const cost = this.#used.cost?.total ?? 0;
    if (limits.maxCost !== undefined && cost >= limits.maxCost) {
      return `the budget of $${limits.maxCost} is spent ($${cost.toFixed(4)} used)`;
    }
    if (this.#deadline !== undefined && Date.now() >= this.#deadline) {
      return `the time budget of ${limits.timeoutMs} ms is spent`;
    }
    return this.#parent?.exhausted();
  }

  /**
   * Reserves one model call on this budget and every ancestor, or returns why it cannot start.
   * Synchronous, so concurrent children cannot both take the last call.
   */
  startModelCall(): string | undefined {
    const reason = this.exhausted();
    if (reason !== undefined) return reason;
    for (let budget: RunBudget | undefined = this; budget !== undefined; budget = budget.#parent) {
      budget.#modelCalls += 1;
    }
    return undefined;
  }

  /**
   * Reserves one tool call on this budget and every ancestor, or returns why it may not run (the
   * first `maxToolCalls` on the chain that is spent). Synchronous, like `startModelCall`.
   */
  startToolCall(): string | undefined {
    for (let budget: RunBudget | undefined = this; budget !== undefined; budget = budget.#parent) {
      const limit = budget.#limits.maxToolCalls;
      if (limit !== undefined && budget.#toolCalls >= limit) {
        budget.#toolCallsSpent = true;
        return toolCallsSpent(limit);
      }
    }
    for (let budget: RunBudget | undefined = this; budget !== undefined; budget = budget.#parent) {
      budget.#toolCalls += 1;
    }
    return undefined;
  }

  /** Adds a finished model call's usage here and in every ancestor. */
  consume(usage: Usage): void {
    for (let budget: RunBudget | undefined = this; budget !== undefined; budget = budget.#parent) {
      addUsage(budget.#used, usage);
    }
  }
}

function toolCallsSpent(limit: number | undefined): string {
  return `the budget of ${limit} tool calls (maxToolCalls, the run and its sub-agents together) is spent`;
}

/**
 * Per-run limits a run passes down: a sub-agent's run takes the lesser of its own and its
 * parent's, so a child may tighten them, never loosen them.
 */
export interface InheritedRunLimits {
  /** Model calls of one run (`maxTurns`, the default included). */
  maxTurns: number;
  /** Calls per turn that run (`maxToolCallsPerTurn`; `Infinity` when unlimited). */
  maxToolCallsPerTurn: number;
  /** Default per-call timeout in ms (`toolTimeoutMs`, the default included). */
  toolTimeoutMs: number;
}

/** A run's effective limits: its own (or the defaults), never above its parent's. */
export function inheritRunLimits(
  own: InheritedRunLimits,
  parent: InheritedRunLimits | undefined,
): InheritedRunLimits {
  if (parent === undefined) return own;
  return {
    maxTurns: Math.min(own.maxTurns, parent.maxTurns),
    maxToolCallsPerTurn: Math.min(own.maxToolCallsPerTurn, parent.maxToolCallsPerTurn),
    toolTimeoutMs: Math.min(own.toolTimeoutMs, parent.toolTimeoutMs),
  };
}

/**
 * What a tool knows about the run that called it (`ToolContext.run`): enough for a sub-agent tool
 * to start its child inside the parent's containment — the same permission gate and hooks, the
 * chain of sub-agents, and the shared budget — without markers on tool objects.
 */
export interface RunContext {
  /** Id of the calling run. */
  runId: string;
  /** Names of the sub-agents from the root agent down to this run (`[]` for the root). */
  agentPath: readonly string[];
  /** Nesting depth: 0 for the root agent, 1 for its sub-agents, … */
  depth: number;
  /** The deepest nesting allowed below (the smallest `maxDepth` along the chain), when one is set. */
  depthLimit?: number;
  /** The run's permission gate, which a child inherits. */
  permissionGate?: PermissionGate;
  /** The run's path-denial check (its own and every ancestor's), which a child inherits. */
  isPathDenied?: PathDenialCheck;
  /** The run's hooks, which a child inherits unless its app opts out. */
  hooks?: AgentHooks;
  /** The run tree's budget; a child draws from it. */
  budget: RunBudget;
  /** The run's effective per-run limits, which bound a child's own. */
  limits?: InheritedRunLimits;
}

/** How a child run is started inside a parent's run context (`AgentOptions.parentRun`). */
export interface ParentRun {
  /** The parent's run context, from the calling tool's `ctx.run`. */
  context: RunContext;
  /** The child's name in the chain (the sub-agent tool's name). */
  name: string;
  /** The deepest nesting allowed below this child. */
  depthLimit?: number;
}

/** A check that denies what either check denies (a sub-agent's own and its parent's). */
export function eitherDenies(
  own: PathDenialCheck | undefined,
  inherited: PathDenialCheck | undefined,
): PathDenialCheck | undefined {
  if (own === undefined || inherited === undefined) return own ?? inherited;
  const both: PathDenialCheck = (path, family) => own(path, family) || inherited(path, family);
  both.covers = (family) => (own.covers?.(family) ?? true) || (inherited.covers?.(family) ?? true);
  return both;
}
