import {
  Agent,
  AgentError,
  type AgentEvent,
  type AgentHooks,
  type AgentOptions,
  type AgentRunResult,
  type AnyAgentTool,
  clipText,
  createStructuredOutputTool,
  type DefinedTool,
  defineTool,
  messageText,
  type PermissionGate,
  type PermissionTier,
  type RunContext,
  type ToolContext,
  ToolError,
  type ToolPolicy,
  ToolRegistry,
  type ToolResult,
  type UserMessage,
} from '@agent/core';
import * as z from 'zod';
import {
  everythingSaid,
  type SubAgentDetails,
  type SubAgentUpdateDetails,
  summariseChildRun,
} from './sub-agent-details.js';
import {
  createSummaryTool,
  formatSummary,
  type SubAgentSummary,
  summaryToolName,
} from './summary-tool.js';

/** The default input of a sub-agent tool: one self-contained task. */
export const defaultSubAgentInput = z.object({
  task: z
    .string()
    .min(1)
    .describe(
      'The complete task for the sub-agent. It cannot see this conversation: include every ' +
        'fact, path and constraint it needs, and say what it should report back.',
    ),
});

/** The zod type of {@link defaultSubAgentInput}. */
export type DefaultSubAgentInput = typeof defaultSubAgentInput;

/** Longest "what it had said so far" quoted in a failed call's result (head ¾, tail ¼). */
const maxPartialTextChars = 20_000;

/** Name of the tool a child with an `output` schema calls to hand in its structured result. */
export const submitResultToolName = 'submit_result';

/** Default of {@link SubAgentToolOptions.maxDepth}. */
export const defaultMaxSubAgentDepth = 3;

/** Which child the event came from. */
export interface SubAgentEventInfo {
  /** Id of the child run (its `runId`). */
  childLoopId: string;
  /** The parent's tool call that started the child. */
  toolCallId: string;
  /** The sub-agent tool's name. */
  agentName: string;
  /** Nesting depth of the child loop (1 for a sub-agent called by the root agent). */
  depth: number;
}

/** A finished child run, as `formatResult` sees it. */
export interface SubAgentOutcome<TArgs> {
  /** The validated arguments of the call. */
  args: TArgs;
  /** The child run's result (its messages, final message, usage, stop reason). */
  run: AgentRunResult;
  /** The text of the child's final assistant message. */
  finalText: string;
  /** Whether the child called `submit_result` (only with an `output` schema). */
  submitted: boolean;
  /** The value the child submitted (validated against `output`), else undefined. */
  output: unknown;
  /** The child's report through the summary tool (only with `summary: true`). */
  summary?: SubAgentSummary | undefined;
  /** The details the call's result will carry. */
  details: SubAgentDetails;
  /** True when the child did not finish its task: `error`, `max-turns` or `budget-exhausted` without a submitted result, or no submission when `output` is set. */
  failed: boolean;
}

/** Child-loop options passed through to the child's `Agent` unchanged. */
export type SubAgentLoopOptions = Pick<
  AgentOptions,
  | 'provider'
  | 'model'
  | 'systemPrompt'
  | 'toolExecution'
  | 'toolChoice'
  | 'thinkingLevel'
  | 'maxOutputTokens'
  | 'temperature'
  | 'maxTurns'
  | 'maxToolCallsPerTurn'
  | 'toolTimeoutMs'
  | 'maxResultChars'
  | 'hooks'
  | 'permissionGate'
  | 'resourceLocks'
  | 'budget'
>;

/** Options of {@link createSubAgentTool}: the tool's face, the child loop, and how results are shaped. */
export interface SubAgentToolOptions<TInput extends z.ZodType = DefaultSubAgentInput>
  extends SubAgentLoopOptions {
  /** Wire name of the tool, `^[a-zA-Z0-9_-]{1,64}$`. */
  name: string;
  /** Human label for UIs; defaults to the name. */
  label?: string;
  /** What the sub-agent is good at and when to use it, for the parent's model. */
  description: string;
  /** Other wire names that resolve to the tool. */
  aliases?: readonly string[];
  /** The child's tools, as a list or a (live) registry; may include other sub-agent tools. */
  tools?: readonly AnyAgentTool[] | ToolRegistry;
  /** Schema of the arguments (an object) [`{ task: string }`]. */
  input?: TInput;
  /** Turns the arguments into the child's first user message [the `task` field, else the arguments as JSON]. */
  prompt?: (args: z.output<TInput>) => string | UserMessage;
  /** Deepest child-loop nesting allowed, counting the root agent's sub-agents as depth 1 [3]. */
  maxDepth?: number;
  /**
   * Run the parent's hooks on the child's calls too [true]. The parent's permission gate always
   * applies (the child's own `permissionGate` can only narrow it); hooks may be opted out of.
   */
  inheritHooks?: boolean;
  /** Run alone: a parent batch containing this tool runs sequentially [false]. */
  exclusive?: boolean;
  /** Overrides of the tool's policy (the permission tier defaults to the highest among the child's tools). */
  policy?: ToolPolicy<z.output<TInput>>;
  /**
   * Schema (an object) of a structured result: the child gets a `submit_result` tool taking it,
   * which ends the child's run; the call's result is the submitted value as JSON, and
   * `details.output` holds it. A child that ends without submitting gives an `isError` result.
   */
  output?: z.ZodType;
  /**
   * Give the child Kiro's `summary` tool `{ taskDescription, contextSummary?, taskResult }`: the
   * child reports through it and its call ends the child's run; the call's result is the report
   * (`taskResult`, then the context), and `details.summary` holds it. A child that ends without
   * calling it is answered by its final text, as without this option [false].
   */
  summary?: boolean;
  /** Put the child's whole conversation in `details.messages` [false]. */
  includeMessages?: boolean;
  /** Shapes the result the parent's model reads; `details` and `childLoopId` are always set by the tool. */
  formatResult?: (
    outcome: SubAgentOutcome<z.output<TInput>>,
  ) => SubAgentResultContent | string | Promise<SubAgentResultContent | string>;
  /** Which child events are streamed to the parent as partial results [all]. */
  forwardEvent?: (event: AgentEvent) => boolean;
  /** Receives every event of every child run, synchronously (logging, UIs, tests). */
  onChildEvent?: (event: AgentEvent, info: SubAgentEventInfo) => void;
}

/** What `formatResult` may return: the model-facing part of a tool result. */
export type SubAgentResultContent = Pick<ToolResult, 'content' | 'isError' | 'terminate'>;

/** A tool that runs a child agent loop per call. */
export interface SubAgentTool<TArgs = z.output<DefaultSubAgentInput>>
  extends DefinedTool<TArgs, SubAgentDetails> {
  /** Depth of the loop this instance is called from: 0 for the root agent. */
  readonly callerDepth: number;
  /** The deepest child loop this instance may start (the smallest `maxDepth` along the chain). */
  readonly depthLimit: number;
}

/**
 * Brand under which a sub-agent tool keeps its re-binding function, so a sub-agent tool given to
 * another one's child is re-created one level deeper (works across duplicated installs).
 */
const bindBrand = Symbol.for('agent.subagent.bindDepth');

type BindDepth = (callerDepth: number, depthLimit: number) => AnyAgentTool;

/** Whether a tool is a sub-agent tool (from any copy of this package). */
export function isSubAgentTool(tool: unknown): tool is SubAgentTool<unknown> {
  return (
    tool !== null &&
    typeof tool === 'object' &&
    typeof (tool as Record<symbol, unknown>)[bindBrand] === 'function'
  );
}

/**
 * Creates a tool that runs a fresh child `Agent` for each call: its own conversation (the
 * parent's history is never shared), the call's signal aborts it, its events stream to the
 * parent as partial results, and its final text becomes the call's result. A child that stops on
 * `error` or `max-turns` gives an `isError` result with what it had said so far; an aborted call
 * gets the loop's `Cancelled` result. Sub-agent tools among the child's tools run one level
 * deeper; a call that would exceed `maxDepth` is refused with a `denied` error.
 */
export function createSubAgentTool<TInput extends z.ZodType = DefaultSubAgentInput>(
  options: SubAgentToolOptions<TInput>,
): SubAgentTool<z.output<TInput>> {
  const maxDepth = options.maxDepth ?? defaultMaxSubAgentDepth;
  if (!Number.isInteger(maxDepth) || maxDepth < 1)
    throw new AgentError(
      `Sub-agent "${options.name}": maxDepth must be an integer >= 1, got ${String(maxDepth)}`,
    );
  // The child's Agent validates its options (strategy, limits): fail here, not at the first call.
  new Agent(loopOptions(options));
  if (options.output !== undefined) {
    // Fails early (not at the first call) when the schema does not describe an object.
    submitTool(options.output, () => undefined);
    const tools =
      options.tools instanceof ToolRegistry ? options.tools.list() : (options.tools ?? []);
    if (tools.some((tool) => tool.name === submitResultToolName))
      throw new AgentError(
        `Sub-agent "${options.name}": a child tool is named "${submitResultToolName}", which the output option needs`,
      );
  }
  if (options.summary === true) {
    const tools =
      options.tools instanceof ToolRegistry ? options.tools.list() : (options.tools ?? []);
    if (tools.some((tool) => [tool.name, ...(tool.aliases ?? [])].includes(summaryToolName)))
      throw new AgentError(
        `Sub-agent "${options.name}": a child tool is named "${summaryToolName}", which the summary option needs`,
      );
  }
  return buildTool(options, 0, maxDepth);
}

/** Class-style alias of {@link createSubAgentTool}: `SubAgentTool.create(options)`. */
export const SubAgentTool = {
  /** Same as {@link createSubAgentTool}. */
  create: createSubAgentTool,
  /** Same as {@link isSubAgentTool}. */
  isInstance: isSubAgentTool,
} as const;

function buildTool<TInput extends z.ZodType>(
  options: SubAgentToolOptions<TInput>,
  callerDepth: number,
  depthLimit: number,
): SubAgentTool<z.output<TInput>> {
  type Args = z.output<TInput>;
  const input = (options.input ?? defaultSubAgentInput) as TInput;
  const policy = toolPolicy(options);
  const defined = defineTool<TInput, SubAgentDetails>({
    name: options.name,
    label: options.label ?? options.name,
    description: options.description,
    input,
    source: 'subagent',
    policy,
    ...(options.aliases === undefined ? {} : { aliases: options.aliases }),
    execute: (args, ctx) => runChild(options, { callerDepth, depthLimit }, args, ctx),
  });
  const tool = defined as SubAgentTool<Args>;
  Object.defineProperties(tool, {
    callerDepth: { value: callerDepth, enumerable: true },
    depthLimit: { value: depthLimit, enumerable: true },
    [bindBrand]: {
      value: ((nextCaller, limit) =>
        buildTool(
          options,
          nextCaller,
          Math.min(limit, options.maxDepth ?? defaultMaxSubAgentDepth),
        )) satisfies BindDepth,
    },
  });
  return tool;
}

async function runChild<TInput extends z.ZodType>(
  options: SubAgentToolOptions<TInput>,
  binding: { callerDepth: number; depthLimit: number },
  args: z.output<TInput>,
  ctx: ToolContext,
): Promise<ToolResult<SubAgentDetails>> {
  const agentName = options.name;
  // The calling run's context, set by the loop, is what counts: a spread copy, a wrapper or a
  // re-registered instance of this tool has the same depth as the original.
  const parentRun = ctx.run;
  const depth = (parentRun?.depth ?? binding.callerDepth) + 1;
  const depthLimit = Math.min(
    binding.depthLimit,
    parentRun?.depthLimit ?? Number.POSITIVE_INFINITY,
    options.maxDepth ?? defaultMaxSubAgentDepth,
  );
  if (depth > depthLimit) {
    throw new ToolError(
      `Sub-agent "${agentName}" was not started: it would run at nesting depth ${depth}, ` +
        `over the limit of ${depthLimit} (maxDepth). Do this part yourself with your other tools.`,
      { kind: 'denied', toolName: agentName },
    );
  }

  let submission: { value: unknown } | undefined;
  const tools = childTools(options.tools, depth, depthLimit);
  if (options.output !== undefined)
    tools.push(
      submitTool(options.output, (value) => {
        submission = { value };
      }),
    );
  let summary: SubAgentSummary | undefined;
  if (options.summary === true)
    tools.push(
      createSummaryTool((report) => {
        summary = report;
      }),
    );
  const inherited = containment(options, parentRun);
  const agent = new Agent({
    ...loopOptions(options),
    ...inherited,
    tools,
    ...(parentRun === undefined
      ? {}
      : { parentRun: { context: parentRun, name: agentName, depthLimit } }),
  });
  let childLoopId = '';
  let turn = 0;
  const forward = options.forwardEvent;
  const onChildEvent = options.onChildEvent;
  // Subscribed before the run starts: the first event is emitted a microtask after `run()`.
  const unsubscribe = agent.subscribe((event) => {
    const info: SubAgentEventInfo = { childLoopId, toolCallId: ctx.toolCallId, agentName, depth };
    onChildEvent?.(event, info);
    if (event.type === 'turn-start') turn = event.turn;
    if (forward === undefined || forward(event)) {
      const details: SubAgentUpdateDetails = { childLoopId, agentName, depth, event };
      ctx.onUpdate({ content: [], details, childLoopId });
    }
    const text = progressText(event, turn);
    if (text !== undefined) ctx.onProgress(text);
  });
  let result: AgentRunResult;
  try {
    const run = agent.run(firstMessage(options, args), { signal: ctx.signal });
    childLoopId = run.runId;
    result = await run.result;
  } finally {
    unsubscribe();
  }

  const details = summariseChildRun(result, {
    agentName,
    depth,
    includeMessages: options.includeMessages === true,
  });
  if (submission !== undefined) details.output = submission.value;
  if (summary !== undefined) details.summary = summary;
  if (result.stopReason === 'aborted') {
    // The loop answers an aborted call with its own `Cancelled` result; this covers a child
    // aborted some other way (a hook calling `abort`).
    throw ToolError.cancelled(agentName, `sub-agent "${agentName}" was aborted`);
  }
  // A submitted result is the answer even if the run went on and then hit a limit.
  // A report through the summary tool is the answer too, unless a structured result was due.
  const failed =
    submission === undefined &&
    (summary === undefined || options.output !== undefined) &&
    (result.stopReason === 'error' ||
      result.stopReason === 'max-turns' ||
      result.stopReason === 'budget-exhausted' ||
      options.output !== undefined);
  const finalText = result.finalMessage === undefined ? '' : messageText(result.finalMessage);
  const outcome: SubAgentOutcome<z.output<TInput>> = {
    args,
    run: result,
    finalText,
    submitted: submission !== undefined,
    output: submission?.value,
    summary,
    details,
    failed,
  };
  const shaped =
    options.formatResult === undefined
      ? defaultResult(outcome, options)
      : await options.formatResult(outcome);
  const content: SubAgentResultContent =
    typeof shaped === 'string' ? { content: [{ type: 'text', text: shaped }] } : shaped;
  const toolResult: ToolResult<SubAgentDetails> = {
    content: content.content,
    details,
    childLoopId: result.runId,
  };
  if (content.isError !== undefined) toolResult.isError = content.isError;
  else if (failed) toolResult.isError = true;
  if (content.terminate !== undefined) toolResult.terminate = content.terminate;
  return toolResult;
}

function defaultResult<TInput extends z.ZodType>(
  outcome: SubAgentOutcome<z.output<TInput>>,
  options: SubAgentToolOptions<TInput>,
): SubAgentResultContent {
  const { run, finalText } = outcome;
  if (outcome.submitted && !outcome.failed)
    return { content: [{ type: 'text', text: JSON.stringify(outcome.output) ?? 'null' }] };
  if (outcome.summary !== undefined && !outcome.failed)
    return { content: [{ type: 'text', text: formatSummary(outcome.summary) }] };
  if (!outcome.failed) {
    let text = finalText.trim();
    if (text === '' && run.stopReason === 'terminated') {
      // A run ended by a terminate vote has no closing answer: its last tool results are the output.
      const final = run.finalMessage;
      const after = final === undefined ? run.messages.length : run.messages.lastIndexOf(final) + 1;
      text = run.messages
        .slice(after)
        .map((message) => messageText(message).trim())
        .filter((part) => part !== '')
        .join('\n\n');
    }
    return {
      content: [
        {
          type: 'text',
          text: text === '' ? `Sub-agent "${options.name}" finished without a final answer.` : text,
        },
      ],
    };
  }
  const why =
    run.stopReason === 'max-turns'
      ? `it reached its limit of ${run.turns} turns (maxTurns)`
      : run.stopReason === 'error'
        ? `it failed: ${run.error ?? 'unknown error'}`
        : run.stopReason === 'budget-exhausted'
          ? `it ran out of budget (${run.budgetReason ?? 'the run budget is spent'})`
          : `it ended without calling ${submitResultToolName}`;
  // A long-running child may have written a lot; the parent needs the gist and the latest part.
  const said = clipText(everythingSaid(run.messages), maxPartialTextChars);
  const text =
    `Sub-agent "${options.name}" did not finish: ${why}.\n` +
    (said === '' ? 'It had not written anything yet.' : `What it had said so far:\n\n${said}`);
  return { content: [{ type: 'text', text }], isError: true };
}

function loopOptions(options: SubAgentLoopOptions): AgentOptions {
  const loop: AgentOptions = { provider: options.provider, model: options.model };
  // Copy only what was given: `exactOptionalPropertyTypes` forbids explicit undefineds.
  const keys = [
    'systemPrompt',
    'toolExecution',
    'toolChoice',
    'thinkingLevel',
    'maxOutputTokens',
    'temperature',
    'maxTurns',
    'maxToolCallsPerTurn',
    'toolTimeoutMs',
    'maxResultChars',
    'hooks',
    'permissionGate',
    'resourceLocks',
    'budget',
  ] as const satisfies readonly (keyof SubAgentLoopOptions)[];
  for (const key of keys) {
    if (options[key] !== undefined) Object.assign(loop, { [key]: options[key] });
  }
  return loop;
}

/**
 * The child's gate and hooks inside its parent's containment: every call must pass the child's
 * own gate (if any) *and* the parent's (same rules, mode, grants and approver — a narrower
 * policy, never a wider one); the parent's hooks run around the child's own unless opted out.
 */
function containment<TInput extends z.ZodType>(
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

/** A gate that allows only what both allow: a deny from either denies. */
function bothGates(
  own: PermissionGate | undefined,
  inherited: PermissionGate | undefined,
): PermissionGate | undefined {
  if (own === undefined || inherited === undefined) return own ?? inherited;
  return async (request) => {
    const first = await own(request);
    if (first.behavior === 'deny') return first;
    return inherited(request);
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

/** The child's tools, with every sub-agent tool among them re-bound one level deeper. */
function childTools(
  tools: readonly AnyAgentTool[] | ToolRegistry | undefined,
  depth: number,
  depthLimit: number,
): AnyAgentTool[] {
  const list = tools === undefined ? [] : tools instanceof ToolRegistry ? tools.list() : tools;
  return list.map((tool) => {
    const bind = (tool as unknown as Record<symbol, unknown>)[bindBrand];
    return typeof bind === 'function' ? (bind as BindDepth)(depth, depthLimit) : tool;
  });
}

function firstMessage<TInput extends z.ZodType>(
  options: SubAgentToolOptions<TInput>,
  args: z.output<TInput>,
): string | UserMessage {
  const message = taskMessage(options, args);
  if (options.output === undefined && options.summary !== true) return message;
  const reminder =
    options.output !== undefined
      ? `When you are done, call the ${submitResultToolName} tool with your result.`
      : `When you are done, call the ${summaryToolName} tool to report your result.`;
  if (typeof message === 'string') return `${message}\n\n${reminder}`;
  const content =
    typeof message.content === 'string'
      ? `${message.content}\n\n${reminder}`
      : [...message.content, { type: 'text' as const, text: reminder }];
  return { ...message, content };
}

function taskMessage<TInput extends z.ZodType>(
  options: SubAgentToolOptions<TInput>,
  args: z.output<TInput>,
): string | UserMessage {
  if (options.prompt !== undefined) return options.prompt(args);
  if (args !== null && typeof args === 'object' && 'task' in args) {
    const task = (args as { task: unknown }).task;
    if (typeof task === 'string') return task;
  }
  return JSON.stringify(args, null, 2);
}

/** The tool a child calls to hand in its structured result (core's structured-output tool). */
function submitTool(schema: z.ZodType, submit: (value: unknown) => void): AnyAgentTool {
  return createStructuredOutputTool({ schema, submit, name: submitResultToolName });
}

/** User-facing progress for a child event, e.g. `turn 2: running read_file`. */
function progressText(event: AgentEvent, turn: number): string | undefined {
  switch (event.type) {
    case 'turn-start':
      return `turn ${event.turn}: thinking`;
    case 'tool-execution-start':
      return `turn ${turn}: running ${event.toolName}`;
    case 'progress':
      return `turn ${turn}: ${event.toolName}: ${event.text}`;
    default:
      return undefined;
  }
}

const tierOrder: readonly PermissionTier[] = ['read-only', 'workspace-write', 'full-access'];

/** Tools whose tier is being computed right now: a sub-agent that lists itself must not recurse forever. */
const computingTier = new Set<unknown>();

function toolPolicy<TInput extends z.ZodType>(
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
  return policy;
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
