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

/**
 * What a result holds between its untrusted-content markers, after checking the note and the
 * markers are there (the text as is when it has none, e.g. "No results").
 */
export function fencedText(text: string): string {
  const match =
    /^([\s\S]*)\n\n----- BEGIN UNTRUSTED WEB CONTENT ([0-9a-f]{12}) -----\n([\s\S]*)\n----- END UNTRUSTED WEB CONTENT \2 -----$/.exec(
      text,
    );
  if (match === null) return text;
  if (!match[1]?.includes('Untrusted: the text between the UNTRUSTED WEB CONTENT markers'))
    throw new Error(`fenced text without the untrusted note: ${text.slice(0, 200)}`);
  return match[3] as string;
}
