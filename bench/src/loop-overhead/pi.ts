import { Agent, type AgentTool, type StreamFn } from '@mariozechner/pi-agent-core';
import {
  type AssistantMessage,
  type AssistantMessageEventStream,
  createAssistantMessageEventStream,
  type Model,
  parseStreamingJson,
  Type,
  type Usage,
} from '@mariozechner/pi-ai';
import type { Implementation } from './implementation.js';
import {
  checkRun,
  chunks,
  finalText,
  type NoopArgs,
  overheadScript,
  parallelCalls,
  parallelScript,
  parallelWaitMs,
  probe,
  totalCalls,
  type WorkloadCall,
  wait,
} from './workload.js';

// A model record for the scripted stream function; pi only reads it to pass it along.
const model: Model<'bench'> = {
  id: 'bench',
  name: 'bench',
  api: 'bench',
  provider: 'bench',
  baseUrl: 'http://127.0.0.1:0',
  reasoning: false,
  input: ['text'],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 1_000_000,
  maxTokens: 16_384,
};

const parameters = Type.Object({
  path: Type.String(),
  line: Type.Integer(),
  flag: Type.Boolean(),
});

function usage(): Usage {
  return {
    input: 0,
    output: 0,
    cacheRead: 0,
    cacheWrite: 0,
    totalTokens: 0,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  };
}

/**
 * A pi stream function that replays the script with zero latency, emitting the events pi's own
 * providers emit (start, toolcall_start/delta/end, text_*, done). Like pi's providers, it parses
 * the argument JSON (with `parseStreamingJson`) and puts the object on the tool-call block; it
 * parses once at the end of each call, not after every delta as the real providers do.
 */
function scriptedStream(script: readonly (readonly WorkloadCall[])[]): StreamFn {
  let turn = 0;
  return (requestModel): AssistantMessageEventStream => {
    const stream = createAssistantMessageEventStream();
    const calls = script[turn++];
    const output: AssistantMessage = {
      role: 'assistant',
      content: [],
      api: requestModel.api,
      provider: requestModel.provider,
      model: requestModel.id,
      usage: usage(),
      stopReason: calls === undefined ? 'stop' : 'toolUse',
      timestamp: Date.now(),
    };
    // Providers start producing after returning the stream, as pi's own providers do.
    queueMicrotask(() => {
      stream.push({ type: 'start', partial: output });
      if (calls === undefined) {
        output.content.push({ type: 'text', text: '' });
        stream.push({ type: 'text_start', contentIndex: 0, partial: output });
        const block = output.content[0];
        for (const delta of chunks(finalText)) {
          if (block?.type === 'text') block.text += delta;
          stream.push({ type: 'text_delta', contentIndex: 0, delta, partial: output });
        }
        stream.push({ type: 'text_end', contentIndex: 0, content: finalText, partial: output });
      } else {
        calls.forEach((call, contentIndex) => {
          output.content.push({ type: 'toolCall', id: call.id, name: call.name, arguments: {} });
          stream.push({ type: 'toolcall_start', contentIndex, partial: output });
          let raw = '';
          for (const delta of chunks(call.arguments)) {
            raw += delta;
            stream.push({ type: 'toolcall_delta', contentIndex, delta, partial: output });
          }
          const toolCall = {
            type: 'toolCall' as const,
            id: call.id,
            name: call.name,
            arguments: parseStreamingJson<Record<string, unknown>>(raw),
          };
          output.content[contentIndex] = toolCall;
          stream.push({ type: 'toolcall_end', contentIndex, toolCall, partial: output });
        });
      }
      stream.push({
        type: 'done',
        reason: output.stopReason === 'toolUse' ? 'toolUse' : 'stop',
        message: output,
      });
      stream.end(output);
    });
    return stream;
  };
}

const noop: AgentTool<typeof parameters> = {
  name: 'noop',
  label: 'noop',
  description: 'Does nothing.',
  parameters,
  execute: async (_toolCallId, params) => {
    probe.hit(params as NoopArgs);
    return { content: [{ type: 'text', text: 'ok' }], details: undefined };
  },
};

const waitTool: AgentTool<typeof parameters> = {
  name: 'wait',
  label: 'wait',
  description: 'Waits 100 ms.',
  parameters,
  execute: async (_toolCallId, params) => {
    probe.hit(params as NoopArgs);
    await wait(parallelWaitMs);
    return { content: [{ type: 'text', text: 'ok' }], details: undefined };
  },
};

async function run(
  script: readonly (readonly WorkloadCall[])[],
  expectedCalls: number,
): Promise<Agent> {
  const agent = new Agent({
    initialState: { model, systemPrompt: '', tools: [noop, waitTool] },
    streamFn: scriptedStream(script),
  });
  await agent.prompt('go');
  const last = agent.state.messages.at(-1);
  if (last === undefined || last.role !== 'assistant' || last.stopReason !== 'stop')
    throw new Error(
      `pi-agent-core: run did not end with a final answer (${agent.state.errorMessage ?? ''})`,
    );
  const text = last.content.find((block) => block.type === 'text');
  checkRun('pi-agent-core', expectedCalls, text?.type === 'text' ? text.text : undefined);
  return agent;
}

/** `Agent` from `@mariozechner/pi-agent-core` with a scripted `streamFn` (no network). */
export const pi: Implementation = {
  label: 'pi-agent-core',
  packageName: '@mariozechner/pi-agent-core',
  runOverhead: () => run(overheadScript, totalCalls),
  runParallel: () => run(parallelScript, parallelCalls),
};
