import { generateText, isStepCount, streamText, tool } from 'ai';
import { convertArrayToReadableStream, MockLanguageModelV4 } from 'ai/test';
import type { Implementation } from './implementation.js';
import {
  checkRun,
  chunks,
  finalText,
  noopInput,
  overheadScript,
  parallelCalls,
  parallelScript,
  parallelWaitMs,
  probe,
  totalCalls,
  type WorkloadCall,
  wait,
} from './workload.js';

type Script = readonly (readonly WorkloadCall[])[];
// The provider-spec types, taken from the mock so bench needs no direct @ai-sdk/provider dependency.
type GenerateResult = Awaited<ReturnType<MockLanguageModelV4['doGenerate']>>;
type StreamResult = Awaited<ReturnType<MockLanguageModelV4['doStream']>>;
type LanguageModelV4StreamPart =
  StreamResult['stream'] extends ReadableStream<infer Part> ? Part : never;
type LanguageModelV4Content = GenerateResult['content'][number];
type LanguageModelV4Usage = GenerateResult['usage'];

const usage: LanguageModelV4Usage = {
  inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 0, text: 0, reasoning: 0 },
};

const tools = {
  noop: tool({
    description: 'Does nothing.',
    inputSchema: noopInput,
    execute: async (input) => {
      probe.hit(input);
      return 'ok';
    },
  }),
  wait: tool({
    description: 'Waits 100 ms.',
    inputSchema: noopInput,
    execute: async (input) => {
      probe.hit(input);
      await wait(parallelWaitMs);
      return 'ok';
    },
  }),
};

/** The stream parts a streaming provider sends for one turn: argument text in deltas, then the call. */
function streamParts(calls: readonly WorkloadCall[] | undefined): LanguageModelV4StreamPart[] {
  const parts: LanguageModelV4StreamPart[] = [{ type: 'stream-start', warnings: [] }];
  if (calls === undefined) {
    parts.push({ type: 'text-start', id: 'text-0' });
    for (const delta of chunks(finalText)) parts.push({ type: 'text-delta', id: 'text-0', delta });
    parts.push({ type: 'text-end', id: 'text-0' });
  } else {
    for (const call of calls) {
      parts.push({ type: 'tool-input-start', id: call.id, toolName: call.name });
      for (const delta of chunks(call.arguments))
        parts.push({ type: 'tool-input-delta', id: call.id, delta });
      parts.push({ type: 'tool-input-end', id: call.id });
      parts.push({
        type: 'tool-call',
        toolCallId: call.id,
        toolName: call.name,
        input: call.arguments,
      });
    }
  }
  parts.push({
    type: 'finish',
    usage,
    finishReason:
      calls === undefined
        ? { unified: 'stop', raw: 'stop' }
        : { unified: 'tool-calls', raw: 'tool_calls' },
  });
  return parts;
}

/** The content a non-streaming provider returns for one turn (raw JSON argument text). */
function generateContent(calls: readonly WorkloadCall[] | undefined): LanguageModelV4Content[] {
  if (calls === undefined) return [{ type: 'text', text: finalText }];
  return calls.map((call) => ({
    type: 'tool-call',
    toolCallId: call.id,
    toolName: call.name,
    input: call.arguments,
  }));
}

// The mock model from `ai/test` keeps the options of every call (the whole prompt of every
// step); a test-harness feature, not SDK work. It is emptied on each call so the AI SDK is not
// charged for it (ours runs with recordRequests: false).
function streamingModel(script: Script): MockLanguageModelV4 {
  let turn = 0;
  const model: MockLanguageModelV4 = new MockLanguageModelV4({
    doStream: async () => {
      model.doStreamCalls.length = 0;
      return { stream: convertArrayToReadableStream(streamParts(script[turn++])) };
    },
  });
  return model;
}

function generatingModel(script: Script): MockLanguageModelV4 {
  let turn = 0;
  const model: MockLanguageModelV4 = new MockLanguageModelV4({
    doGenerate: async () => {
      model.doGenerateCalls.length = 0;
      const calls = script[turn++];
      return {
        content: generateContent(calls),
        finishReason:
          calls === undefined
            ? { unified: 'stop', raw: 'stop' }
            : { unified: 'tool-calls', raw: 'tool_calls' },
        usage,
        warnings: [],
      };
    },
  });
  return model;
}

async function runStream(script: Script, expectedCalls: number): Promise<unknown> {
  const model = streamingModel(script);
  const result = streamText({
    model,
    tools,
    prompt: 'go',
    stopWhen: isStepCount(script.length + 1),
  });
  await result.consumeStream();
  const steps = await result.steps;
  checkRun('ai streamText', expectedCalls, await result.text);
  if (steps.length !== script.length + 1)
    throw new Error(`ai streamText: ${steps.length} steps, expected ${script.length + 1}`);
  return { model, steps };
}

async function runGenerate(script: Script, expectedCalls: number): Promise<unknown> {
  const model = generatingModel(script);
  const result = await generateText({
    model,
    tools,
    prompt: 'go',
    stopWhen: isStepCount(script.length + 1),
  });
  checkRun('ai generateText', expectedCalls, result.text);
  if (result.steps.length !== script.length + 1)
    throw new Error(`ai generateText: ${result.steps.length} steps, expected ${script.length + 1}`);
  return { model, result };
}

/** `streamText` from the Vercel AI SDK with `MockLanguageModelV4.doStream` (argument deltas streamed). */
export const aiStream: Implementation = {
  label: 'ai streamText',
  packageName: 'ai',
  runOverhead: () => runStream(overheadScript, totalCalls),
  runParallel: () => runStream(parallelScript, parallelCalls),
};

/** `generateText` from the Vercel AI SDK with `MockLanguageModelV4.doGenerate` (whole responses, no deltas). */
export const aiGenerate: Implementation = {
  label: 'ai generateText',
  packageName: 'ai',
  runOverhead: () => runGenerate(overheadScript, totalCalls),
  runParallel: () => runGenerate(parallelScript, parallelCalls),
};
