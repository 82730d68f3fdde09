/**
 * One tool over several sub-agents, in the shape Claude Code's `Task`/`Agent` and claw-code's
 * `Agent` tools use: `{ description, prompt, subagent_type? }`. The model picks the sub-agent by
 * `subagent_type`; the call runs it exactly as calling that sub-agent tool would (its own loop,
 * tools, limits and containment).
 */
import {
  AgentError,
  type AnyAgentTool,
  type DefinedTool,
  defineTool,
  isRepeatable,
  type PermissionTier,
  renameArguments,
  ToolError,
} from '@agent/core';
import * as z from 'zod';
import {
  agentsOfKiroCall,
  type KiroAgentCall,
  kiroShapeOf,
  runKiroCall,
  validateKiroCall,
} from './kiro-agent-calls.js';
import type { SubAgentDetails } from './sub-agent-details.js';
import { isSubAgentTool } from './sub-agent-tool.js';

/** Options of {@link createAgentTool}. */
export interface AgentToolOptions {
  /**
   * The sub-agents it chooses from: tools made by `createSubAgentTool` with the default input
   * (`{ task }`), by their names.
   */
  agents: readonly AnyAgentTool[];
  /** The one run when the call names none [the first]. */
  defaultAgent?: string;
  /** Wire name [agent]. */
  name?: string;
  /**
   * Other names that reach it [`['Agent', 'Task', 'use_subagent', 'subagent', 'agent_crew',
   * 'delegate']`: claw-code's, Claude Code's and Kiro's]. Kiro's argument shapes are taken
   * whatever the names (see `kiro-agent-calls.ts`).
   */
  aliases?: readonly string[];
}

/** Arguments of the agent tool. */
export interface AgentToolArgs {
  description: string;
  prompt: string;
  subagent_type?: string | undefined;
}

const tierOrder: readonly PermissionTier[] = ['read-only', 'workspace-write', 'full-access'];

/**
 * The `agent` tool: runs the sub-agent `subagent_type` names (or `defaultAgent`) with `prompt` as
 * its task. `description` is a short label for UIs (3–5 words). claw-code's `name` and `model`
 * arguments are accepted and ignored: a sub-agent's model is its tool's.
 */
export function createAgentTool(
  options: AgentToolOptions,
): DefinedTool<AgentToolArgs, SubAgentDetails> {
  const name = options.name ?? 'agent';
  if (options.agents.length === 0)
    throw new AgentError(`Agent tool "${name}": give at least one sub-agent`);
  for (const agent of options.agents)
    if (!isSubAgentTool(agent))
      throw new AgentError(
        `Agent tool "${name}": "${agent.name}" is not a sub-agent tool (make it with createSubAgentTool)`,
      );
  const byName = new Map(options.agents.map((agent) => [agent.name, agent]));
  if (byName.size !== options.agents.length)
    throw new AgentError(`Agent tool "${name}": two sub-agents share a name`);
  const fallback = options.defaultAgent ?? options.agents[0]?.name ?? '';
  if (!byName.has(fallback))
    throw new AgentError(`Agent tool "${name}": no sub-agent named "${fallback}" (defaultAgent)`);
  const names = [...byName.keys()];
  const listing = options.agents
    .map((agent) => `- ${agent.name}: ${agent.description.split('\n')[0]}`)
    .join('\n');
  const tier = options.agents
    .map((agent) => agent.policy?.permission ?? 'full-access')
    .reduce((highest, each) =>
      tierOrder.indexOf(each) > tierOrder.indexOf(highest) ? each : highest,
    );
  const nonEmpty = (field: string) =>
    z.string().refine((value) => value.trim() !== '', { error: `${field} must not be empty` });
  const tool = defineTool({
    name,
    aliases: options.aliases ?? [
      'Agent',
      'Task',
      'use_subagent',
      'subagent',
      'agent_crew',
      'delegate',
    ],
    description:
      'Starts a sub-agent on a task and returns its report. It cannot see this conversation: put ' +
      'every fact, path and constraint it needs in the prompt, and say what to report back. ' +
      `Sub-agents (subagent_type; default ${fallback}):\n${listing}`,
    prepareArguments: renameArguments({}, { drop: ['name', 'model'] }),
    input: z.object({
      description: nonEmpty('description').describe('A short (3-5 word) label of the task.'),
      prompt: nonEmpty('prompt').describe('The complete task for the sub-agent.'),
      subagent_type: z
        .string()
        .optional()
        .describe(`Which sub-agent: ${names.join(', ')} [${fallback}].`),
    }),
    source: 'subagent',
    // Starting a sub-agent does nothing by itself; its calls meet the gate. The tier is the
    // highest among the sub-agents', as calling one of them directly would be.
    // Repeatable on resume only when every sub-agent is (a getter: a live registry's tools count).
    policy: {
      permission: tier,
      get repeatable() {
        return options.agents.every((agent) => isRepeatable(agent));
      },
    },
    permissionSubjects: ({ subagent_type }) => [subagent_type ?? fallback],
    execute: async ({ prompt, subagent_type }, ctx) => {
      const chosen = subagent_type ?? fallback;
      const agent = byName.get(chosen);
      if (agent === undefined)
        throw ToolError.invalidArguments(
          name,
          `there is no sub-agent "${chosen}"; the sub-agents are: ${names.join(', ')}`,
        );
      const validated = agent.validate?.({ task: prompt }) ?? { ok: true, value: { task: prompt } };
      if (!validated.ok)
        throw ToolError.invalidArguments(
          name,
          `sub-agent "${chosen}" does not take a plain task: ${validated.issues.map((issue) => issue.message).join('; ')}`,
        );
      return agent.execute(validated.value, ctx);
    },
  });
  return withKiroCalls(tool, { toolName: name, agents: byName, fallback, listing });
}

/** A validated Kiro call travels as the tool's arguments, tagged (our own shape has no `shape`). */
function isKiroCall(args: unknown): args is KiroAgentCall {
  return args !== null && typeof args === 'object' && 'shape' in args && 'call' in args;
}

/** The agent tool that also takes Kiro's shapes: each step dispatches on the arguments' shape. */
function withKiroCalls(
  tool: DefinedTool<AgentToolArgs, SubAgentDetails>,
  target: Parameters<typeof runKiroCall>[1],
): DefinedTool<AgentToolArgs, SubAgentDetails> {
  return {
    ...tool,
    prepareArguments: (raw) =>
      kiroShapeOf(raw) === undefined ? (tool.prepareArguments?.(raw) ?? raw) : raw,
    // The tagged Kiro call stands in for AgentToolArgs between validate and execute only.
    validate: (args) =>
      kiroShapeOf(args) === undefined
        ? (tool.validate?.(args) ?? { ok: true, value: args as AgentToolArgs })
        : (validateKiroCall(args) as unknown as ReturnType<NonNullable<typeof tool.validate>>),
    permissionSubjects: (args) =>
      isKiroCall(args) ? agentsOfKiroCall(args, target) : (tool.permissionSubjects?.(args) ?? []),
    execute: (args, ctx) =>
      isKiroCall(args)
        ? (runKiroCall(args, target, ctx) as ReturnType<typeof tool.execute>)
        : tool.execute(args, ctx),
  };
}
