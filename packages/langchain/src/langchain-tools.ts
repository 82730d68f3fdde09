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
import { DynamicStructuredTool, ToolInputParsingException } from '@langchain/core/tools';

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
 * LangChain checks it against the schema — as our loop does before its validation (without it,
 * LangChain refused the argument shapes other agents use that our tools accept: `file_path` for
 * `path`) — and answers input that fails LangChain's check as our loop does: an `invalid-args`
 * result the model reads (`Invalid arguments: at "city": …`), not a `ToolInputParsingException`
 * thrown out of the agent's step.
 */
class AgentStructuredTool extends DynamicStructuredTool<JsonSchemaObject> {
  readonly #prepare: ((raw: unknown) => unknown) | undefined;
  readonly #refused: (raw: unknown, config: unknown) => Promise<unknown>;

  constructor(
    fields: ConstructorParameters<typeof DynamicStructuredTool<JsonSchemaObject>>[0],
    options: {
      prepare: ((raw: unknown) => unknown) | undefined;
      refused: (raw: unknown, config: unknown) => Promise<unknown>;
    },
  ) {
    super(fields);
    this.#prepare = options.prepare;
    this.#refused = options.refused;
  }

  override async call(...[arg, config, ...rest]: Parameters<LangChainTool['call']>) {
    // `invoke` hands `call` the tool call's arguments (and the call in the config); a direct
    // `call` may pass the whole tool call.
    const prepared = isToolCall(arg)
      ? { ...arg, args: this.#prepared(arg.args) }
      : this.#prepared(arg);
    try {
      return await super.call(prepared as typeof arg, config, ...rest);
    } catch (error) {
      if (!(error instanceof ToolInputParsingException)) throw error;
      // Our own path decides and words it (the raw input: it prepares the arguments itself).
      const raw = isToolCall(arg) ? arg.args : arg;
      const toolCall = isToolCall(arg) ? { toolCall: arg } : {};
      return this.#refused(raw, { ...(config as object | undefined), ...toolCall }) as never;
    }
  }

  #prepared(raw: unknown): unknown {
    if (this.#prepare === undefined) return raw;
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
  /** Runs the call through our path and answers as LangChain expects (see {@link answer}). */
  const runAndAnswer = async (input: unknown, config: RunnableConfig | undefined) => {
    const toolCallId = toolCallIdOf(config);
    const message = await runner.run(agentTool, input, {
      ...(toolCallId === undefined ? {} : { toolCallId }),
      ...(config?.signal === undefined ? {} : { signal: config.signal }),
    });
    return answer(agentTool, runner, message, toolCallId);
  };
  const fields: ConstructorParameters<typeof DynamicStructuredTool<JsonSchemaObject>>[0] = {
    name: agentTool.name,
    description: agentTool.description,
    schema: agentTool.parameters,
    responseFormat: 'content_and_artifact',
    verboseParsingErrors: true,
    func: (input: unknown, _runManager, config?: RunnableConfig) => runAndAnswer(input, config),
  };
  const prepare = agentTool.prepareArguments;
  return new AgentStructuredTool(fields, {
    prepare: prepare === undefined ? undefined : (raw) => prepare.call(agentTool, raw),
    refused: async (raw, config) => {
      const answered = await runAndAnswer(raw, config as RunnableConfig | undefined);
      const toolCallId = toolCallIdOf(config as RunnableConfig | undefined);
      // LangChain's check skipped its formatting: the tool call gets its ToolMessage here.
      const [first, artifact] = answered;
      if (ToolMessage.isInstance(first) || toolCallId === undefined) return first;
      return new ToolMessage({
        status: 'success',
        content: first,
        artifact,
        tool_call_id: toolCallId,
        name: agentTool.name,
      });
    },
  });
}

/**
 * A call's result as LangChain takes it (`content_and_artifact`): the content clipped for the
 * model and our whole result message. A failure answering a tool call is a `ToolMessage` with
 * `status: 'error'`; invoked with plain arguments, it throws a `ToolError` (its `kind` says which).
 */
function answer(
  agentTool: AnyAgentTool,
  runner: ToolRunner,
  message: ToolResultMessage,
  toolCallId: string | undefined,
): [LangChainToolContent | ToolMessage, ToolResultMessage] {
  const forModel = runner.forModel(agentTool, message);
  if (!message.isError) return [content(forModel), message];
  const text = toolResultText(forModel.content);
  if (toolCallId === undefined) {
    throw new ToolError(text, { kind: message.errorKind ?? 'failed', toolName: agentTool.name });
  }
  // A ToolMessage as the content is LangChain's way to answer with a status of its own.
  const failed = new ToolMessage({
    status: 'error',
    content: text,
    artifact: message,
    tool_call_id: toolCallId,
    name: agentTool.name,
  });
  return [failed, message];
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
