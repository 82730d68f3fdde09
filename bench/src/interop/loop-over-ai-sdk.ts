// Our loop over an AI SDK model against our loop over our own provider, on the same local
// Chat Completions wire server: `fromAiSdkModel(@ai-sdk/openai-compatible)` vs `@agent/providers-openai`;
// and, as a reference, the AI SDK's own `streamText` loop over the same model and server.
// Both sides receive the same bytes in the same chunks and send the same request bodies.

import { fromAiSdkModel } from '@agent/ai-sdk';
import { Agent, type Provider } from '@agent/core';
import { createOpenAIProvider } from '@agent/providers-openai';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { tool as aiSdkTool, isStepCount, streamText } from 'ai';
import {
  sseEvents,
  startWireServer,
  type WireServer,
} from '../../../tooling/wire-server/src/index.js';
import { chunks, type WorkloadCall } from '../loop-overhead/workload.js';
import { checkCalls, finalText, interopScript, noopInput, ourNoopTool, probe } from './workload.js';

/** Tool-calling turns of the `tool-calls` workload (8 calls each), then the answer. */
export const wireTurns = 10;
/** Tool-calling turns of the `prose` workload (one call each, after the text), then the answer. */
export const proseTurns = 3;
/** Streamed text tokens before each call of the `prose` workload, and in its answer. */
export const proseTokens = { perTurn: 150, answer: 300 };

/** What one run streams: per tool turn its text (may be empty) and calls, then the answer text. */
interface Workload {
  turns: readonly { text: readonly string[]; calls: readonly WorkloadCall[] }[];
  answer: readonly string[];
  /** Tool results per turn (how the server tells which turn a request is in). */
  callsPerTurn: number;
}

const vocabulary = (
  'the model reads a file then edits one function keeps the tests green and explains why ' +
  'each change is safe before it runs the next command in the sandbox'
).split(' ');

/** `count` text deltas of one token each (a word and its space, as OpenAI streams prose). */
function tokens(count: number, seed: number): string[] {
  return Array.from(
    { length: count },
    (_, index) => `${vocabulary[(index * 7 + seed) % vocabulary.length]} `,
  );
}

/** Argument text in token-sized deltas (a few characters, as OpenAI streams arguments). */
function argumentTokens(text: string): string[] {
  return text.match(/.{1,4}/gs) ?? [];
}

/**
 * The workloads: `tool-calls` is tool-call heavy (8 parallel calls a turn, arguments in
 * 16-character deltas, a one-chunk answer); `prose` is a chat answer's shape (a few hundred
 * one-token text deltas around one call a turn).
 */
export const workloads = {
  'tool-calls': {
    turns: interopScript.slice(0, wireTurns).map((calls) => ({ text: [], calls })),
    answer: chunks(finalText),
    callsPerTurn: 8,
  },
  prose: {
    turns: interopScript.slice(0, proseTurns).map((calls, turn) => ({
      text: tokens(proseTokens.perTurn, turn),
      calls: calls.slice(0, 1),
    })),
    answer: tokens(proseTokens.answer, 99),
    callsPerTurn: 1,
  },
} satisfies Record<string, Workload>;

export type WorkloadName = keyof typeof workloads;

/** An AI SDK language model (specification v4), as `fromAiSdkModel` takes it. */
type LanguageModelV4 = Parameters<typeof fromAiSdkModel>[0];

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

/** The SSE body of turn `turn`: its text and streamed tool calls, or (past the turns) the answer. */
function turnBody(workload: Workload, turn: number): string[] {
  const current = workload.turns[turn];
  if (current === undefined) {
    return sseEvents([
      chunk({ role: 'assistant', content: '' }),
      ...workload.answer.map((delta) => chunk({ content: delta })),
      chunk({}, 'stop'),
      usage,
      { data: '[DONE]' },
    ]);
  }
  const events = [chunk({ role: 'assistant', content: current.text.length > 0 ? '' : null })];
  for (const delta of current.text) events.push(chunk({ content: delta }));
  const split = current.text.length > 0 ? argumentTokens : chunks;
  current.calls.forEach((call, index) => {
    events.push(
      chunk({
        tool_calls: [
          { index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } },
        ],
      }),
    );
    for (const delta of split(call.arguments))
      events.push(chunk({ tool_calls: [{ index, function: { arguments: delta } }] }));
  });
  return sseEvents([...events, chunk({}, 'tool_calls'), usage, { data: '[DONE]' }]);
}

const bodies = Object.fromEntries(
  Object.entries(workloads).map(([name, workload]) => [
    name,
    Array.from({ length: workload.turns.length + 1 }, (_, turn) => turnBody(workload, turn)),
  ]),
) as Record<WorkloadName, string[][]>;

/** A wire server answering each request by how many tool results it already carries. */
export async function startChatServer(name: WorkloadName = 'tool-calls'): Promise<WireServer> {
  const workload: Workload = workloads[name];
  const answers = bodies[name];
  const server: WireServer = await startWireServer((request) => {
    // The server records every request; thousands of runs would keep them all (and every major
    // GC would mark them, in whichever run it falls).
    server.requests.length = 0;
    const messages =
      (request.json as { messages?: { role: string }[] } | undefined)?.messages ?? [];
    const turn =
      messages.filter((message) => message.role === 'tool').length / workload.callsPerTurn;
    return {
      status: 200,
      headers: { 'content-type': 'text/event-stream' },
      body: answers[turn] ?? answers[workload.turns.length] ?? [],
    };
  });
  return server;
}

/** The AI SDK model both `fromAiSdkModel` and the `streamText` reference row talk to. */
export function wireModel(url: string): LanguageModelV4 {
  return createOpenAICompatible({
    name: 'local',
    baseURL: `${url}/v1`,
    apiKey: 'sk-bench',
    includeUsage: true,
  }).chatModel('gpt-4o-mini');
}

/**
 * The same server through `@ai-sdk/openai`'s Chat Completions model (`.chat()`): what a user of
 * OpenAI itself would pick (its chunk schema and stream transform are its own, the SSE and JSON
 * stages are the same `@ai-sdk/provider-utils` ones).
 */
export function wireModelOpenAI(url: string): LanguageModelV4 {
  return createOpenAI({ baseURL: `${url}/v1`, apiKey: 'sk-bench' }).chat('gpt-4o-mini');
}

export function providersAt(url: string): {
  native: Provider;
  aiSdk: Provider;
  aiSdkOpenAI: Provider;
} {
  return {
    native: createOpenAIProvider({
      apiKey: 'sk-bench',
      baseURL: `${url}/v1`,
      compat: { streamUsage: true },
      clientOptions: { logLevel: 'off' },
      env: {},
    }),
    aiSdk: fromAiSdkModel(wireModel(url)),
    aiSdkOpenAI: fromAiSdkModel(wireModelOpenAI(url)),
  };
}

const tool = ourNoopTool();

function expectedCalls(workload: Workload): number {
  return workload.turns.reduce((sum, turn) => sum + turn.calls.length, 0);
}

/** One run of our loop over `provider`: the workload's turns over the wire, then the answer. */
export async function loopRun(
  provider: Provider,
  label: string,
  name: WorkloadName = 'tool-calls',
): Promise<void> {
  const workload: Workload = workloads[name];
  probe.reset();
  const agent = new Agent({ provider, model: 'gpt-4o-mini', tools: [tool] });
  const result = await agent.run('Run the no-op tool.').result;
  if (result.stopReason !== 'completed')
    throw new Error(`${label}: ${result.stopReason} ${result.error ?? ''}`);
  checkCalls(label, expectedCalls(workload));
  const last = result.finalMessage?.content.find((block) => block.type === 'text');
  if (last?.type !== 'text' || last.text !== workload.answer.join(''))
    throw new Error(`${label}: final text`);
}

const nativeTools = {
  noop: aiSdkTool({
    description: 'Does nothing.',
    inputSchema: noopInput,
    execute: async (input) => {
      probe.hit(input);
      return 'ok';
    },
  }),
};

/**
 * The reference row: the AI SDK's own `streamText` loop over the same model and server, with the
 * AI SDK's native `tool()` — what the AI SDK and its provider cost a user of the AI SDK itself.
 */
export async function streamTextRun(
  model: LanguageModelV4,
  name: WorkloadName = 'tool-calls',
): Promise<void> {
  const workload: Workload = workloads[name];
  probe.reset();
  const result = streamText({
    model,
    tools: nativeTools,
    prompt: 'Run the no-op tool.',
    stopWhen: isStepCount(workload.turns.length + 1),
  });
  const text = await result.text;
  checkCalls('streamText', expectedCalls(workload));
  if (text !== workload.answer.join(''))
    throw new Error(`streamText: final text ${JSON.stringify(text.slice(0, 80))}`);
}
