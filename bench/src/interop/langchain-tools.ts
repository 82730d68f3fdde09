// A tool call as LangChain agents make it (`tool.invoke(toolCall)`, a ToolMessage back; there is
// no loop in @langchain/core): its native `tool()` (zod schema) against ours through `toLangChainTools`.
import { toLangChainTools } from '@agent/langchain';
import { tool } from '@langchain/core/tools';
import {
  checkCalls,
  interopCalls,
  interopScript,
  noopInput,
  ourNoopTool,
  probe,
} from './workload.js';

const native = tool(
  async (input) => {
    probe.hit(input);
    return 'ok';
  },
  { name: 'noop', description: 'Does nothing.', schema: noopInput },
);
const [ours] = toLangChainTools([ourNoopTool()]);
const calls = interopScript.flat().map((call) => ({
  type: 'tool_call' as const,
  id: call.id,
  name: call.name,
  args: JSON.parse(call.arguments) as Record<string, unknown>,
}));

/** One run: every scripted call invoked in turn, each answered with a ToolMessage. */
export async function langChainRun(kind: 'native' | 'ours'): Promise<void> {
  probe.reset();
  if (ours === undefined) throw new Error('no tool');
  for (const call of calls) {
    const message = (kind === 'native' ? await native.invoke(call) : await ours.invoke(call)) as {
      tool_call_id?: string;
      status?: string;
    };
    if (message.tool_call_id !== call.id || message.status === 'error')
      throw new Error(`LangChain ${kind}: bad answer to ${call.id}`);
  }
  checkCalls(`LangChain ${kind}`, interopCalls);
}
