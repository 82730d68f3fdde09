// A tool call through the AI SDK's own loop (`generateText`, the AI SDK's mock model): its native
// `tool()` against ours through `toAiSdkTools` (with and without a permission policy).

import { toAiSdkTools } from '@agent/ai-sdk';
import { PermissionPolicy } from '@agent/core';
import { generateText, isStepCount, type ToolSet, tool } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import {
  checkCalls,
  finalText,
  interopCalls,
  interopScript,
  noopInput,
  ourNoopTool,
  probe,
} from './workload.js';

type GenerateResult = Awaited<ReturnType<MockLanguageModelV4['doGenerate']>>;
const usage: GenerateResult['usage'] = {
  inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 0, text: 0, reasoning: 0 },
};

function model(): MockLanguageModelV4 {
  let turn = 0;
  const mock = new MockLanguageModelV4({
    doGenerate: async () => {
      // The mock records every call's options; a long run would keep them all.
      mock.doGenerateCalls.length = 0;
      const calls = interopScript[turn++];
      if (calls === undefined)
        return {
          content: [{ type: 'text', text: finalText }],
          finishReason: { unified: 'stop', raw: 'stop' },
          usage,
          warnings: [],
        };
      return {
        content: calls.map((call) => ({
          type: 'tool-call',
          toolCallId: call.id,
          toolName: call.name,
          input: call.arguments,
        })),
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
        usage,
        warnings: [],
      } satisfies GenerateResult;
    },
  });
  return mock;
}

const native: ToolSet = {
  noop: tool({
    description: 'Does nothing.',
    inputSchema: noopInput,
    execute: async (input) => {
      probe.hit(input);
      return 'ok';
    },
  }),
};
const nativeApproval: ToolSet = {
  noop: tool({
    description: 'Does nothing.',
    inputSchema: noopInput,
    // The AI SDK's own per-call approval check, answering no question.
    needsApproval: async () => false,
    execute: async (input) => {
      probe.hit(input);
      return 'ok';
    },
  }),
};
const ours = toAiSdkTools([ourNoopTool()]);
const oursGated = toAiSdkTools([ourNoopTool()], {
  permissions: new PermissionPolicy({ allow: ['noop'] }),
});

/** One run: `interopTurns` turns of 8 calls, then the final text. */
export async function aiSdkRun(
  kind: 'native' | 'native-approval' | 'ours' | 'ours-gated',
): Promise<void> {
  probe.reset();
  const tools = { native, 'native-approval': nativeApproval, ours, 'ours-gated': oursGated }[kind];
  const result = await generateText({
    model: model(),
    tools,
    prompt: 'Run the no-op tool.',
    stopWhen: isStepCount(interopScript.length + 1),
  });
  checkCalls(`AI SDK ${kind}`, interopCalls);
  if (result.text !== finalText) throw new Error(`AI SDK ${kind}: final text ${result.text}`);
}
