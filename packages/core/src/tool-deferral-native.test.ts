import { describe, expect, it } from 'vitest';
import { Agent } from './agent.js';
import type { Provider } from './provider.js';
import { createScriptedProvider, type ScriptedStep } from './testing/scripted-provider.js';
import type { AnyAgentTool } from './tool.js';
import { deferTools } from './tool-catalogue.js';

function tool(name: string, description: string): AnyAgentTool {
  return {
    name,
    description,
    parameters: { type: 'object', properties: { id: { type: 'string' } } },
    execute: async () => ({ content: [{ type: 'text', text: `${name} done` }] }),
  };
}

const local = tool('read_file', 'Reads a file.');
const api = [
  tool('issues_create', 'Create an issue.'),
  tool('issues_lock', 'Lock an issue conversation.'),
  tool('pulls_merge', 'Merge a pull request.'),
];

const script: ScriptedStep[] = [
  { toolCalls: [{ id: 's', name: 'tool_search', arguments: { query: 'lock issue', limit: 1 } }] },
  { toolCalls: [{ id: 'l', name: 'issues_lock', arguments: { id: '7' } }] },
  { text: 'locked' },
];

/** A scripted provider that says it defers tools natively (as the real ones do for some models). */
function nativeProvider(defers: boolean | undefined) {
  const scripted = createScriptedProvider(script);
  const provider: Provider =
    defers === undefined
      ? scripted
      : {
          id: scripted.id,
          stream: scripted.stream,
          defersTools: (model) => defers && model === 'm',
        };
  return { provider, requests: scripted.requests };
}

describe('provider-native deferral', () => {
  it('sends the same tools and every deferred definition each turn; the search still chooses', async () => {
    const { provider, requests } = nativeProvider(true);
    const agent = new Agent({ provider, model: 'm', tools: [local, ...deferTools(api)] });
    const result = await agent.run('lock issue 7').result;
    expect(result.stopReason).toBe('completed');
    expect(requests).toHaveLength(3);
    for (const request of requests) {
      expect(request.tools?.map((definition) => definition.name)).toEqual([
        'read_file',
        'tool_search',
      ]);
      expect(request.deferredTools?.searchTool).toBe('tool_search');
      expect(request.deferredTools?.tools.map((definition) => definition.name)).toEqual([
        'issues_create',
        'issues_lock',
        'pulls_merge',
      ]);
    }
    // The provider learns what loaded from the search result in the history.
    const searchResult = requests[1]?.messages.find((message) => message.role === 'toolResult');
    expect(searchResult?.role === 'toolResult' && searchResult.details).toMatchObject({
      loaded: ['issues_lock'],
    });
    expect(agent.deferredTools.loaded).toEqual(['issues_lock']);
  });

  it.each([
    ['a provider without native deferral', undefined, {}],
    ['a provider that does not defer for this model', false, {}],
    ['toolSearch.native: false', true, { native: false }],
  ])('falls back to the growing tool list with %s', async (_case, defers, toolSearch) => {
    const { provider, requests } = nativeProvider(defers);
    const agent = new Agent({
      provider,
      model: 'm',
      tools: [local, ...deferTools(api)],
      toolSearch,
    });
    await agent.run('lock issue 7').result;
    expect(requests.every((request) => request.deferredTools === undefined)).toBe(true);
    expect(requests[0]?.tools?.map((definition) => definition.name)).toEqual([
      'read_file',
      'tool_search',
    ]);
    expect(requests[1]?.tools?.map((definition) => definition.name)).toEqual([
      'read_file',
      'tool_search',
      'issues_lock',
    ]);
  });

  it('sends no deferred tools when nothing is deferred', async () => {
    const { provider, requests } = nativeProvider(true);
    const agent = new Agent({ provider, model: 'm', tools: [local, ...api] });
    await agent.run('hi').result;
    expect(requests[0]?.deferredTools).toBeUndefined();
    expect(requests[0]?.tools?.map((definition) => definition.name)).toEqual([
      'read_file',
      'issues_create',
      'issues_lock',
      'pulls_merge',
    ]);
  });
});
