/**
 * Kiro's sub-agent tools, as shapes of the agent tool:
 *
 * - `use_subagent` (Kiro CLI): `{ command: "ListAgents" }` lists the sub-agents;
 *   `{ command: "InvokeSubagents", content: { subagents: [{ query, agent_name?, relevant_context? }] } }`
 *   runs each (together) and returns their reports in order;
 * - `delegate`: `{ operation: "launch", agent?, task }` runs the task — here to completion, within
 *   the call: we have no background agents, so `{ operation: { status } }` says none are running
 *   and `"list"` lists the sub-agents;
 * - `subagent`/`agent_crew` (Kiro's newer crate): `{ task, stages: [{ name, role, prompt_template,
 *   depends_on?, model? }], mode? }` runs the stages as a pipeline — stages whose dependencies are
 *   done run together; `{task}` in a template is the overall task; each stage gets the reports of
 *   the stages it depends on. A stage's `role` picks the sub-agent of that name, else the default
 *   one is told the role. `model` is ignored: a sub-agent's model is its tool's.
 *
 * Each sub-agent run goes through `ctx.callTool` when the loop provides it (its own call id,
 * events, gate and locks), else straight to the sub-agent tool.
 */
import {
  type AnyAgentTool,
  clipText,
  messageText,
  type ToolContext,
  ToolError,
  type ToolResult,
  type ToolResultMessage,
  type ValidationResult,
  validateWithZod,
} from '@agent/core';
import * as z from 'zod';
import { defaultMaxReportChars } from './run-child.js';

/**
 * Most sub-agent runs one call may start (InvokeSubagents' entries, a crew's stages), and never
 * more than the calling run may make calls in a turn: runs started inside a call do not count
 * toward the model's per-turn cap, so without this one call would start as many as it lists.
 */
export const maxRunsPerCall = 16;

// `dangerously_trust_all_tools` and `is_interactive` are accepted and ignored: a sub-agent's calls
// meet the gate whatever the model asks (it cannot grant itself trust), and it never asks the user
// questions of its own.
const invocation = z.strictObject({
  query: z.string().trim().min(1),
  agent_name: z.string().optional(),
  relevant_context: z.string().optional(),
  dangerously_trust_all_tools: z.boolean().optional(),
  is_interactive: z.boolean().optional(),
});

const stage = z.strictObject({
  name: z.string().trim().min(1),
  role: z.string().trim().min(1),
  prompt_template: z.string().trim().min(1),
  depends_on: z.array(z.string()).optional(),
  model: z.string().optional(),
});

const useSubagent = z.discriminatedUnion('command', [
  z.strictObject({ command: z.literal('ListAgents'), content: z.unknown().optional() }),
  z.strictObject({
    command: z.literal('InvokeSubagents'),
    content: z.strictObject({
      subagents: z.array(invocation).min(1),
      // Kiro's bookkeeping ids: a child here always starts a fresh conversation.
      convo_id: z.string().optional(),
      conversation_id: z.string().optional(),
      tool_use_id: z.string().optional(),
    }),
  }),
]);

const delegate = z.strictObject({
  operation: z.union([
    z.literal('launch'),
    z.literal('list'),
    z.strictObject({ status: z.string().optional() }),
  ]),
  agent: z.string().optional(),
  task: z.string().optional(),
});

const crew = z.strictObject({
  task: z.string().trim().min(1),
  stages: z.array(stage).min(1),
  mode: z.literal('blocking').optional(),
});

/** One of Kiro's calls, tagged by shape. */
export type KiroAgentCall =
  | { shape: 'use_subagent'; call: z.infer<typeof useSubagent> }
  | { shape: 'delegate'; call: z.infer<typeof delegate> }
  | { shape: 'crew'; call: z.infer<typeof crew> };

/** Which of Kiro's shapes raw arguments are in, by their distinguishing field. */
export function kiroShapeOf(args: unknown): KiroAgentCall['shape'] | undefined {
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return undefined;
  if ('command' in args) return 'use_subagent';
  if ('operation' in args) return 'delegate';
  if ('stages' in args) return 'crew';
  return undefined;
}

/** Kiro sends `null` for an absent field (its delegate schema says so). */
function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, field]) => field !== null)
      .map(([key, field]) => [key, withoutNulls(field)]),
  );
}

/** Validates one of Kiro's shapes into a tagged call. */
export function validateKiroCall(args: unknown): ValidationResult<KiroAgentCall> {
  const shape = kiroShapeOf(args);
  const raw = withoutNulls(args);
  const tagged = <T>(result: ValidationResult<T>, tag: KiroAgentCall['shape']) =>
    (result.ok
      ? { ok: true, value: { shape: tag, call: result.value } }
      : result) as ValidationResult<KiroAgentCall>;
  switch (shape) {
    case 'use_subagent': {
      const command = (raw as { command?: unknown }).command;
      if (command !== 'ListAgents' && command !== 'InvokeSubagents')
        return {
          ok: false,
          issues: [
            {
              path: ['command'],
              message: `expected one of "ListAgents", "InvokeSubagents", received ${JSON.stringify(command)}`,
            },
          ],
        };
      return tagged(validateWithZod(useSubagent, raw), shape);
    }
    case 'delegate':
      return tagged(validateWithZod(delegate, raw), shape);
    case 'crew':
      return tagged(validateWithZod(crew, raw), shape);
    default:
      return { ok: false, issues: [{ path: [], message: 'not one of Kiro’s sub-agent shapes' }] };
  }
}

/** What a Kiro call needs of the agent tool. */
export interface KiroAgentTarget {
  /** The tool's wire name, for errors. */
  toolName: string;
  agents: ReadonlyMap<string, AnyAgentTool>;
  fallback: string;
  /** `- name: description` lines. */
  listing: string;
}

/** The sub-agents a call would run (its permission subjects); none for a listing. */
export function agentsOfKiroCall(call: KiroAgentCall, target: KiroAgentTarget): string[] {
  switch (call.shape) {
    case 'use_subagent':
      return call.call.command === 'InvokeSubagents'
        ? [
            ...new Set(
              call.call.content.subagents.map((each) => each.agent_name ?? target.fallback),
            ),
          ]
        : [];
    case 'delegate':
      return call.call.operation === 'launch' ? [call.call.agent ?? target.fallback] : [];
    case 'crew':
      return [
        ...new Set(
          call.call.stages.map((each) =>
            target.agents.has(each.role) ? each.role : target.fallback,
          ),
        ),
      ];
    default: {
      const exhaustive: never = call;
      return exhaustive;
    }
  }
}

/** One sub-agent run: its report text and whether it failed. */
interface Report {
  text: string;
  failed: boolean;
}

async function runAgent(
  target: KiroAgentTarget,
  name: string,
  task: string,
  ctx: ToolContext,
): Promise<Report> {
  const agent = target.agents.get(name);
  if (agent === undefined)
    throw ToolError.invalidArguments(
      target.toolName,
      `there is no sub-agent "${name}"; the sub-agents are: ${[...target.agents.keys()].join(', ')}`,
    );
  if (ctx.callTool !== undefined) {
    const message: ToolResultMessage = await ctx.callTool(agent, { task });
    return { text: messageText(message), failed: message.isError };
  }
  const validated = agent.validate?.({ task }) ?? { ok: true, value: { task } };
  if (!validated.ok)
    throw ToolError.invalidArguments(
      target.toolName,
      `sub-agent "${name}" does not take a plain task`,
    );
  try {
    const result = await agent.execute(validated.value, ctx);
    const text = result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
    return { text, failed: result.isError === true };
  } catch (error) {
    return { text: error instanceof Error ? error.message : String(error), failed: true };
  }
}

/** Refuses a call that would start more runs than {@link maxRunsPerCall} or the run's per-turn cap. */
function checkRunCount(count: number, target: KiroAgentTarget, ctx: ToolContext): void {
  const perTurn = ctx.run?.limits?.maxToolCallsPerTurn ?? Number.POSITIVE_INFINITY;
  const limit = Math.min(maxRunsPerCall, perTurn);
  if (count > limit)
    throw ToolError.invalidArguments(
      target.toolName,
      `this call would start ${count} sub-agent runs; one call starts at most ${limit}` +
        (perTurn <= maxRunsPerCall ? ' (the calls you may make in a turn)' : '') +
        ': split the work, or do part of it yourself',
    );
}

/**
 * Each report clipped to its share of one report's budget: many children together reach the
 * parent's model in no more room than one child's report may take (each keeps its head and tail).
 */
function shareOfBudget(text: string, count: number): string {
  return clipText(text, Math.floor(defaultMaxReportChars / Math.max(1, count)));
}

function joined(reports: readonly { heading: string; report: Report }[]): ToolResult {
  const text = reports
    .map(
      ({ heading, report }, index) =>
        `=== ${index + 1}/${reports.length} ${heading}${report.failed ? ' (failed)' : ''} ===\n${shareOfBudget(report.text, reports.length)}`,
    )
    .join('\n\n');
  return {
    content: [{ type: 'text', text }],
    ...(reports.every(({ report }) => report.failed) ? { isError: true } : {}),
  };
}

/** The stages in waves: each wave's dependencies are all in earlier waves. */
function waves(
  stages: readonly z.infer<typeof stage>[],
  toolName: string,
): z.infer<typeof stage>[][] {
  const names = new Set(stages.map((each) => each.name));
  if (names.size !== stages.length)
    throw ToolError.invalidArguments(toolName, 'two stages share a name');
  for (const each of stages)
    for (const dependency of each.depends_on ?? [])
      if (!names.has(dependency))
        throw ToolError.invalidArguments(
          toolName,
          `stage "${each.name}" depends on "${dependency}", which is not a stage`,
        );
  const done = new Set<string>();
  const result: z.infer<typeof stage>[][] = [];
  let left = [...stages];
  while (left.length > 0) {
    const ready = left.filter((each) =>
      (each.depends_on ?? []).every((dependency) => done.has(dependency)),
    );
    if (ready.length === 0)
      throw ToolError.invalidArguments(
        toolName,
        `the stages ${left.map((each) => `"${each.name}"`).join(', ')} depend on each other in a cycle`,
      );
    result.push(ready);
    for (const each of ready) done.add(each.name);
    left = left.filter((each) => !ready.includes(each));
  }
  return result;
}

/** Runs one of Kiro's calls; see the module comment. */
export async function runKiroCall(
  call: KiroAgentCall,
  target: KiroAgentTarget,
  ctx: ToolContext,
): Promise<ToolResult> {
  const listing = () => ({
    content: [
      {
        type: 'text' as const,
        text: `Sub-agents (default ${target.fallback}):\n${target.listing}`,
      },
    ],
  });
  switch (call.shape) {
    case 'use_subagent': {
      if (call.call.command === 'ListAgents') return listing();
      const invocations = call.call.content.subagents;
      checkRunCount(invocations.length, target, ctx);
      const reports = await Promise.all(
        invocations.map(async (each) => {
          const name = each.agent_name ?? target.fallback;
          const context = each.relevant_context?.trim();
          const task =
            context === undefined || context === ''
              ? each.query
              : `${each.query}\n\nContext:\n${context}`;
          return { heading: name, report: await runAgent(target, name, task, ctx) };
        }),
      );
      return joined(reports);
    }
    case 'delegate': {
      const { operation } = call.call;
      if (operation === 'list') return listing();
      if (operation !== 'launch')
        return {
          content: [
            {
              type: 'text',
              text: 'No background agents are running: delegate runs each task to completion when it is launched.',
            },
          ],
        };
      const task = call.call.task?.trim();
      if (task === undefined || task === '')
        throw ToolError.invalidArguments(target.toolName, 'launch needs "task"');
      const name = call.call.agent ?? target.fallback;
      const report = await runAgent(target, name, task, ctx);
      return {
        content: [
          {
            type: 'text',
            text: `Sub-agent ${name} ran the task to completion (not in the background); its report:\n\n${report.text}`,
          },
        ],
        ...(report.failed ? { isError: true } : {}),
      };
    }
    case 'crew': {
      const { task, stages } = call.call;
      checkRunCount(stages.length, target, ctx);
      const outputs = new Map<string, Report>();
      const order: { heading: string; report: Report }[] = [];
      for (const wave of waves(stages, target.toolName)) {
        const reports = await Promise.all(
          wave.map(async (each) => {
            const known = target.agents.has(each.role);
            const dependencies = each.depends_on ?? [];
            const earlier = dependencies
              .map(
                (dependency) =>
                  `--- ${dependency} ---\n${shareOfBudget(outputs.get(dependency)?.text ?? '', dependencies.length)}`,
              )
              .join('\n\n');
            const prompt = [
              known ? undefined : `Your role: ${each.role}.`,
              each.prompt_template.replaceAll('{task}', task),
              earlier === '' ? undefined : `Results of the stages before yours:\n\n${earlier}`,
            ]
              .filter((part) => part !== undefined)
              .join('\n\n');
            const report = await runAgent(target, known ? each.role : target.fallback, prompt, ctx);
            return { heading: `${each.name} (${each.role})`, name: each.name, report };
          }),
        );
        for (const { heading, name, report } of reports) {
          outputs.set(name, report);
          order.push({ heading, report });
        }
      }
      return joined(order);
    }
    default: {
      const exhaustive: never = call;
      return exhaustive;
    }
  }
}
