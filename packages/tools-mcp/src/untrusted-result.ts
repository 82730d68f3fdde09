/**
 * An MCP server is a third party: what its tools and resources return is marked as its own words
 * before the model reads it, with core's fence (random-id markers per result, imitations of a
 * marker inside replaced). Text is fenced; structured content stays a JSON block (valid JSON,
 * the same shape) after a note; images pass as they are.
 */
import {
  fenceUntrusted,
  neutraliseUntrustedJson,
  type ToolResult,
  type ToolResultContent,
  type UntrustedFence,
  untrustedFence,
  untrustedJsonNote,
  untrustedNote,
} from '@agent/core';
import type { McpToolResultDetails } from './result-mapping.js';

/** Who wrote a result, for the note: `the MCP server "github"`. */
export function mcpOrigin(server: string): string {
  return `the MCP server "${server}"`;
}

/**
 * The blocks of one result marked as `origin`'s: every text block between the markers of one
 * fresh fence (the note before the first), every JSON block after a note with its strings
 * neutralised, images unchanged.
 */
export function markUntrustedContent(
  content: readonly ToolResultContent[],
  origin: string,
): ToolResultContent[] {
  let fence: UntrustedFence | undefined;
  const marked: ToolResultContent[] = [];
  for (const block of content) {
    if (block.type === 'text') {
      const first = fence === undefined;
      fence ??= untrustedFence('MCP');
      const fenced = fenceUntrusted(block.text, fence);
      marked.push({
        ...block,
        text: first ? `${untrustedNote('MCP', origin)}\n\n${fenced}` : fenced,
      });
    } else if (block.type === 'json') {
      marked.push({ type: 'text', text: untrustedJsonNote(origin) });
      marked.push({ type: 'json', value: neutraliseUntrustedJson(block.value) });
    } else {
      marked.push(block);
    }
  }
  return marked;
}

/**
 * A tool result mapped from the server's answer, marked as the server's words. A result the
 * server sent nothing for keeps our own placeholder unmarked. `details` (never sent to the
 * model) keep the server's blocks as they were.
 */
export function markUntrustedResult(
  result: ToolResult<McpToolResultDetails>,
  origin: string,
): ToolResult<McpToolResultDetails> {
  const details = result.details;
  if (
    details !== undefined &&
    details.content.length === 0 &&
    details.structuredContent === undefined
  )
    return result;
  return { ...result, content: markUntrustedContent(result.content, origin) };
}
