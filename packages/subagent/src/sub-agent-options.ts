// The options and result types of a sub-agent tool.
import type {
  AgentEvent,
  AgentOptions,
  AgentRunResult,
  AnyAgentTool,
  ToolPolicy,
  ToolRegistry,
  ToolResult,
  UserMessage,
} from '@agent/core';
import * as z from 'zod';
import type { SubAgentDetails } from './sub-agent-details.js';
import type { SubAgentSummary } from './summary-tool.js';

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
  /**
   * Child runs of this sub-agent one calling run may have at once; further calls wait (showing
   * progress) until one ends [4]. Counted per calling run, so a child's own calls never wait for
   * slots its ancestors hold. `Infinity` for no limit.
   */
  maxConcurrentRuns?: number;
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
