// Test support (not exported).
import { readFileSync } from 'node:fs';
import { ToolError, type ToolResult } from '@agent/core';
import type { OpenApiTool } from './openapi-tool-adapter.js';
import type { OpenApiResultDetails } from './response-reader.js';

/** The text of a fixture in `__fixtures__`. */
export function fixture(name: string): string {
  return readFileSync(new URL(`./__fixtures__/${name}`, import.meta.url), 'utf8');
}

/** Validates the arguments as the agent loop would, then runs the tool. */
export async function callTool(
  tool: OpenApiTool | undefined,
  args: Record<string, unknown>,
  signal: AbortSignal = new AbortController().signal,
): Promise<ToolResult<OpenApiResultDetails>> {
  if (tool === undefined) throw new Error('no such tool');
  const validated = tool.validate?.(args) ?? { ok: true, value: args };
  if (!validated.ok)
    throw ToolError.invalidArguments(
      tool.name,
      validated.issues.map((issue) => issue.message).join('; '),
    );
  return tool.execute(validated.value, {
    toolCallId: 'call-1',
    toolName: tool.name,
    signal,
    onUpdate: () => undefined,
    onProgress: () => undefined,
  });
}

/** The concatenated text blocks of a result. */
export function resultText(result: ToolResult): string {
  return result.content
    .map((block) => (block.type === 'text' ? block.text : `[${block.type}]`))
    .join('\n');
}
