// Through the real Agents SDK: `run()` with its Chat Completions model and the official `openai`
// client, against a local server on 127.0.0.1 port 0 that answers as the Chat Completions API.
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type AgentEvent,
  defineTool,
  PermissionPolicy,
  type PermissionPolicyOptions,
  type PermissionRequest,
} from '@agent/core';
import {
  closeWireServers,
  JSON_HEADERS,
  startWireServer,
  type WireResponse,
} from '@agent/tooling-wire-server';
import { createBashTool } from '@agent/tools-builtin';
import { Agent, OpenAIChatCompletionsModel, run, setTracingDisabled } from '@openai/agents';
import OpenAI from 'openai';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import {
  type OpenAIAgentsToolsOptions,
  toOpenAIAgentsTool,
  toOpenAIAgentsTools,
} from './openai-agents-tools.js';

beforeAll(() => setTracingDisabled(true));
afterEach(closeWireServers);

type Call = { id: string; name: string; arguments: unknown };

/** A Chat Completions answer: tool calls, or the final text. */
function completion(answer: { text?: string; calls?: Call[] }): WireResponse {
  const calls = answer.calls ?? [];
  return {
    status: 200,
    headers: JSON_HEADERS,
    body: JSON.stringify({
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1_764_000_000,
      model: 'gpt-4o',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: answer.text ?? null,
            refusal: null,
            ...(calls.length === 0
              ? {}
              : {
                  tool_calls: calls.map((call) => ({
                    id: call.id,
                    type: 'function',
                    function: { name: call.name, arguments: JSON.stringify(call.arguments) },
                  })),
                }),
          },
          finish_reason: calls.length === 0 ? 'stop' : 'tool_calls',
          logprobs: null,
        },
      ],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    }),
  };
}

function weatherTool() {
  const calls: unknown[] = [];
  const tool = defineTool({
    name: 'get_weather',
    description: 'Current weather for a city',
    input: z.object({ city: z.string() }),
    permissionSubjects: ({ city }) => [city],
    execute: async (args) => {
      calls.push(args);
      return `${args.city}: 18°C, sunny`;
    },
  });
  return { tool, calls };
}

async function agentAt(
  answers: WireResponse[],
  tools: Parameters<typeof toOpenAIAgentsTools>[0],
  options: OpenAIAgentsToolsOptions = {},
) {
  const server = await startWireServer(answers);
  const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'sk-test', maxRetries: 0 });
  const agent = new Agent({
    name: 'assistant',
    instructions: 'Answer briefly.',
    model: new OpenAIChatCompletionsModel(client, 'gpt-4o'),
    tools: toOpenAIAgentsTools(tools, options),
  });
  return { server, agent };
}

/** The tool messages the model got on its `index`-th request. */
function toolMessages(server: { requests: { json: unknown }[] }, index: number) {
  const body = server.requests[index]?.json as { messages?: { role: string; content: unknown }[] };
  return (body?.messages ?? []).filter((message) => message.role === 'tool');
}

describe('toOpenAIAgentsTools in run()', () => {
  it('the model calls our tool; its text goes back as the tool message', async () => {
    const { tool, calls } = weatherTool();
    const { server, agent } = await agentAt(
      [
        completion({
          calls: [{ id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } }],
        }),
        completion({ text: 'Sunny in Paris.' }),
      ],
      [tool],
    );
    const result = await run(agent, 'Weather in Paris?');
    expect(result.finalOutput).toBe('Sunny in Paris.');
    expect(calls).toEqual([{ city: 'Paris' }]);
    expect(toolMessages(server, 1)).toEqual([
      { role: 'tool', tool_call_id: 'call_1', content: 'Paris: 18°C, sunny' },
    ]);
    const sent = server.requests[0]?.json as {
      tools: { function: { name: string; parameters: unknown } }[];
    };
    expect(sent.tools[0]?.function).toMatchObject({
      name: 'get_weather',
      parameters: tool.parameters,
    });
  });

  it.each([
    ['a wrong type', { city: 42 }, 'Invalid arguments: at "city"'],
    ['a missing field', {}, 'Invalid arguments: at "city"'],
  ])('%s is refused by our validation; the model reads why', async (_label, args, reason) => {
    const { tool, calls } = weatherTool();
    const { server, agent } = await agentAt(
      [
        completion({ calls: [{ id: 'call_1', name: 'get_weather', arguments: args }] }),
        completion({ text: 'Sorry.' }),
      ],
      [tool],
    );
    await run(agent, 'x');
    expect(calls).toEqual([]);
    expect(String(toolMessages(server, 1)[0]?.content)).toContain(reason);
  });
});

describe('toOpenAIAgentsTools: tool names', () => {
  it.each([
    ['a dot', ['get.weather']],
    ['a space', ['get weather']],
    ['a slash', ['tools/get_weather']],
    ['letters outside ASCII', ['météo']],
    ['65 characters', ['w'.repeat(65)]],
    ['an empty name', ['']],
    ['one of two that a framework would make alike', ['get_weather', 'get.weather']],
  ])(
    'a hand-made tool whose name the providers refuse (%s) is refused up front',
    (_label, names) => {
      const { tool } = weatherTool();
      const tools = names.map((name) => ({ ...tool, name }));
      const bad = names.find((name) => !/^[a-zA-Z0-9_-]{1,64}$/.test(name)) ?? '';
      expect(() => toOpenAIAgentsTools(tools)).toThrow(`invalid tool name ${JSON.stringify(bad)}`);
      expect(() => toOpenAIAgentsTool({ ...tool, name: bad })).toThrow('invalid tool name');
      // 64 characters of the allowed ones pass.
      expect(() => toOpenAIAgentsTools([{ ...tool, name: 'w'.repeat(64) }])).not.toThrow();
    },
  );
});

describe('toOpenAIAgentsTools: the permission gate', () => {
  it.each([
    ['a deny rule', { deny: ['get_weather(Paris)'] }, 'Denied by rule "get_weather(Paris)"'],
    ['a disabled tool', { disabledTools: ['get_weather'] }, 'Tool "get_weather" is disabled'],
    ['an ask with nobody to ask', {}, 'needs approval; no approver configured'],
  ] as const)(
    '%s: the Agents SDK error result, the tool never runs',
    async (_label, rules, reason) => {
      const { tool, calls } = weatherTool();
      const { server, agent } = await agentAt(
        [
          completion({
            calls: [{ id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } }],
          }),
          completion({ text: 'Denied.' }),
        ],
        [tool],
        {
          permissions: new PermissionPolicy(rules as PermissionPolicyOptions),
          approvals: 'approver',
        },
      );
      const result = await run(agent, 'x');
      expect(calls).toEqual([]);
      expect(result.finalOutput).toBe('Denied.');
      // The Agents SDK's error path (the tool threw; its errorFunction gave the output) with our reason.
      const [message] = toolMessages(server, 1);
      expect(message).toMatchObject({ tool_call_id: 'call_1' });
      expect(message?.content).toMatch(/^Permission denied: /);
      expect(message?.content).toContain(reason);
    },
  );

  it('an ask becomes the Agents SDK approval: an interruption; approved, the call runs', async () => {
    const { tool, calls } = weatherTool();
    const { agent } = await agentAt(
      [
        completion({
          calls: [{ id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } }],
        }),
        completion({ text: 'Sunny in Paris.' }),
      ],
      [tool],
      { permissions: new PermissionPolicy({}) },
    );
    const first = await run(agent, 'Weather in Paris?');
    expect(calls).toEqual([]);
    expect(first.interruptions).toHaveLength(1);
    const [interruption] = first.interruptions;
    if (interruption === undefined) throw new Error('no interruption');
    expect(interruption.name).toBe('get_weather');
    first.state.approve(interruption);
    const second = await run(agent, first.state);
    expect(calls).toEqual([{ city: 'Paris' }]);
    expect(second.finalOutput).toBe('Sunny in Paris.');
  });

  it('an ask rejected in the Agents SDK never runs', async () => {
    const { tool, calls } = weatherTool();
    const { server, agent } = await agentAt(
      [
        completion({
          calls: [{ id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } }],
        }),
        completion({ text: 'OK, not then.' }),
      ],
      [tool],
      { permissions: new PermissionPolicy({}) },
    );
    const first = await run(agent, 'Weather?');
    const [interruption] = first.interruptions;
    if (interruption === undefined) throw new Error('no interruption');
    first.state.reject(interruption);
    const second = await run(agent, first.state);
    expect(calls).toEqual([]);
    expect(second.finalOutput).toBe('OK, not then.');
    expect(String(toolMessages(server, 1)[0]?.content)).toMatch(/not approved|rejected/i);
  });

  it('with approvals: approver, an ask reaches our approver with the call id', async () => {
    const { tool, calls } = weatherTool();
    const asked: PermissionRequest[] = [];
    const policy = new PermissionPolicy({
      approver: (request) => {
        asked.push(request);
        return 'once';
      },
    });
    const { agent } = await agentAt(
      [
        completion({ calls: [{ id: 'call_7', name: 'get_weather', arguments: { city: 'Oslo' } }] }),
        completion({ text: 'ok' }),
      ],
      [tool],
      { permissions: policy, approvals: 'approver' },
    );
    const result = await run(agent, 'x');
    expect(result.interruptions).toEqual([]);
    expect(asked.map(({ toolCallId, args, subjects }) => ({ toolCallId, args, subjects }))).toEqual(
      [{ toolCallId: 'call_7', args: { city: 'Oslo' }, subjects: ['Oslo'] }],
    );
    expect(calls).toEqual([{ city: 'Oslo' }]);
  });
});

describe('toOpenAIAgentsTools: the result budget and abort', () => {
  it('the model gets the text clipped to maxResultChars', async () => {
    const big = defineTool({
      name: 'big',
      description: 'A long output',
      input: z.object({}),
      policy: { maxResultChars: 100 },
      execute: async () => `${'a'.repeat(3000)}${'z'.repeat(1000)}`,
    });
    const { server, agent } = await agentAt(
      [
        completion({ calls: [{ id: 'c', name: 'big', arguments: {} }] }),
        completion({ text: 'ok' }),
      ],
      [big],
    );
    await run(agent, 'x');
    expect(toolMessages(server, 1)[0]?.content).toBe(
      `${'a'.repeat(75)}\n[… 3900 of 4000 characters clipped …]\n${'z'.repeat(25)}`,
    );
  });

  it("aborting the run's signal stops a running bash (its process is gone)", async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'openai-agents-bash-'));
    const marker = `${process.pid}${Date.now() % 100000}`;
    const controller = new AbortController();
    let ended: (event: AgentEvent) => void = () => {};
    const end = new Promise<AgentEvent>((resolve) => {
      ended = resolve;
    });
    try {
      const { agent } = await agentAt(
        [
          completion({
            calls: [{ id: 'c', name: 'bash', arguments: { command: `sleep 3${marker}` } }],
          }),
          completion({ text: 'done' }),
        ],
        [createBashTool({ cwd, killGraceMs: 200 })],
        {
          onEvent: (event) => {
            if (event.type === 'tool-execution-end') ended(event);
          },
        },
      );
      const running = run(agent, 'x', { signal: controller.signal }).catch(
        (error: unknown) => error,
      );
      await expect.poll(() => sleepers(marker), { timeout: 20_000 }).toBe(1);
      controller.abort();
      expect(await end).toMatchObject({
        type: 'tool-execution-end',
        isError: true,
        result: { content: [{ type: 'text', text: 'Cancelled' }] },
      });
      await running;
      expect(await sleepers(marker)).toBe(0);
    } finally {
      await rm(cwd, { recursive: true, force: true });
    }
  });
});

/** Processes whose command line is `sleep 3<marker>` (the bash call's own child). */
async function sleepers(marker: string): Promise<number> {
  let count = 0;
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if ((await readFile(`/proc/${entry}/cmdline`, 'utf8')) === `sleep\u00003${marker}\u0000`)
        count++;
    } catch {
      // The process ended while we looked.
    }
  }
  return count;
}
