import type { ToolContext, ToolResult } from '@agent/core';

/** A ToolContext for calling a tool directly; `updates` collects its onUpdate partials. */
export function testContext(
  options: { signal?: AbortSignal; toolName?: string } = {},
): ToolContext & { updates: ToolResult[] } {
  const updates: ToolResult[] = [];
  return {
    toolCallId: 'call_test',
    toolName: options.toolName ?? 'test',
    signal: options.signal ?? new AbortController().signal,
    onUpdate: (partial) => updates.push(partial),
    onProgress: () => {},
    updates,
  };
}

/** A result's text parts joined (other parts as `[type]`). */
export function resultText(result: ToolResult): string {
  return result.content
    .map((part) => (part.type === 'text' ? part.text : `[${part.type}]`))
    .join('\n');
}
