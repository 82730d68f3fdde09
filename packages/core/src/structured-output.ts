import type * as z from 'zod';
import { defineTool } from './define-tool.js';
import type { AnyAgentTool } from './tool.js';

/** Name of the main agent's structured-output tool. */
export const structuredOutputToolName = 'structured_output';

/** `AgentOptions.output`: the run ends with a value of this shape, submitted through a tool. */
export interface StructuredOutputOptions {
  /** Schema of the value (an object schema: providers take object tool inputs). */
  schema: z.ZodType;
  /** The tool's name [structured_output]. */
  name?: string;
  /** The tool's description (what the value is for helps the model). */
  description?: string;
  /**
   * When the model stops without calling the tool, it is reminded this many times (a user
   * message naming the tool) before the run ends with an error [2].
   */
  maxReminders?: number;
}

/**
 * The tool a model calls to hand in its final, structured result: its arguments are the value,
 * validated against `schema` (an invalid value comes back to the model as an `invalid-args`
 * result to fix and resend); a valid one goes to `submit` and ends the run (terminate vote).
 * Shared by the main agent (`AgentOptions.output`) and `@agent/subagent`'s `submit_result`.
 */
export function createStructuredOutputTool(options: {
  schema: z.ZodType;
  submit: (value: unknown) => void;
  name?: string;
  description?: string;
  /** Other names that reach it [`['StructuredOutput']`, claw-code's and Claude Code's name]. */
  aliases?: readonly string[];
}): AnyAgentTool {
  return defineTool({
    name: options.name ?? structuredOutputToolName,
    aliases: options.aliases ?? ['StructuredOutput'],
    description:
      options.description ??
      'Hands in your final result and ends your task. Call it exactly once, when you are done, ' +
        'with the result in the requested shape.',
    input: options.schema,
    policy: { permission: 'read-only', countsTowardToolCallLimit: false },
    execute: async (value) => {
      options.submit(value);
      // The value rides along in details (never sent to the model): a replayed run reads it there.
      return {
        content: [{ type: 'text', text: 'Result submitted.' }],
        details: { value },
        terminate: true,
      };
    },
  });
}

/** The reminder sent when the model stopped without submitting. */
export function structuredOutputReminder(name: string): string {
  return `You ended without calling the ${name} tool. Call ${name} now with your final result; its arguments must match its schema.`;
}
