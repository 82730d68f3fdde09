// What bounds a child: the parent's gate and hooks around its own, and the tier it asks for (the
// highest of its tools').
import type {
  AgentHooks,
  AgentOptions,
  AnyAgentTool,
  PermissionGate,
  PermissionTier,
  RunContext,
  ToolPolicy,
} from '@agent/core';
import { isRepeatable, ToolRegistry } from '@agent/core';
import type * as z from 'zod';
import type { SubAgentToolOptions } from './sub-agent-options.js';

/**
 * The child's gate and hooks inside its parent's containment: every call must pass the child's
 * own gate (if any) *and* the parent's (same rules, mode, grants and approver — a narrower
 * policy, never a wider one); the parent's hooks run around the child's own unless opted out.
 */
export function containment<TInput extends z.ZodType>(
  options: SubAgentToolOptions<TInput>,
  parentRun: RunContext | undefined,
): Pick<AgentOptions, 'permissionGate' | 'hooks'> {
  const out: Pick<AgentOptions, 'permissionGate' | 'hooks'> = {};
  const gate = bothGates(options.permissionGate, parentRun?.permissionGate);
  if (gate !== undefined) out.permissionGate = gate;
  const hooks =
    options.inheritHooks === false ? options.hooks : bothHooks(parentRun?.hooks, options.hooks);
  if (hooks !== undefined) out.hooks = hooks;
  return out;
}

/**
 * A gate that allows only what both allow: a deny from either denies, and a call either allows
 * only to read (`readOnly`) runs so.
 */
function bothGates(
  own: PermissionGate | undefined,
  inherited: PermissionGate | undefined,
): PermissionGate | undefined {
  if (own === undefined || inherited === undefined) return own ?? inherited;
  return async (request) => {
    const first = await own(request);
    if (first.behavior === 'deny') return first;
    const second = await inherited(request);
    return second.behavior === 'allow' && first.readOnly === true
      ? { ...second, readOnly: true }
      : second;
  };
}

/** The parent's hooks around the child's own: the parent decides first and sees the final result. */
function bothHooks(
  outer: AgentHooks | undefined,
  inner: AgentHooks | undefined,
): AgentHooks | undefined {
  if (outer === undefined || inner === undefined) return outer ?? inner;
  const hooks: AgentHooks = {
    beforeToolExecution: async (call) => {
      const first = await outer.beforeToolExecution?.(call);
      if (first?.action === 'skip') return first;
      const args = first?.action === 'replace' ? first.args : call.args;
      const second = await inner.beforeToolExecution?.({ ...call, args });
      if (second !== undefined && second.action !== 'allow') return second;
      return first;
    },
    afterToolExecution: async (call, result) => {
      const changed = (await inner.afterToolExecution?.(call, result)) ?? result;
      return (await outer.afterToolExecution?.(call, changed)) ?? changed;
    },
    beforeToolExecutionUpdate: async (call, partial) =>
      (await outer.beforeToolExecutionUpdate?.(call, partial)) !== false &&
      (await inner.beforeToolExecutionUpdate?.(call, partial)) !== false,
    afterToolExecutionUpdate: async (call, partial) => {
      await inner.afterToolExecutionUpdate?.(call, partial);
      await outer.afterToolExecutionUpdate?.(call, partial);
    },
  };
  return hooks;
}

const tierOrder: readonly PermissionTier[] = ['read-only', 'workspace-write', 'full-access'];

/** Tools whose tier is being computed right now: a sub-agent that lists itself must not recurse forever. */
const computingTier = new Set<unknown>();
/** The same for whether a sub-agent is repeatable. */
const computingRepeatable = new Set<unknown>();

/**
 * The sub-agent tool's policy: the options' own, with the highest tier of its tools unless one is
 * given, and repeatable (run again on resume after its process died mid-call) only when every
 * tool of the child is — whatever tier the app declares for starting it: a child that was
 * writing when the process died must be reported as interrupted, not re-run with its effects.
 */
export function toolPolicy<TInput extends z.ZodType>(
  options: SubAgentToolOptions<TInput>,
): ToolPolicy<z.output<TInput>> {
  const policy: ToolPolicy<z.output<TInput>> = { exclusive: options.exclusive ?? false };
  Object.assign(policy, options.policy);
  if (options.policy?.permission === undefined) {
    // A getter, so a live registry's later tools count too.
    Object.defineProperty(policy, 'permission', {
      enumerable: true,
      get: () => highestTier(options.tools),
    });
  }
  if (options.policy?.repeatable === undefined) {
    Object.defineProperty(policy, 'repeatable', {
      enumerable: true,
      get: () => allRepeatable(options.tools),
    });
  }
  return policy;
}

/** Whether every tool of a child may simply run again (a sub-agent among them: its own tools). */
function allRepeatable(tools: readonly AnyAgentTool[] | ToolRegistry | undefined): boolean {
  if (tools === undefined || computingRepeatable.has(tools)) return true;
  computingRepeatable.add(tools);
  try {
    const list = tools instanceof ToolRegistry ? tools.list() : tools;
    return list.every((tool) => isRepeatable(tool));
  } finally {
    computingRepeatable.delete(tools);
  }
}

function highestTier(tools: readonly AnyAgentTool[] | ToolRegistry | undefined): PermissionTier {
  if (tools === undefined || computingTier.has(tools)) return 'read-only';
  computingTier.add(tools);
  try {
    const list = tools instanceof ToolRegistry ? tools.list() : tools;
    let highest = 0;
    for (const tool of list) {
      highest = Math.max(highest, tierOrder.indexOf(tool.policy?.permission ?? 'full-access'));
    }
    return tierOrder[highest] ?? 'full-access';
  } finally {
    computingTier.delete(tools);
  }
}
