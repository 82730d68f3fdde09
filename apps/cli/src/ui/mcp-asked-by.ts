// Which agent's call an MCP server's question (an elicitation, a sampling request) comes during:
// a question a sub-agent's call causes says so, as a permission question a sub-agent asks does.
import { terminalSafe } from '@agent/core';
import type { McpCaller } from '@agent/tools-mcp';

/** Most tool names listed for one agent; the rest are counted. */
const maxToolsShown = 3;

/**
 * The start of a line about a server's request, naming the sub-agent whose call it came during
 * (`Sub-agent helper › researcher's call of github__create_issue: `), or '' when only the main
 * agent's calls (or none) were running. MCP does not tie a server's request to one call, so
 * when calls of several agents were running each is named.
 */
export function askedDuring(callers: readonly McpCaller[]): string {
  const byAgent = new Map<string, string[]>();
  for (const caller of callers) {
    const who = caller.agentPath.length === 0 ? '' : caller.agentPath.join(' › ');
    const tools = byAgent.get(who) ?? [];
    if (!tools.includes(caller.toolName)) tools.push(caller.toolName);
    byAgent.set(who, tools);
  }
  if ([...byAgent.keys()].every((who) => who === '')) return '';
  const named = [...byAgent].map(([who, tools]) => ({
    who: who === '' ? 'the main agent' : `sub-agent ${safe(who)}`,
    tools: toolList(tools),
  }));
  const [only] = named;
  if (named.length === 1 && only !== undefined) {
    const [first] = byAgent.values();
    const calls = first?.length === 1 ? 'call of' : 'calls of';
    return `${capitalised(only.who)}'s ${calls} ${only.tools}: `;
  }
  return `During calls of ${named.map((agent) => `${agent.who} (${agent.tools})`).join(' and ')}: `;
}

function toolList(tools: readonly string[]): string {
  const shown = tools.slice(0, maxToolsShown).map(safe).join(', ');
  const more = tools.length - maxToolsShown;
  return more > 0 ? `${shown} and ${more} more` : shown;
}

/** Agent and tool names come from files and servers: shown, never obeyed. */
function safe(text: string): string {
  return terminalSafe(text, { singleLine: true });
}

function capitalised(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
