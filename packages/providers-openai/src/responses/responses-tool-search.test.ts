import { Agent, type AnyAgentTool, deferTools } from '@agent/core';
import { closeWireServers, startWireServer } from '@agent/tooling-wire-server';
import { afterEach, describe, expect, it } from 'vitest';
import { supportsToolSearch } from '../openai-models.js';
import { createOpenAIProvider, type OpenAIProviderOptions } from '../openai-provider.js';
import { fixtureResponse, openaiAt } from '../test-helpers.js';

afterEach(closeWireServers);

function tool(name: string, description: string, executed: string[]): AnyAgentTool {
  return {
    name,
    description,
    parameters: {
      type: 'object',
      properties: { id: { type: 'string' } },
      required: ['id'],
      additionalProperties: false,
    },
    execute: async () => {
      executed.push(name);
      return { content: [{ type: 'text', text: `${name} done` }] };
    },
  };
}

interface SentItem {
  type?: string;
  call_id?: string;
  execution?: string;
  arguments?: unknown;
  tools?: { type: string; name: string; strict?: boolean }[];
}
interface SentBody {
  tools: { type: string; name?: string; execution?: string; parameters?: unknown }[];
  input: SentItem[];
}

/** One conversation on the wire: search, call the tool it found, answer. */
async function run(options: OpenAIProviderOptions) {
  const server = await startWireServer([
    fixtureResponse('responses-tool-search-call.sse'),
    fixtureResponse('responses-deferred-call.sse'),
    fixtureResponse('responses-final-text.sse'),
  ]);
  const executed: string[] = [];
  const agent = new Agent({
    provider: openaiAt(server.url, { api: 'responses', ...options }),
    model: 'gpt-5.4',
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
  return { result, executed, bodies: server.requests.map((request) => request.json as SentBody) };
}

describe('OpenAI Responses native deferral (client-executed tool_search)', () => {
  it('offers tool_search, turns its calls into our search and returns the loaded definitions', async () => {
    const { result, executed, bodies } = await run({ nativeToolSearch: true });
    expect(result.stopReason).toBe('completed');
    expect(executed).toEqual(['issues_lock']);
    expect(bodies).toHaveLength(3);
    const [first, second, third] = bodies;
    // The deferred tools are not sent; our search is a client tool_search with its own schema.
    expect(first?.tools.map((sent) => [sent.type, sent.name ?? null])).toEqual([
      ['function', 'read_file'],
      ['tool_search', null],
    ]);
    expect(first?.tools[1]).toMatchObject({
      type: 'tool_search',
      execution: 'client',
      parameters: { type: 'object', required: ['query'] },
    });
    // The list never changes: what was loaded travels in the history.
    expect(second?.tools).toEqual(first?.tools);
    expect(third?.tools).toEqual(first?.tools);
    const call = second?.input.find((item) => item.type === 'tool_search_call');
    expect(call).toMatchObject({
      call_id: 'call_Search1',
      execution: 'client',
      arguments: { query: 'lock issue', limit: 1 },
    });
    const output = second?.input.find((item) => item.type === 'tool_search_output');
    expect(output).toMatchObject({ call_id: 'call_Search1', execution: 'client' });
    expect(output?.tools).toEqual([
      expect.objectContaining({ type: 'function', name: 'issues_lock', strict: true }),
    ]);
    // The loaded tool's call and result go back as usual.
    expect(third?.input.map((item) => item.type ?? 'message')).toEqual([
      'message',
      'tool_search_call',
      'tool_search_output',
      'function_call',
      'function_call_output',
    ]);
  });

  it('falls back to the client-side list where native deferral is off: same tools run, the list grows', async () => {
    const server = await startWireServer([
      fixtureResponse('responses-search-function-call.sse'),
      fixtureResponse('responses-deferred-call.sse'),
      fixtureResponse('responses-final-text.sse'),
    ]);
    const executed: string[] = [];
    const agent = new Agent({
      provider: openaiAt(server.url, { api: 'responses', nativeToolSearch: false }),
      model: 'gpt-5.4',
      tools: [
        tool('read_file', 'Reads a file.', executed),
        ...deferTools([
          tool('issues_create', 'Create an issue.', executed),
          tool('issues_lock', 'Lock the conversation of an issue.', executed),
        ]),
      ],
    });
    const result = await agent.run('lock issue 7').result;
    expect(result.stopReason).toBe('completed');
    expect(executed).toEqual(['issues_lock']);
    const bodies = server.requests.map((request) => request.json as SentBody);
    expect(bodies[0]?.tools.map((sent) => [sent.type, sent.name])).toEqual([
      ['function', 'read_file'],
      ['function', 'tool_search'],
    ]);
    expect(bodies[1]?.tools.map((sent) => sent.name)).toEqual([
      'read_file',
      'tool_search',
      'issues_lock',
    ]);
    expect(
      bodies.flatMap((body) => body.input).some((item) => item.type === 'tool_search_call'),
    ).toBe(false);
  });
});

describe('when Responses native deferral is on by default', () => {
  it.each([
    ['gpt-5.4', true],
    ['gpt-5.4-mini', true],
    ['gpt-5.10', true],
    ['gpt-6', true],
    ['gpt-5.1', false],
    ['gpt-5', false],
    ['gpt-5-mini', false],
    ['gpt-4.1', false],
    ['o3', false],
    ['gpt-5.4o-fake', false],
  ])('%s → %s', (model, expected) => {
    expect(supportsToolSearch(model)).toBe(expected);
    const openai = createOpenAIProvider({ apiKey: 'k', env: {} });
    expect(openai.defersTools?.(model)).toBe(expected);
  });

  it('never on Chat Completions or another server unless asked', () => {
    expect(
      createOpenAIProvider({ apiKey: 'k', env: {}, api: 'chat' }).defersTools?.('gpt-5.4'),
    ).toBe(false);
    const local = createOpenAIProvider({
      baseURL: 'http://127.0.0.1:1/v1',
      env: {},
      api: 'responses',
    });
    expect(local.defersTools?.('gpt-5.4')).toBe(false);
    const asked = createOpenAIProvider({
      baseURL: 'http://127.0.0.1:1/v1',
      env: {},
      api: 'responses',
      nativeToolSearch: true,
    });
    expect(asked.defersTools?.('anything')).toBe(true);
  });
});
