import { describe, expect, it } from 'vitest';
import { Agent } from './agent.js';
import { createScriptedProvider } from './testing/scripted-provider.js';
import { resultText, toolResults } from './testing/test-helpers.js';
import type { AnyAgentTool } from './tool.js';
import { deferTools } from './tool-catalogue.js';

// Kiro's `tool_search {tool_id?, query?, max_results?}`: `tool_id` is `server::tool`, Kiro's MCP
// naming of our `server__tool`, and loads exactly that tool (our `select:`).
function mcpTool(name: string, description: string): AnyAgentTool {
  return {
    name,
    description,
    parameters: { type: 'object', properties: {} },
    source: 'mcp:builder-mcp',
    execute: async () => ({ content: [{ type: 'text', text: `${name} done` }] }),
  };
}

const deferred = deferTools([
  mcpTool('builder-mcp__InternalSearch', 'Search internal documents.'),
  mcpTool('builder-mcp__ReadDocument', 'Read one internal document.'),
]);

async function search(args: Record<string, unknown>) {
  const provider = createScriptedProvider([
    { toolCalls: [{ id: 's', name: 'tool_search', arguments: args }] },
    { text: 'ok' },
  ]);
  const agent = new Agent({ provider, model: 'm', tools: deferred });
  await agent.run('find').result;
  const loaded = (provider.requests[1]?.tools ?? []).map((tool) => tool.name);
  return { text: resultText(toolResults(agent.messages)[0]), loaded };
}

describe('tool_search (Kiro)', () => {
  it('tool_id loads that one tool (Kiro’s example id)', async () => {
    const { text, loaded } = await search({ tool_id: 'builder-mcp::InternalSearch' });
    expect(text).toMatch(/^Loaded 1 tool;/);
    expect(loaded).toEqual(['tool_search', 'builder-mcp__InternalSearch']);
  });

  it('query with max_results searches as ours does', async () => {
    const { loaded } = await search({ query: 'search documents', max_results: 1 });
    expect(loaded).toEqual(['tool_search', 'builder-mcp__InternalSearch']);
  });

  it('an unknown tool_id loads nothing and says so', async () => {
    const { text, loaded } = await search({ tool_id: 'builder-mcp::Nope' });
    expect(text).toContain('No tools match');
    expect(loaded).toEqual(['tool_search']);
  });
});
