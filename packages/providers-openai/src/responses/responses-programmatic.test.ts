// OpenAI's programmatic tool calling (Responses API) against a real local server speaking the
// wire format the official SDK types (events hand-written from it): the request offers it and
// lets it call our tools; the calls a program makes run in our loop through the same gate as
// direct calls; the requests that follow carry the program item and the callers while it waits,
// and plain calls once it finished.
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
  SSE_HEADERS,
  sseEvents,
  startWireServer,
} from '@agent/tooling-wire-server';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { collect, openaiAt } from '../test-helpers.js';

afterEach(closeWireServers);

const event = (type: string, data: Record<string, unknown>) => ({
  event: type,
  data: { type, ...data },
});
const response = (status: string, output: unknown[]) => ({
  id: 'resp_ptc',
  object: 'response',
  created_at: 1,
  status,
  model: 'gpt-5',
  output,
  usage: {
    input_tokens: 40,
    output_tokens: 20,
    total_tokens: 60,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens_details: { reasoning_tokens: 0 },
  },
});
const code =
  'const [west, exported] = await Promise.allSettled([tools.query_sales({ region: "West" }), tools.export_report({ path: "sales.csv" })]);\nconst east = await tools.query_sales({ region: "East" });\nreturn { west, east };';
const program = {
  type: 'program',
  id: 'prog_1',
  call_id: 'call_prog_1',
  code,
  fingerprint: 'fp_opaque_4711',
};
const caller = { type: 'program', caller_id: 'call_prog_1' };
const call = (callId: string, name: string, args: Record<string, unknown>) => ({
  type: 'function_call',
  id: `fc_${callId}`,
  call_id: callId,
  name,
  arguments: JSON.stringify(args),
  status: 'completed',
  caller,
});

/** A stream of `items`: each added (calls with their arguments streamed) and done, then completed. */
function stream(items: Record<string, unknown>[]): string[] {
  const events = [event('response.created', { response: response('in_progress', []) })];
  items.forEach((item, index) => {
    if (item.type === 'function_call') {
      events.push(
        event('response.output_item.added', {
          output_index: index,
          item: { ...item, arguments: '', status: 'in_progress' },
        }),
        event('response.function_call_arguments.delta', {
          item_id: item.id,
          output_index: index,
          delta: item.arguments,
        }),
      );
    } else if (item.type === 'program') {
      events.push(
        event('response.output_item.added', { output_index: index, item: { ...item, code: '' } }),
      );
    } else if (item.type === 'message') {
      const text = (item.content as { text: string }[])[0]?.text ?? '';
      events.push(
        event('response.output_item.added', {
          output_index: index,
          item: { ...item, content: [] },
        }),
        event('response.output_text.delta', {
          item_id: item.id,
          output_index: index,
          content_index: 0,
          delta: text,
        }),
      );
    } else events.push(event('response.output_item.added', { output_index: index, item }));
    events.push(event('response.output_item.done', { output_index: index, item }));
  });
  events.push(event('response.completed', { response: response('completed', items) }));
  return sseEvents(events);
}

const message = (text: string) => ({
  type: 'message',
  id: 'msg_ptc',
  status: 'completed',
  role: 'assistant',
  content: [{ type: 'output_text', annotations: [], logprobs: [], text }],
});

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
  it('offers programmatic tool calling and lets it call the tools (or those named)', async () => {
    const server = await startWireServer([{ headers: SSE_HEADERS, body: stream([message('ok')]) }]);
    const request = {
      model: 'gpt-5',
      messages: [userMessage('hi')],
      tools: [definition('a'), definition('b')],
    };
    await collect(
      openaiAt(server.url, { api: 'responses', programmaticToolCalling: true }).stream(request),
    );
    await collect(
      openaiAt(server.url, {
        api: 'responses',
        programmaticToolCalling: { tools: ['b'] },
      }).stream(request),
    );
    await collect(openaiAt(server.url, { api: 'responses' }).stream(request));
    const tools = server.requests.map((sent) =>
      (
        sent.json as { tools: { type: string; name?: string; allowed_callers?: unknown }[] }
      ).tools.map((tool) => [tool.type, tool.name, tool.allowed_callers]),
    );
    expect(tools).toEqual([
      [
        ['function', 'a', ['direct', 'programmatic']],
        ['function', 'b', ['direct', 'programmatic']],
        ['programmatic_tool_calling', undefined, undefined],
      ],
      [
        ['function', 'a', undefined],
        ['function', 'b', ['direct', 'programmatic']],
        ['programmatic_tool_calling', undefined, undefined],
      ],
      [
        ['function', 'a', undefined],
        ['function', 'b', undefined],
      ],
    ]);
  });

  it('the Chat Completions API cannot: a warning, and nothing is sent for it', async () => {
    const warnings: string[] = [];
    openaiAt('http://127.0.0.1:9', {
      api: 'chat',
      programmaticToolCalling: true,
      onWarning: (warning) => warnings.push(warning),
    });
    expect(warnings).toEqual([
      'programmaticToolCalling needs the Responses API (api: "responses"); ignored',
    ]);
  });
});

describe('the stream', () => {
  it("a program's calls are tool calls carrying their caller, and the program on the first", async () => {
    const server = await startWireServer([
      {
        headers: SSE_HEADERS,
        body: stream([
          program,
          call('call_west', 'query_sales', { region: 'West' }),
          call('call_export', 'export_report', { path: 'sales.csv' }),
        ]),
      },
    ]);
    const events = await collect(
      openaiAt(server.url, { api: 'responses', programmaticToolCalling: true }).stream({
        model: 'gpt-5',
        messages: [userMessage('Which region sold most?')],
        tools: [definition('query_sales'), definition('export_report')],
      }),
    );
    expect(
      events.filter((each) => each.type === 'tool-call-start').map((each) => each.name),
    ).toEqual(['query_sales', 'export_report']);
    const done = events.at(-1);
    if (done?.type !== 'done') throw new Error(`expected done, got ${done?.type}`);
    expect(done.message.stopReason).toBe('toolUse');
    const calls = done.message.content.filter(
      (block): block is ToolCallContent => block.type === 'toolCall',
    );
    expect(calls.map((block) => block.providerMetadata)).toEqual([
      { openai: { itemId: 'fc_call_west', caller, program } },
      { openai: { itemId: 'fc_call_export', caller } },
    ]);
  });
});

describe('in the agent loop', () => {
  it("runs a program's calls through the gate; replays program and callers while it waits, plain calls after", async () => {
    const server = await startWireServer([
      {
        headers: SSE_HEADERS,
        body: stream([
          program,
          call('call_west', 'query_sales', { region: 'West' }),
          call('call_export', 'export_report', { path: 'sales.csv' }),
        ]),
      },
      {
        headers: SSE_HEADERS,
        body: stream([call('call_east', 'query_sales', { region: 'East' })]),
      },
      {
        headers: SSE_HEADERS,
        body: stream([
          {
            type: 'program_output',
            id: 'progout_1',
            call_id: 'call_prog_1',
            result: '{"west":120,"east":95}',
            status: 'completed',
          },
          message('West had the highest revenue (120).'),
        ]),
      },
      { headers: SSE_HEADERS, body: stream([message('You are welcome.')]) },
    ]);
    const started: string[] = [];
    const agent = new Agent({
      provider: openaiAt(server.url, { api: 'responses', programmaticToolCalling: true }),
      model: 'gpt-5',
      tools: [querySales, exportReport],
      // Read-only: the program's export_report is refused exactly as a direct call would be.
      permissionGate: createPermissionGate({ mode: 'read-only' }),
      onEvent: (agentEvent: AgentEvent) => {
        if (agentEvent.type === 'tool-execution-start') started.push(agentEvent.toolName);
      },
    });
    const result = await agent.run('Which region sold most?').result;
    expect(result.stopReason).toBe('completed');
    expect(result.finalMessage?.content).toEqual([
      { type: 'text', text: 'West had the highest revenue (120).' },
    ]);
    expect(started).toEqual(['query_sales', 'query_sales']);

    type Item = { type?: string; call_id?: string; caller?: unknown; output?: unknown };
    const inputs = server.requests.map((sent) => (sent.json as { input: Item[] }).input);
    const summary = (items: Item[]) =>
      items.map((item) =>
        item.type === undefined
          ? 'message'
          : `${item.type}${item.caller === undefined ? '' : '+caller'}`,
      );
    // While the program waits: its item before its first call, the callers on calls and outputs.
    expect(summary(inputs[1] ?? [])).toEqual([
      'message',
      'program',
      'function_call+caller',
      'function_call+caller',
      'function_call_output+caller',
      'function_call_output+caller',
    ]);
    expect(inputs[1]?.[1]).toEqual(program);
    expect(inputs[1]?.[5]).toMatchObject({
      call_id: 'call_export',
      caller,
      output: expect.stringMatching(/denied/i),
    });
    expect(summary(inputs[2] ?? [])).toEqual([
      'message',
      'program',
      'function_call+caller',
      'function_call+caller',
      'function_call_output+caller',
      'function_call_output+caller',
      'function_call+caller',
      'function_call_output+caller',
    ]);
    // The program finished: a later turn replays its calls as direct ones, without its item.
    await agent.run('Thanks.').result;
    const later = (server.requests[3]?.json as { input: Item[] } | undefined)?.input ?? [];
    expect(summary(later)).toEqual([
      'message',
      'function_call',
      'function_call',
      'function_call_output',
      'function_call_output',
      'function_call',
      'function_call_output',
      'message',
      'message',
    ]);
  });
});
