// A RunState is the caller's to keep — serialized, stored, sent to a browser and back — and the
// Agents SDK asks the tool's needsApproval again when a run resumes from one. An approval our
// runner remembers stays bound to the call it was asked about: arguments edited in the state
// after the question, or a state from another process, go to our own approver.
import { defineTool, PermissionPolicy, type PermissionPolicyOptions } from '@agent/core';
import {
  closeWireServers,
  JSON_HEADERS,
  startWireServer,
  type WireResponse,
} from '@agent/tooling-wire-server';
import {
  Agent,
  OpenAIChatCompletionsModel,
  RunContext,
  RunState,
  run,
  setTracingDisabled,
} from '@openai/agents';
import OpenAI from 'openai';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { toOpenAIAgentsTools } from './openai-agents-tools.js';

beforeAll(() => setTracingDisabled(true));
afterEach(closeWireServers);

/** A Chat Completions answer: one call of get_weather, or the final text. */
function completion(answer: { city?: string; text?: string; id?: string }): WireResponse {
  const call =
    answer.city === undefined
      ? {}
      : {
          tool_calls: [
            {
              id: answer.id ?? 'call_1',
              type: 'function',
              function: { name: 'get_weather', arguments: JSON.stringify({ city: answer.city }) },
            },
          ],
        };
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
          message: { role: 'assistant', content: answer.text ?? null, refusal: null, ...call },
          finish_reason: answer.city === undefined ? 'stop' : 'tool_calls',
          logprobs: null,
        },
      ],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    }),
  };
}

async function setUp(answers = [completion({ city: 'Paris' }), completion({ text: 'ok' })]) {
  const calls: unknown[] = [];
  const tool = defineTool({
    name: 'get_weather',
    description: 'Current weather for a city',
    input: z.object({ city: z.string() }),
    permissionSubjects: ({ city }) => [city],
    execute: async (args) => {
      calls.push(args);
      return `${args.city}: sunny`;
    },
  });
  const server = await startWireServer(answers);
  const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'sk-test', maxRetries: 0 });
  const agentWith = (rules: PermissionPolicyOptions) =>
    new Agent({
      name: 'assistant',
      instructions: 'Answer briefly.',
      model: new OpenAIChatCompletionsModel(client, 'gpt-4o'),
      tools: toOpenAIAgentsTools([tool], { permissions: new PermissionPolicy(rules) }),
    });
  /** What the model read as the call's result on its second request. */
  const toolMessage = () => {
    const body = server.requests[1]?.json as { messages?: { role: string; content: unknown }[] };
    return String(body?.messages?.find((message) => message.role === 'tool')?.content);
  };
  return { calls, agentWith, toolMessage };
}

describe('toOpenAIAgentsTools: an approval stays bound to the call it answered', () => {
  it('approved, serialized and resumed in the same process: the call runs', async () => {
    const { calls, agentWith } = await setUp();
    const agent = agentWith({});
    const first = await run(agent, 'Weather?');
    const [interruption] = first.interruptions;
    if (interruption === undefined) throw new Error('no interruption');
    first.state.approve(interruption);
    const state = await RunState.fromString(agent, first.state.toString());
    const second = await run(agent, state);
    expect(calls).toEqual([{ city: 'Paris' }]);
    expect(second.finalOutput).toBe('ok');
  });

  it.each([
    ['another city', 'Rome'],
    ['a path', '../../etc/passwd'],
    ['a command', '$(rm -rf ~)'],
  ])(
    'arguments edited in the serialized state after approval (%s) never run',
    async (_label, city) => {
      const { calls, agentWith, toolMessage } = await setUp();
      const agent = agentWith({});
      const first = await run(agent, 'Weather?');
      const [interruption] = first.interruptions;
      if (interruption === undefined) throw new Error('no interruption');
      first.state.approve(interruption);
      const saved = first.state.toString();
      const edited = saved.replaceAll(
        JSON.stringify(JSON.stringify({ city: 'Paris' })).slice(1, -1),
        JSON.stringify(JSON.stringify({ city })).slice(1, -1),
      );
      expect(edited).not.toBe(saved);
      await run(agent, await RunState.fromString(agent, edited));
      expect(calls).toEqual([]);
      expect(toolMessage()).toContain('Permission denied');
    },
  );

  it('a state approved in another process (a new adapter) goes to our approver', async () => {
    const { calls, agentWith } = await setUp();
    const first = await run(agentWith({}), 'Weather?');
    const [interruption] = first.interruptions;
    if (interruption === undefined) throw new Error('no interruption');
    first.state.approve(interruption);
    const asked: unknown[] = [];
    const fresh = agentWith({
      approver: (request) => {
        asked.push(request.args);
        return 'once';
      },
    });
    await run(fresh, await RunState.fromString(fresh, first.state.toString()));
    expect(asked).toEqual([{ city: 'Paris' }]);
    expect(calls).toEqual([{ city: 'Paris' }]);
  });

  it('a state approved in another process with nobody to ask never runs', async () => {
    const { calls, agentWith, toolMessage } = await setUp();
    const first = await run(agentWith({}), 'Weather?');
    const [interruption] = first.interruptions;
    if (interruption === undefined) throw new Error('no interruption');
    first.state.approve(interruption);
    const fresh = agentWith({});
    await run(fresh, await RunState.fromString(fresh, first.state.toString()));
    expect(calls).toEqual([]);
    expect(toolMessage()).toContain('no approver configured');
  });

  it('“always approve” in the Agents SDK does not approve the next call with other arguments', async () => {
    const { calls, agentWith } = await setUp([
      completion({ city: 'Paris' }),
      completion({ city: 'Rome', id: 'call_2' }),
      completion({ text: 'ok' }),
    ]);
    const asked: unknown[] = [];
    const agent = agentWith({
      approver: (request) => {
        asked.push(request.args);
        return 'deny';
      },
    });
    const first = await run(agent, 'Weather?');
    const [interruption] = first.interruptions;
    if (interruption === undefined) throw new Error('no interruption');
    first.state.approve(interruption, { alwaysApprove: true });
    await run(agent, first.state);
    // Paris as approved; Rome is our policy's question, and our approver said no.
    expect(calls).toEqual([{ city: 'Paris' }]);
    expect(asked).toEqual([{ city: 'Rome' }]);
  });

  it('answered twice (approved, then rejected): the last answer stands, nothing runs', async () => {
    const { calls, agentWith } = await setUp();
    const agent = agentWith({});
    const first = await run(agent, 'Weather?');
    const [interruption] = first.interruptions;
    if (interruption === undefined) throw new Error('no interruption');
    first.state.approve(interruption);
    first.state.reject(interruption);
    await run(agent, first.state);
    expect(calls).toEqual([]);
  });
});

describe('toOpenAIAgentsTools: two runs sharing one set of tools', () => {
  /**
   * Run A (its `aContext`) waits for its user's answer on call_1. The state that approves it
   * turns up in another session — leaked, or made up with the same call id and arguments — and
   * the server resumes it there with that session's own context (`bContext`).
   */
  async function crossed(options: {
    aContext: Record<string, string>;
    bContext: Record<string, string> | undefined;
    conversation?: (context: Record<string, string>) => string;
  }) {
    const calls: unknown[] = [];
    const asked: string[] = [];
    const tool = defineTool({
      name: 'get_weather',
      description: 'Current weather for a city',
      input: z.object({ city: z.string() }),
      permissionSubjects: ({ city }) => [city],
      execute: async (args) => {
        calls.push(args);
        return `${args.city}: sunny`;
      },
    });
    const server = await startWireServer([
      completion({ city: 'Paris' }),
      completion({ text: 'ok' }),
    ]);
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'sk-test', maxRetries: 0 });
    const agent = new Agent({
      name: 'assistant',
      instructions: 'Answer briefly.',
      model: new OpenAIChatCompletionsModel(client, 'gpt-4o'),
      tools: toOpenAIAgentsTools([tool], {
        permissions: new PermissionPolicy({
          approver: (request) => {
            asked.push(request.toolCallId);
            return 'deny';
          },
        }),
        ...(options.conversation === undefined
          ? {}
          : {
              conversation: (runContext) =>
                options.conversation?.(runContext.context as Record<string, string>) ?? '',
            }),
      }),
    });
    const a = await run(agent, 'Weather in Paris?', { context: options.aContext });
    const [interruption] = a.interruptions;
    if (interruption === undefined) throw new Error('no interruption in A');
    a.state.approve(interruption);
    const state = await RunState.fromStringWithContext(
      agent,
      a.state.toString(),
      new RunContext(options.bContext),
    );
    await run(agent, state);
    return { calls, asked };
  }

  it.each([
    ['another context', { aContext: { user: 'a' }, bContext: { user: 'b' } }],
    ['no context', { aContext: { user: 'a' }, bContext: undefined }],
    [
      'a conversation the caller names (the contexts alike but for it)',
      {
        aContext: { user: 'a', session: 's1' },
        bContext: { user: 'a', session: 's2' },
        conversation: (context: Record<string, string>) => context.session ?? '',
      },
    ],
  ])(
    "A's open question does not let B's approved call through (%s): our approver decides (before: ran)",
    async (_label, options) => {
      const { calls, asked } = await crossed(options);
      expect(calls).toEqual([]);
      expect(asked).toEqual(['call_1']);
    },
  );

  it('resumed in its own conversation, the approved call runs unasked', async () => {
    const { calls, asked } = await crossed({ aContext: { user: 'a' }, bContext: { user: 'a' } });
    expect(calls).toEqual([{ city: 'Paris' }]);
    expect(asked).toEqual([]);
  });
});
