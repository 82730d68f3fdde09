// Test-only helpers shared by the code-mode test files (not exported from the package).
import {
  type AnyAgentTool,
  defineTool,
  type ExecuteToolOptions,
  executeTool,
  type ToolResultMessage,
  toolResultText,
} from '@agent/core';
import * as z from 'zod';
import { type CodeModeLimits, createCodeModeTool } from './code-mode-tool.js';

/** Runs one script through `executeTool` (the loop's path) with the given tools. */
export async function runScriptTool(
  script: string,
  options: { tools?: readonly AnyAgentTool[]; limits?: CodeModeLimits } & ExecuteToolOptions = {},
): Promise<{ text: string; message: ToolResultMessage }> {
  const { tools = [], limits, ...execute } = options;
  const tool = createCodeModeTool({ tools, ...(limits === undefined ? {} : { limits }) });
  const message = await executeTool(tool, { script }, execute);
  return { text: toolResultText(message.content), message };
}

/** `add({ a, b })` → `{ "sum": a + b }` as JSON text. */
export const addTool = defineTool({
  name: 'add',
  description: 'Adds two numbers; returns { sum }.',
  input: z.object({ a: z.number(), b: z.number() }),
  policy: { permission: 'read-only' },
  execute: async ({ a, b }) => JSON.stringify({ sum: a + b }),
});

/** Waits for its signal (never settles on its own); reports when it started and was aborted. */
export function hangingTool(
  events: { started?: () => void; aborted?: () => void } = {},
): AnyAgentTool {
  return defineTool({
    name: 'hang',
    description: 'Waits until cancelled.',
    input: z.object({}),
    policy: { permission: 'read-only' },
    execute: (_args, ctx) =>
      new Promise<string>((_resolve, reject) => {
        ctx.signal.addEventListener('abort', () => {
          events.aborted?.();
          reject(ctx.signal.reason);
        });
        events.started?.();
      }),
  });
}
