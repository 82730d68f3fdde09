import {
  AgentError,
  type AnyAgentTool,
  createToolRunner,
  type JsonSchemaObject,
  jsonContentAsText,
  ToolError,
  type ToolResultMessage,
  type ToolRunner,
  type ToolRunnerOptions,
  toolNamePattern,
  toolResultText,
} from '@agent/core';
import { ToolMessage } from '@langchain/core/messages';
import type { RunnableConfig } from '@langchain/core/runnables';
import { DynamicStructuredTool } from '@langchain/core/tools';

/**
 * Options of {@link toLangChainTools}: the gate, hooks and limits every call goes through.
 * LangChain has no approval flow of its own: a question of the policy goes to its approver while
 * the call runs (none: denied).
 */
export type LangChainToolsOptions = Omit<ToolRunnerOptions, 'approvals'>;

/** One of our tools as a LangChain structured tool. */
export type LangChainTool = DynamicStructuredTool<JsonSchemaObject>;

/** A result's content as LangChain sends it to the model: text, or text and images. */
export type LangChainToolContent =
  | string
  | Array<{ type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } }>;

/**
 * Our tools as LangChain `DynamicStructuredTool`s (JSON Schema input, `responseFormat:
 * 'content_and_artifact'`). Each call goes through our own path — `prepareArguments`,
 * validation, the permission gate and its approver, hooks, resource locks, timeout, the
 * config's abort signal. Invoked with a tool call, the tool answers a `ToolMessage`: its content
 * clipped to the tool's `maxResultChars`, its artifact our whole result message; a failed,
 * denied, timed-out or cancelled call is a `ToolMessage` with `status: 'error'`. Invoked with
 * plain arguments, a failure throws a `ToolError` (its `kind` says which).
 */
export function toLangChainTools(
  tools: readonly AnyAgentTool[],
  options: LangChainToolsOptions = {},
): LangChainTool[] {
  const runner = createToolRunner({ ...options, approvals: 'approver' });
  const names = new Set<string>();
  return tools.map((agentTool) => {
    checkName(agentTool, 'toLangChainTools');
    if (names.has(agentTool.name)) {
      throw new AgentError(`toLangChainTools: two tools are named "${agentTool.name}"`);
    }
    names.add(agentTool.name);
    return adapt(agentTool, runner);
  });
}

/** One of our tools as a LangChain structured tool; see {@link toLangChainTools}. */
export function toLangChainTool(
  agentTool: AnyAgentTool,
  options: LangChainToolsOptions = {},
): LangChainTool {
  checkName(agentTool, 'toLangChainTool');
  return adapt(agentTool, createToolRunner({ ...options, approvals: 'approver' }));
}

/**
 * A `DynamicStructuredTool` that maps the input through the tool's `prepareArguments` before
 * LangChain checks it against the schema — as our loop does before its validation. Without it,
 * LangChain refused the argument shapes other agents use that our tools accept (`file_path` for
 * `path`) before our path ever saw them.
 */
class PreparingStructuredTool extends DynamicStructuredTool<JsonSchemaObject> {
  readonly #prepare: (raw: unknown) => unknown;

  constructor(
    fields: ConstructorParameters<typeof DynamicStructuredTool<JsonSchemaObject>>[0],
    prepare: (raw: unknown) => unknown,
  ) {
    super(fields);
    this.#prepare = prepare;
  }

  override call(...[arg, ...rest]: Parameters<LangChainTool['call']>) {
    // `invoke` hands `call` the tool call's arguments (and the call in the config); a direct
    // `call` may pass the whole tool call.
    const prepared = isToolCall(arg)
      ? { ...arg, args: this.#prepared(arg.args) }
      : this.#prepared(arg);
    return super.call(prepared as typeof arg, ...rest);
  }

  #prepared(raw: unknown): unknown {
    try {
      return this.#prepare(raw);
    } catch {
      // LangChain's check, then ours, report the input as it came.
      return raw;
    }
  }
}

function isToolCall(value: unknown): value is { type: 'tool_call'; args: unknown } {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { type?: unknown }).type === 'tool_call' &&
    'args' in value
  );
}

/**
 * A name as `defineTool` demands (`^[a-zA-Z0-9_-]{1,64}$`): a hand-made tool named otherwise is
 * refused here — LangChain sends any name on to the model's API, which refuses it mid-run.
 */
function checkName(agentTool: AnyAgentTool, where: string): void {
  if (!toolNamePattern.test(agentTool.name)) {
    throw new AgentError(
      `${where}: invalid tool name ${JSON.stringify(agentTool.name)}: must match ${toolNamePattern}`,
    );
  }
}

function adapt(agentTool: AnyAgentTool, runner: ToolRunner): LangChainTool {
  const fields: ConstructorParameters<typeof DynamicStructuredTool<JsonSchemaObject>>[0] = {
    name: agentTool.name,
    description: agentTool.description,
    schema: agentTool.parameters,
    responseFormat: 'content_and_artifact',
    // LangChain checks the input against the schema first; the model should read what was wrong.
    verboseParsingErrors: true,
    func: async (input: unknown, _runManager, config?: RunnableConfig) => {
      const toolCallId = toolCallIdOf(config);
      const message = await runner.run(agentTool, input, {
        ...(toolCallId === undefined ? {} : { toolCallId }),
        ...(config?.signal === undefined ? {} : { signal: config.signal }),
      });
      const forModel = runner.forModel(agentTool, message);
      if (message.isError) {
        const text = toolResultText(forModel.content);
        if (toolCallId === undefined) {
          throw new ToolError(text, {
            kind: message.errorKind ?? 'failed',
            toolName: agentTool.name,
          });
        }
        // A ToolMessage as the content is LangChain's way to answer with a status of its own.
        const failed = new ToolMessage({
          status: 'error',
          content: text,
          artifact: message,
          tool_call_id: toolCallId,
          name: agentTool.name,
        });
        return [failed, message] satisfies [ToolMessage, ToolResultMessage];
      }
      return [content(forModel), message] satisfies [LangChainToolContent, ToolResultMessage];
    },
  };
  const prepare = agentTool.prepareArguments;
  return prepare === undefined
    ? new DynamicStructuredTool<JsonSchemaObject>(fields)
    : new PreparingStructuredTool(fields, (raw) => prepare.call(agentTool, raw));
}

/** The id of the tool call LangChain is answering, when it was invoked with one. */
function toolCallIdOf(config: RunnableConfig | undefined): string | undefined {
  const toolCall = (config as { toolCall?: { id?: unknown } } | undefined)?.toolCall;
  return typeof toolCall?.id === 'string' ? toolCall.id : undefined;
}

function content(message: ToolResultMessage): LangChainToolContent {
  // LangChain's tool content is text and image parts: a JSON block goes as its text.
  const blocks = jsonContentAsText(message.content);
  if (blocks.every((block) => block.type === 'text')) {
    return toolResultText(message.content);
  }
  return blocks.map((block) =>
    block.type === 'text'
      ? { type: 'text', text: block.text }
      : { type: 'image_url', image_url: { url: `data:${block.mimeType};base64,${block.data}` } },
  );
}
