// One call of a sub-agent tool: a fresh child Agent run, its events streamed to the parent, and
// its outcome shaped into the call's result.
import {
  Agent,
  type AgentEvent,
  type AgentOptions,
  type AgentRunResult,
  type AnyAgentTool,
  clipText,
  createStructuredOutputTool,
  fenceUntrusted,
  messageText,
  type ToolContext,
  ToolError,
  type ToolResult,
  type UserMessage,
  untrustedFence,
  untrustedNote,
  withoutUntrustedMarks,
} from '@agent/core';
import type * as z from 'zod';
import { containment } from './child-containment.js';
import { childTools } from './depth-binding.js';
import { defaultMaxConcurrentRuns, takeRunSlot } from './run-slots.js';
import {
  everythingSaid,
  type SubAgentDetails,
  type SubAgentUpdateDetails,
  summariseChildRun,
} from './sub-agent-details.js';
import {
  defaultMaxSubAgentDepth,
  type SubAgentEventInfo,
  type SubAgentLoopOptions,
  type SubAgentOutcome,
  type SubAgentResultContent,
  type SubAgentToolOptions,
  submitResultToolName,
} from './sub-agent-options.js';
import {
  createSummaryTool,
  formatSummary,
  type SubAgentSummary,
  summaryToolName,
} from './summary-tool.js';

/** Longest "what it had said so far" quoted in a failed call's result (head ¾, tail ¼). */
const maxPartialTextChars = 20_000;

/**
 * Longest report of a child the parent's model gets (head ¾, tail ¼), unless the tool's
 * `policy.maxResultChars` says otherwise. The newest results reach the model whole, and a child
 * can write far more than a tool prints (a long answer, a run ended by a terminate vote that
 * returns its last tool results): without a bound one call could fill the parent's context.
 */
export const defaultMaxReportChars = 40_000;

/** Runs one call: refuses it past the depth limit, else runs the child and shapes its outcome. */
export async function runChild<TInput extends z.ZodType>(
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

  const release = await takeRunSlot({
    agent: options,
    callingRun: parentRun?.runId ?? '',
    limit: options.maxConcurrentRuns ?? defaultMaxConcurrentRuns,
    signal: ctx.signal,
    onWait: (running) =>
      ctx.onProgress(`waiting: ${running} runs of ${agentName} already going (maxConcurrentRuns)`),
  }).catch(() => {
    throw ToolError.cancelled(
      agentName,
      `sub-agent "${agentName}" was cancelled before it started`,
    );
  });
  try {
    return await runInSlot(options, { depth, depthLimit }, args, ctx);
  } finally {
    release();
  }
}

/** Runs the child once it has its slot, and shapes its outcome. */
async function runInSlot<TInput extends z.ZodType>(
  options: SubAgentToolOptions<TInput>,
  { depth, depthLimit }: { depth: number; depthLimit: number },
  args: z.output<TInput>,
  ctx: ToolContext,
): Promise<ToolResult<SubAgentDetails>> {
  const agentName = options.name;
  const parentRun = ctx.run;
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
      ? defaultResult(
          outcome,
          options,
          relayFor(result, options.policy?.maxResultChars ?? defaultMaxReportChars),
        )
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

/** Where a child's words go on their way to the parent's model: clipped, and fenced when untrusted. */
type Relay = (childText: string) => string;

/**
 * How the child's words reach the parent: fenced as untrusted when any of the child's tool
 * results was (a web page, an API's or an MCP server's answer, a sub-agent that read one) — the
 * child may repeat that text, and without the fence it would reach the parent as a sub-agent's
 * own report, its instructions laundered. Our own lines (why it stopped) stay outside.
 */
function relayFor(run: AgentRunResult, maxChars: number): Relay {
  const readUntrusted = run.messages.some(
    (message) => message.role === 'toolResult' && withoutUntrustedMarks(message.content).marked,
  );
  if (!readUntrusted) return (text) => clipText(text, maxChars);
  return (full) => {
    const text = clipText(full, maxChars);
    return `${untrustedNote('SUBAGENT', 'a sub-agent that read what third parties wrote (the web, an API, an MCP server)')}\n\n${fenceUntrusted(text, untrustedFence('SUBAGENT'))}`;
  };
}

function defaultResult<TInput extends z.ZodType>(
  outcome: SubAgentOutcome<z.output<TInput>>,
  options: SubAgentToolOptions<TInput>,
  relay: Relay,
): SubAgentResultContent {
  const { run, finalText } = outcome;
  if (outcome.submitted && !outcome.failed)
    return { content: [{ type: 'text', text: relay(JSON.stringify(outcome.output) ?? 'null') }] };
  if (outcome.summary !== undefined && !outcome.failed)
    return { content: [{ type: 'text', text: relay(formatSummary(outcome.summary)) }] };
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
          text:
            text === ''
              ? `Sub-agent "${options.name}" finished without a final answer.`
              : relay(text),
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
    (said === ''
      ? 'It had not written anything yet.'
      : `What it had said so far:\n\n${relay(said)}`);
  return { content: [{ type: 'text', text }], isError: true };
}

/** The child loop's options from the tool's (only those given). */
export function loopOptions(options: SubAgentLoopOptions): AgentOptions {
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
export function submitTool(schema: z.ZodType, submit: (value: unknown) => void): AnyAgentTool {
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
