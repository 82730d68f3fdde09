// A tool call through the Agents SDK's own loop (`run()`, a scripted `Model` answering at once):
// its native `tool()` (zod parameters) against ours through `toOpenAIAgentsTools`.
import { PermissionPolicy } from '@agent/core';
import { toOpenAIAgentsTools } from '@agent/openai-agents';
import {
  Agent,
  type Model,
  type ModelResponse,
  run,
  setTracingDisabled,
  type Tool,
  tool,
  Usage,
} from '@openai/agents';
import {
  checkCalls,
  finalText,
  interopCalls,
  interopScript,
  noopInput,
  ourNoopTool,
  probe,
} from './workload.js';

setTracingDisabled(true);

/** Answers from the script: a response of 8 function calls per turn, then the final text. */
function scriptedModel(): Model {
  let turn = 0;
  return {
    async getResponse(): Promise<ModelResponse> {
      const calls = interopScript[turn++];
      if (calls === undefined) {
        return {
          usage: new Usage(),
          output: [
            {
              type: 'message',
              role: 'assistant',
              status: 'completed',
              content: [{ type: 'output_text', text: finalText }],
            },
          ],
        };
      }
      return {
        usage: new Usage(),
        output: calls.map((call) => ({
          type: 'function_call',
          callId: call.id,
          name: call.name,
          arguments: call.arguments,
          status: 'completed',
        })),
      };
    },
    getStreamedResponse() {
      throw new Error('not streamed in this bench');
    },
  };
}

const native = tool({
  name: 'noop',
  description: 'Does nothing.',
  parameters: noopInput,
  execute: async (input) => {
    probe.hit(input);
    return 'ok';
  },
});
const nativeApproval = tool({
  name: 'noop',
  description: 'Does nothing.',
  parameters: noopInput,
  // The Agents SDK's own per-call approval check, answering no question.
  needsApproval: async () => false,
  execute: async (input) => {
    probe.hit(input);
    return 'ok';
  },
});
const [ours] = toOpenAIAgentsTools([ourNoopTool()]);
const [oursGated] = toOpenAIAgentsTools([ourNoopTool()], {
  permissions: new PermissionPolicy({ allow: ['noop'] }),
});

/** One run of the Agents SDK loop over the script. */
export async function openAIAgentsRun(
  kind: 'native' | 'native-approval' | 'ours' | 'ours-gated',
): Promise<void> {
  probe.reset();
  const chosen = { native, 'native-approval': nativeApproval, ours, 'ours-gated': oursGated }[kind];
  if (chosen === undefined) throw new Error('no tool');
  const tools = [chosen as Tool];
  const agent = new Agent({
    name: 'bench',
    instructions: 'Run the no-op tool.',
    model: scriptedModel(),
    tools,
  });
  const result = await run(agent, 'Go.', { maxTurns: interopScript.length + 2 });
  checkCalls(`OpenAI Agents ${kind}`, interopCalls);
  if (result.finalOutput !== finalText)
    throw new Error(`OpenAI Agents ${kind}: final ${String(result.finalOutput)}`);
}
