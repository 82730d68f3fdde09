import { Agent, type AnyAgentTool, deferTools, type ToolResultMessage } from '@agent/core';
import {
  closeWireServers,
  fixtureReader,
  SSE_HEADERS,
  startWireServer,
} from '@agent/tooling-wire-server';
import { afterEach, describe, expect, it } from 'vitest';
import { createAnthropicProvider } from './anthropic-provider.js';

const fixture = fixtureReader(new URL('./__fixtures__/', import.meta.url));
afterEach(closeWireServers);

function tool(name: string, description: string, executed: string[]): AnyAgentTool {
  return {
    name,
    description,
    parameters: { type: 'object', properties: { id: { type: 'string' } } },
    execute: async () => {
      executed.push(name);
      return { content: [{ type: 'text', text: `${name} done` }] };
    },
  };
}

interface SentTool {
  name: string;
  defer_loading?: boolean;
  cache_control?: unknown;
}
interface SentBlock {
  type: string;
  tool_use_id?: string;
  content?: { type: string; tool_name?: string; text?: string }[];
}

/** One conversation on the wire: search, call the tool it found, answer. */
async function run(model: string, options: { nativeToolSearch?: boolean } = {}) {
  const server = await startWireServer([
    { headers: SSE_HEADERS, body: fixture('tool-search-call.sse') },
    { headers: SSE_HEADERS, body: fixture('deferred-tool-call.sse') },
    { headers: SSE_HEADERS, body: fixture('final-text.sse') },
  ]);
  const executed: string[] = [];
  const agent = new Agent({
    provider: createAnthropicProvider({
      apiKey: 'k',
      baseURL: server.url,
      promptCaching: true,
      ...options,
    }),
    model,
    tools: [
      tool('read_file', 'Reads a file.', executed),
      ...deferTools([
        tool('issues_create', 'Create an issue.', executed),
        tool('issues_lock', 'Lock the conversation of an issue.', executed),
        tool('pulls_merge', 'Merge a pull request.', executed),
      ]),
    ],
  });
  const result = await agent.run('lock issue 7').result;
  const bodies = server.requests.map(
    (request) => request.json as { tools: SentTool[]; messages: { content: SentBlock[] }[] },
  );
  return { result, executed, bodies };
}

describe('Anthropic native deferral (defer_loading + tool_reference)', () => {
  it('sends every deferred tool with defer_loading, the same list each turn; search results carry tool_reference blocks', async () => {
    const { result, executed, bodies } = await run('claude-sonnet-4-5');
    expect(result.stopReason).toBe('completed');
    expect(executed).toEqual(['issues_lock']);
    expect(bodies).toHaveLength(3);
    const [first, second, third] = bodies;
    expect(first?.tools.map((sent) => [sent.name, sent.defer_loading === true])).toEqual([
      ['read_file', false],
      ['tool_search', false],
      ['issues_create', true],
      ['issues_lock', true],
      ['pulls_merge', true],
    ]);
    // The cache breakpoint is on the last tool sent in full, not on a deferred one.
    expect(first?.tools.map((sent) => sent.cache_control !== undefined)).toEqual([
      false,
      true,
      false,
      false,
      false,
    ]);
    // Loading a tool does not change the tool list: the prompt cache stays valid.
    expect(second?.tools).toEqual(first?.tools);
    expect(third?.tools).toEqual(first?.tools);
    const searchResult = second?.messages
      .at(-1)
      ?.content.find((block) => block.type === 'tool_result');
    expect(searchResult?.tool_use_id).toBe('toolu_01Search');
    expect(searchResult?.content?.filter((block) => block.type === 'tool_reference')).toEqual([
      { type: 'tool_reference', tool_name: 'issues_lock' },
    ]);
    expect(searchResult?.content?.[0]?.text).toContain('issues_lock');
    // Other tools' results carry no references.
    const lockResult = third?.messages
      .at(-1)
      ?.content.find((block) => block.type === 'tool_result');
    expect(lockResult?.content?.some((block) => block.type === 'tool_reference')).toBe(false);
    const results = result.messages.filter(
      (message): message is ToolResultMessage => message.role === 'toolResult',
    );
    expect(results.map((message) => message.toolName)).toEqual(['tool_search', 'issues_lock']);
  });

  it.each([
    ['a model without tool search', 'claude-haiku-4-5', {}],
    ['nativeToolSearch: false', 'claude-sonnet-4-5', { nativeToolSearch: false }],
  ])(
    'falls back to the client-side list with %s: same tools run, the list grows',
    async (_case, model, options) => {
      const { result, executed, bodies } = await run(model, options);
      expect(result.stopReason).toBe('completed');
      expect(executed).toEqual(['issues_lock']);
      expect(
        bodies.flatMap((body) => body.tools).some((sent) => sent.defer_loading !== undefined),
      ).toBe(false);
      expect(bodies[0]?.tools.map((sent) => sent.name)).toEqual(['read_file', 'tool_search']);
      expect(bodies[1]?.tools.map((sent) => sent.name)).toEqual([
        'read_file',
        'tool_search',
        'issues_lock',
      ]);
      const searchResult = bodies[1]?.messages
        .at(-1)
        ?.content.find((block) => block.type === 'tool_result');
      expect(searchResult?.content?.some((block) => block.type === 'tool_reference')).toBe(false);
    },
  );

  it('opting in on any model sends deferred tools natively', async () => {
    const { bodies } = await run('claude-haiku-4-5', { nativeToolSearch: true });
    expect(bodies[0]?.tools.filter((sent) => sent.defer_loading === true)).toHaveLength(3);
  });
});
