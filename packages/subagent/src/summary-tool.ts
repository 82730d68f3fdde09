/**
 * Kiro's `summary` tool: how a sub-agent reports to its parent. The child calls it once, when its
 * task is done, with what it was asked, what it found on the way and the result; the call ends the
 * child's run and the report becomes the sub-agent call's result.
 */
import { type AnyAgentTool, defineTool, renameArguments } from '@agent/core';
import * as z from 'zod';

/** Name of the tool a child calls to report (Kiro's name). */
export const summaryToolName = 'summary';

/** What a child reported through the summary tool. */
export interface SubAgentSummary {
  /** The task the child was given, in its words. */
  taskDescription: string;
  /** What it learned on the way that helps the parent use the result. */
  contextSummary?: string | undefined;
  /** The outcome of the task. */
  taskResult: string;
}

const summaryInput = z.object({
  taskDescription: z.string().min(1).describe('The task you were given.'),
  contextSummary: z
    .string()
    .optional()
    .describe('What you learned on the way that helps use the result (files, facts, caveats).'),
  taskResult: z.string().min(1).describe('The result of the task: your findings or conclusions.'),
});

/** The summary tool: `report` receives the child's report; the call votes to end the child's run. */
export function createSummaryTool(report: (summary: SubAgentSummary) => void): AnyAgentTool {
  return defineTool({
    name: summaryToolName,
    description:
      'Reports the result of your task to the agent that gave it to you, and ends your work. ' +
      'Call it once, when the task is done (or cannot be done), with the task, the useful context ' +
      'you gathered, and the result. Your other text is not passed on.',
    // Kiro sends camelCase (its serde names); snake_case is accepted too.
    prepareArguments: renameArguments({
      task_description: 'taskDescription',
      context_summary: 'contextSummary',
      task_result: 'taskResult',
    }),
    input: summaryInput,
    policy: { permission: 'read-only', countsTowardToolCallLimit: false },
    execute: async (summary) => {
      report(summary);
      return { content: [{ type: 'text', text: 'Summary sent.' }], terminate: true };
    },
  });
}

/** The report as the parent's model reads it: the result, then the context when there is one. */
export function formatSummary(summary: SubAgentSummary): string {
  const context = summary.contextSummary?.trim();
  return context === undefined || context === ''
    ? summary.taskResult
    : `${summary.taskResult}\n\nContext: ${context}`;
}
