// The sub-agent tool itself: created from its options, re-created one level deeper when given to
// another sub-agent's child.
import { Agent, AgentError, type DefinedTool, defineTool, ToolRegistry } from '@agent/core';
import type * as z from 'zod';
import { toolPolicy } from './child-containment.js';
import { type BindDepth, bindBrand } from './depth-binding.js';
import { loopOptions, runChild, submitTool } from './run-child.js';
import type { SubAgentDetails } from './sub-agent-details.js';
import {
  type DefaultSubAgentInput,
  defaultMaxSubAgentDepth,
  defaultSubAgentInput,
  type SubAgentToolOptions,
  submitResultToolName,
} from './sub-agent-options.js';
import { summaryToolName } from './summary-tool.js';

/** A tool that runs a child agent loop per call. */
export interface SubAgentTool<TArgs = z.output<DefaultSubAgentInput>>
  extends DefinedTool<TArgs, SubAgentDetails> {
  /** Depth of the loop this instance is called from: 0 for the root agent. */
  readonly callerDepth: number;
  /** The deepest child loop this instance may start (the smallest `maxDepth` along the chain). */
  readonly depthLimit: number;
}

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
  const concurrent = options.maxConcurrentRuns;
  if (
    concurrent !== undefined &&
    !(concurrent === Number.POSITIVE_INFINITY || (Number.isInteger(concurrent) && concurrent >= 1))
  )
    throw new AgentError(
      `Sub-agent "${options.name}": maxConcurrentRuns must be an integer >= 1 or Infinity, got ${String(concurrent)}`,
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
