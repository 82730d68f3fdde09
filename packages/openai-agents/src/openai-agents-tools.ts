import {
  AgentError,
  type AnyAgentTool,
  type ConversationKey,
  createToolRunner,
  errorMessage,
  jsonContentAsText,
  ToolError,
  type ToolResultMessage,
  type ToolRunner,
  type ToolRunnerOptions,
  toolNamePattern,
  toolResultText,
} from '@agent/core';
import { type FunctionTool, type RunContext, tool } from '@openai/agents';

/** The non-strict JSON Schema shape `tool()` takes (the real schema is the tool's own). */
export type OpenAIAgentsToolParameters = {
  type: 'object';
  properties: Record<string, never>;
  required: never[];
  additionalProperties: true;
};

/** Options of {@link toOpenAIAgentsTools}: the gate, hooks and limits every call goes through. */
export interface OpenAIAgentsToolsOptions extends Omit<ToolRunnerOptions, 'approvals'> {
  /**
   * Where a permission question goes [openai-agents]: `openai-agents` — the Agents SDK's
   * human-in-the-loop approval (each tool's `needsApproval`: the run stops with an interruption
   * you `approve` or `reject` on `result.state`, then resume); `approver` — the policy's own
   * approver, asked while the call runs.
   */
  approvals?: 'openai-agents' | 'approver';
  /**
   * Which conversation a run belongs to [the JSON of the run's `context`]: a question is let
   * through only for a call of the conversation it was asked in, so two runs sharing these tools
   * cannot answer each other's questions. A RunState carries its `context`, so when states travel
   * through a party you do not trust (a browser), name the conversation from your own session.
   */
  conversation?: (runContext: RunContext) => string;
}

/** One of our tools as an Agents SDK function tool. */
export type OpenAIAgentsTool = FunctionTool<unknown, OpenAIAgentsToolParameters, unknown>;

/** What a call returns to the Agents SDK: text, or text and images. */
export type OpenAIAgentsToolOutput =
  | string
  | Array<
      { type: 'text'; text: string } | { type: 'image'; image: { data: string; mediaType: string } }
    >;

/**
 * Our tools as OpenAI Agents JS function tools (`tool()` with our JSON Schema, not strict). Each
 * call goes through our own path — `prepareArguments`, validation, the permission gate, hooks,
 * resource locks, timeout, the run's abort signal — and a failed, denied, timed-out or cancelled
 * call throws a `ToolError` (its `kind` says which); the tool's `errorFunction` hands the model
 * its message (the Agents SDK's default would hide it). A question of the gate becomes the Agents
 * SDK's approval.
 */
export function toOpenAIAgentsTools(
  tools: readonly AnyAgentTool[],
  options: OpenAIAgentsToolsOptions = {},
): OpenAIAgentsTool[] {
  const runner = createToolRunner(runnerOptions(options));
  const names = new Set<string>();
  return tools.map((agentTool) => {
    checkName(agentTool, 'toOpenAIAgentsTools');
    if (names.has(agentTool.name)) {
      throw new AgentError(`toOpenAIAgentsTools: two tools are named "${agentTool.name}"`);
    }
    names.add(agentTool.name);
    return adapt(agentTool, runner, options.conversation);
  });
}

/** One of our tools as an Agents SDK function tool; see {@link toOpenAIAgentsTools}. */
export function toOpenAIAgentsTool(
  agentTool: AnyAgentTool,
  options: OpenAIAgentsToolsOptions = {},
): OpenAIAgentsTool {
  checkName(agentTool, 'toOpenAIAgentsTool');
  return adapt(agentTool, createToolRunner(runnerOptions(options)), options.conversation);
}

function runnerOptions(options: OpenAIAgentsToolsOptions): ToolRunnerOptions {
  const { approvals, conversation: _conversation, ...rest } = options;
  return { ...rest, approvals: approvals === 'approver' ? 'approver' : 'framework' };
}

/**
 * A name as `defineTool` demands (`^[a-zA-Z0-9_-]{1,64}$`): a hand-made tool named otherwise is
 * refused here — the Agents SDK rewrites other characters to `_` (`a.b` and `a_b` both became `a_b`, and a call
 * of one ran the other) and sends longer names on to the API, which refuses them mid-run.
 */
function checkName(agentTool: AnyAgentTool, where: string): void {
  if (!toolNamePattern.test(agentTool.name)) {
    throw new AgentError(
      `${where}: invalid tool name ${JSON.stringify(agentTool.name)}: must match ${toolNamePattern}`,
    );
  }
}

/** The conversation key of a run: the caller's, else a SHA-256 of the run's `context` as JSON. */
function conversationKeyOf(
  conversation: ((runContext: RunContext) => string) | undefined,
): (runContext: RunContext) => ConversationKey {
  if (conversation !== undefined) return (runContext) => () => conversation(runContext);
  return (runContext) => async () => {
    let json: string;
    try {
      json = JSON.stringify(runContext.context) ?? '';
    } catch {
      // A context that is no JSON (cycles, BigInt): one key for all such runs, as before.
      json = '';
    }
    const digest = await globalThis.crypto.subtle.digest('SHA-256', new TextEncoder().encode(json));
    return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, '0')).join(
      '',
    );
  };
}

function adapt(
  agentTool: AnyAgentTool,
  runner: ToolRunner,
  conversation: ((runContext: RunContext) => string) | undefined,
): OpenAIAgentsTool {
  const conversationOf = conversationKeyOf(conversation);
  return tool({
    name: agentTool.name,
    description: agentTool.description,
    // Not strict: our schemas keep optional fields optional; our own validation runs in the call.
    parameters: agentTool.parameters as unknown as OpenAIAgentsToolParameters,
    strict: false,
    // The Agents SDK's default hides the error ("An error occurred while running the tool"):
    // our message says why (denied by which rule, which argument is invalid), for the model.
    errorFunction: (_runContext, error) =>
      ToolError.isInstance(error) ? error.message : errorMessage(error),
    // Only where a question can go to the Agents SDK (it checks approval per call otherwise too).
    ...(runner.frameworkApprovals
      ? {
          needsApproval: (runContext: RunContext, input: unknown, callId?: string) =>
            runner.needsApproval(agentTool, input, callId ?? '', {
              // An answer in the RunState (which the caller may have edited or made up): the
              // Agents SDK is checking again before it runs the call, not asking.
              answered:
                callId !== undefined &&
                runContext.isToolApproved({ toolName: agentTool.name, callId }) !== undefined,
              conversation: conversationOf(runContext),
            }),
        }
      : {}),
    execute: async (input, runContext, details): Promise<OpenAIAgentsToolOutput> => {
      const toolCallId = details?.toolCall?.callId;
      const message = await runner.run(agentTool, input, {
        ...(toolCallId === undefined ? {} : { toolCallId }),
        ...(details?.signal === undefined ? {} : { signal: details.signal }),
        ...(runner.frameworkApprovals && runContext !== undefined
          ? { conversation: conversationOf(runContext) }
          : {}),
      });
      const forModel = runner.forModel(agentTool, message);
      if (message.isError) {
        throw new ToolError(toolResultText(forModel.content), {
          kind: message.errorKind ?? 'failed',
          toolName: agentTool.name,
        });
      }
      return output(forModel);
    },
  });
}

function output(message: ToolResultMessage): OpenAIAgentsToolOutput {
  // The Agents SDK's outputs are text and images: a JSON block goes as its text.
  const blocks = jsonContentAsText(message.content);
  if (blocks.every((block) => block.type === 'text')) {
    return toolResultText(message.content);
  }
  return blocks.map((block) =>
    block.type === 'text'
      ? { type: 'text', text: block.text }
      : { type: 'image', image: { data: block.data, mediaType: block.mimeType } },
  );
}
