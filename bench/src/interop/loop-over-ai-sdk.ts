// Our loop over an AI SDK model against our loop over our own provider, on the same local
// Chat Completions wire server: `fromAiSdkModel(@ai-sdk/openai-compatible)` vs `@agent/providers-openai`.

import { fromAiSdkModel } from '@agent/ai-sdk';
import { Agent, type Provider } from '@agent/core';
import { createOpenAIProvider } from '@agent/providers-openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import {
  sseEvents,
  startWireServer,
  type WireServer,
} from '../../../tooling/wire-server/src/index.js';
import { chunks } from '../loop-overhead/workload.js';
import { checkCalls, finalText, interopScript, ourNoopTool, probe } from './workload.js';

/** Model calls per run: this many tool-calling turns (8 calls each), then the answer. */
export const wireTurns = 10;
const script = interopScript.slice(0, wireTurns);

function chunk(delta: Record<string, unknown>, finish: string | null = null) {
  return {
    data: {
      id: 'chatcmpl-bench',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'gpt-4o-mini',
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      usage: null,
    },
  };
}

const usage = {
  data: {
    id: 'chatcmpl-bench',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'gpt-4o-mini',
    choices: [],
    usage: { prompt_tokens: 12, completion_tokens: 40, total_tokens: 52 },
  },
};

/** The SSE body of turn `turn`: 8 streamed tool calls, or (past the script) the final text. */
function turnBody(turn: number): string[] {
  const calls = script[turn];
  if (calls === undefined) {
    return sseEvents([
      chunk({ role: 'assistant', content: '' }),
      ...chunks(finalText).map((delta) => chunk({ content: delta })),
      chunk({}, 'stop'),
      usage,
      { data: '[DONE]' },
    ]);
  }
  const events = [chunk({ role: 'assistant', content: null })];
  calls.forEach((call, index) => {
    events.push(
      chunk({
        tool_calls: [
          { index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } },
        ],
      }),
    );
    for (const delta of chunks(call.arguments))
      events.push(chunk({ tool_calls: [{ index, function: { arguments: delta } }] }));
  });
  return sseEvents([...events, chunk({}, 'tool_calls'), usage, { data: '[DONE]' }]);
}

const bodies = Array.from({ length: wireTurns + 1 }, (_, turn) => turnBody(turn));

/** A wire server answering each request by how many tool results it already carries. */
export function startChatServer(): Promise<WireServer> {
  return startWireServer((request) => {
    const messages =
      (request.json as { messages?: { role: string }[] } | undefined)?.messages ?? [];
    const turn = messages.filter((message) => message.role === 'tool').length / 8;
    return {
      status: 200,
      headers: { 'content-type': 'text/event-stream' },
      body: bodies[turn] ?? bodies[wireTurns] ?? [],
    };
  });
}

export function providersAt(url: string): { native: Provider; aiSdk: Provider } {
  const baseURL = `${url}/v1`;
  return {
    native: createOpenAIProvider({
      apiKey: 'sk-bench',
      baseURL,
      compat: { streamUsage: true },
      clientOptions: { logLevel: 'off' },
      env: {},
    }),
    aiSdk: fromAiSdkModel(
      createOpenAICompatible({
        name: 'local',
        baseURL,
        apiKey: 'sk-bench',
        includeUsage: true,
      }).chatModel('gpt-4o-mini'),
    ),
  };
}

const tool = ourNoopTool();

/** One run of our loop: `wireTurns` turns of 8 calls over the wire, then the answer. */
export async function loopRun(provider: Provider, label: string): Promise<void> {
  probe.reset();
  const agent = new Agent({ provider, model: 'gpt-4o-mini', tools: [tool] });
  const result = await agent.run('Run the no-op tool.').result;
  if (result.stopReason !== 'completed')
    throw new Error(`${label}: ${result.stopReason} ${result.error ?? ''}`);
  checkCalls(label, script.length * 8);
  const last = result.finalMessage?.content.find((block) => block.type === 'text');
  if (last?.type !== 'text' || last.text !== finalText) throw new Error(`${label}: final text`);
}
