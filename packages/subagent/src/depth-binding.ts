// How a sub-agent tool given to another one's child is re-created one level deeper.
import { type AnyAgentTool, ToolRegistry } from '@agent/core';

/**
 * Brand under which a sub-agent tool keeps its re-binding function, so a sub-agent tool given to
 * another one's child is re-created one level deeper (works across duplicated installs).
 */
export const bindBrand = Symbol.for('agent.subagent.bindDepth');

/** Re-creates a sub-agent tool for a caller at `callerDepth`. */
export type BindDepth = (callerDepth: number, depthLimit: number) => AnyAgentTool;

/** The child's tools, with every sub-agent tool among them re-bound one level deeper. */
export function childTools(
  tools: readonly AnyAgentTool[] | ToolRegistry | undefined,
  depth: number,
  depthLimit: number,
): AnyAgentTool[] {
  const list = tools === undefined ? [] : tools instanceof ToolRegistry ? tools.list() : tools;
  return list.map((tool) => {
    const bind = (tool as unknown as Record<symbol, unknown>)[bindBrand];
    return typeof bind === 'function' ? (bind as BindDepth)(depth, depthLimit) : tool;
  });
}
