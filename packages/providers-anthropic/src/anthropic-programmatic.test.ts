// Anthropic's programmatic tool calling against a local server speaking the documented wire format
// (fixtures hand-written from it): the request offers code execution and lets it call our tools;
// the calls Claude's code makes run in our loop through the same gate as direct calls; the
// requests that follow carry the code's block, the callers and the container while the code
// waits, and plain calls once it finished.
import {
  Agent,
  type AgentEvent,
  createPermissionGate,
  defineTool,
  type ToolCallContent,
  userMessage,
} from '@agent/core';
import {
  closeWireServers,
  collectEvents,
  fixtureReader,
  SSE_HEADERS,
  startWireServer,
} from '@agent/tooling-wire-server';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { createAnthropicProvider } from './anthropic-provider.js';
import { buildAnthropicParams } from './anthropic-request.js';

const fixture = fixtureReader(new URL('./__fixtures__/', import.meta.url));
afterEach(closeWireServers);

const caller = { type: 'code_execution_20260120', tool_id: 'srvtoolu_01Code' };
const containerId = 'container_011CPR5CNjB747bApnWAkjnS';
const code =
  'import asyncio\nwest, export = await asyncio.gather(query_sales(region="West"), export_report(path="sales.csv"), return_exceptions=True)\nif isinstance(export, Exception):\n    print("export failed:", export)\neast = await query_sales(region="East")\nprint({"West": west, "East": east})';
const serverToolUse = {
  type: 'server_tool_use',
  id: 'srvtoolu_01Code',
  name: 'code_execution',
  input: { code },
  caller: { type: 'direct' },
};

const querySales = defineTool({
  name: 'query_sales',
  description: 'Revenue of one region.',
  input: z.object({ region: z.string() }),
  policy: { permission: 'read-only' },
  execute: async ({ region }) => String(region === 'West' ? 120 : 95),
});
const exportReport = defineTool({
  name: 'export_report',
  description: 'Writes the report to a file.',
  input: z.object({ path: z.string() }),
  policy: { permission: 'workspace-write' },
  execute: async () => 'written',
});

const definition = (name: string) => ({
  name,
  description: `${name} tool`,
  parameters: { type: 'object' as const, properties: {} },
});

describe('the request', () => {
  it('offers code execution and lets it call the tools, still directly callable', () => {
    const params = buildAnthropicParams(
      {
        model: 'claude-sonnet-4-6',
        messages: [userMessage('hi')],
        tools: [definition('a'), definition('b')],
        hostedTools: [{ type: 'web_search' }],
      },
      'anthropic',
      { programmaticToolCalling: true },
    );
    expect(params.tools).toEqual([
      { ...toolParam('a'), allowed_callers: ['direct', 'code_execution_20260120'] },
      { ...toolParam('b'), allowed_callers: ['direct', 'code_execution_20260120'] },
      { type: 'web_search_20250305', name: 'web_search' },
      { type: 'code_execution_20260120', name: 'code_execution' },
    ]);
    expect(params.container).toBeUndefined();
  });

  it('only the tools named, with the version asked for; off: nothing changes', () => {
    const request = {
      model: 'claude-sonnet-4-5',
      messages: [userMessage('hi')],
      tools: [definition('a'), definition('b')],
    };
    const named = buildAnthropicParams(request, 'anthropic', {
      programmaticToolCalling: { tools: ['b'], version: 'code_execution_20250825' },
    });
    expect(named.tools).toEqual([
      toolParam('a'),
      { ...toolParam('b'), allowed_callers: ['direct', 'code_execution_20250825'] },
      { type: 'code_execution_20250825', name: 'code_execution' },
    ]);
    expect(buildAnthropicParams(request, 'anthropic', {}).tools).toEqual([
      toolParam('a'),
      toolParam('b'),
    ]);
  });
});

function toolParam(name: string) {
  return {
    name,
    description: `${name} tool`,
    input_schema: { type: 'object', properties: {} },
  };
}

describe('the stream', () => {
  it('calls made by code are tool calls carrying their caller, the code and the container', async () => {
    const server = await startWireServer([
      { headers: SSE_HEADERS, body: fixture('programmatic-calls.sse') },
    ]);
    const provider = createAnthropicProvider({
      apiKey: 'k',
      baseURL: server.url,
      programmaticToolCalling: true,
    });
    const events = await collectEvents(
      provider.stream({
        model: 'claude-sonnet-4-6',
        messages: [userMessage('Which region sold most?')],
        tools: [definition('query_sales'), definition('export_report')],
      }),
    );
    // The code's own block is no tool call: the loop never tries to run it.
    expect(
      events.filter((event) => event.type === 'tool-call-start').map((event) => event.name),
    ).toEqual(['query_sales', 'export_report']);
    const done = events.at(-1);
    if (done?.type !== 'done') throw new Error(`expected done, got ${done?.type}`);
    expect(done.message.stopReason).toBe('toolUse');
    const calls = done.message.content.filter(
      (block): block is ToolCallContent => block.type === 'toolCall',
    );
    expect(calls).toEqual([
      {
        type: 'toolCall',
        id: 'toolu_01West',
        name: 'query_sales',
        arguments: '{"region": "West"}',
        providerMetadata: {
          anthropic: { caller, serverToolUse, container: containerId },
        },
      },
      {
        type: 'toolCall',
        id: 'toolu_01Export',
        name: 'export_report',
        arguments: '{"path": "sales.csv"}',
        // The code's block goes once, before the first call it made.
        providerMetadata: { anthropic: { caller, container: containerId } },
      },
    ]);
  });
});

describe('in the agent loop', () => {
  it('runs the code’s calls through the gate; replays code and callers while it waits, plain calls after', async () => {
    const server = await startWireServer([
      { headers: SSE_HEADERS, body: fixture('programmatic-calls.sse') },
      { headers: SSE_HEADERS, body: fixture('programmatic-more.sse') },
      { headers: SSE_HEADERS, body: fixture('programmatic-done.sse') },
      { headers: SSE_HEADERS, body: fixture('final-text.sse') },
    ]);
    const started: string[] = [];
    const agent = new Agent({
      provider: createAnthropicProvider({
        apiKey: 'k',
        baseURL: server.url,
        programmaticToolCalling: true,
      }),
      model: 'claude-sonnet-4-6',
      tools: [querySales, exportReport],
      // Read-only: the code's export_report is refused exactly as a direct call would be.
      permissionGate: createPermissionGate({ mode: 'read-only' }),
      onEvent: (event: AgentEvent) => {
        if (event.type === 'tool-execution-start') started.push(event.toolName);
      },
    });
    const result = await agent.run('Which region sold most?').result;
    expect(result.stopReason).toBe('completed');
    // The code's result is kept (opaque, as sent), but never replayed: its calls are.
    expect(result.finalMessage?.content).toEqual([
      {
        type: 'opaque',
        provider: 'anthropic',
        data: expect.objectContaining({
          type: 'code_execution_tool_result',
          tool_use_id: 'srvtoolu_01Code',
        }),
      },
      { type: 'text', text: 'West had the highest revenue (120).' },
    ]);
    expect(started).toEqual(['query_sales', 'query_sales']);

    const requests = server.requests.map(
      (request) =>
        request.json as { messages: { role: string; content: unknown[] }[]; container?: unknown },
    );
    expect(requests[0]?.container).toBeUndefined();
    // While the code waits: its block and the callers go back, results alone in their message,
    // and the container is named.
    const firstTurn = {
      role: 'assistant',
      content: [
        { type: 'text', text: "I'll query both regions in one script." },
        serverToolUse,
        {
          type: 'tool_use',
          id: 'toolu_01West',
          name: 'query_sales',
          input: { region: 'West' },
          caller,
        },
        {
          type: 'tool_use',
          id: 'toolu_01Export',
          name: 'export_report',
          input: { path: 'sales.csv' },
          caller,
        },
      ],
    };
    expect(requests[1]?.container).toBe(containerId);
    expect(requests[1]?.messages.slice(1)).toEqual([
      firstTurn,
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'toolu_01West',
            content: [{ type: 'text', text: '120' }],
          },
          {
            type: 'tool_result',
            tool_use_id: 'toolu_01Export',
            content: [{ type: 'text', text: expect.stringMatching(/denied/i) }],
            is_error: true,
          },
        ],
      },
    ]);
    expect(requests[2]?.container).toBe(containerId);
    expect(requests[2]?.messages.slice(1, 4)).toEqual([
      firstTurn,
      expect.objectContaining({ role: 'user' }),
      {
        role: 'assistant',
        content: [
          {
            type: 'tool_use',
            id: 'toolu_01East',
            name: 'query_sales',
            input: { region: 'East' },
            caller,
          },
        ],
      },
    ]);

    // The code finished: a later turn replays its calls as direct ones, with no container.
    await agent.run('Thanks.').result;
    const later = server.requests[3]?.json as {
      messages: { role: string; content: { type: string; caller?: unknown }[] }[];
      container?: unknown;
    };
    expect(later.container).toBeUndefined();
    const blocks = later.messages.flatMap((message) => message.content);
    expect(
      blocks.some((block) =>
        ['server_tool_use', 'code_execution_tool_result'].includes(block.type),
      ),
    ).toBe(false);
    expect(blocks.filter((block) => block.type === 'tool_use')).toEqual([
      { type: 'tool_use', id: 'toolu_01West', name: 'query_sales', input: { region: 'West' } },
      {
        type: 'tool_use',
        id: 'toolu_01Export',
        name: 'export_report',
        input: { path: 'sales.csv' },
      },
      { type: 'tool_use', id: 'toolu_01East', name: 'query_sales', input: { region: 'East' } },
    ]);
  });
});
