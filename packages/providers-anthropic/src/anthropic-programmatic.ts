/**
 * Anthropic's programmatic tool calling, mapped onto our contract. With it on, the request offers
 * the code execution tool and marks the chosen tools `allowed_callers: ['direct', <version>]`;
 * Claude may then write Python that runs in Anthropic's container and calls those tools. Each call
 * comes back as an ordinary `tool_use` block with a `caller` naming the code execution
 * (`server_tool_use`) that made it — a normal tool call for the loop, so it goes through our gate,
 * hooks and events like any other — and its result goes back as a `tool_result` the code receives
 * (the model does not read it). While the code waits for results, the next request must carry the
 * `server_tool_use` block, the callers and the `container` id; once it finished, the calls are
 * replayed as plain direct calls (which the tools also allow).
 *
 * Wire format: the Messages API as the official SDK (`@anthropic-ai/sdk` 1.12) types it —
 * `CodeExecutionTool20260120`, `Tool.allowed_callers`, `ToolUseBlock.caller`
 * (`{ type: 'code_execution_20260120', tool_id }`), `MessageCreateParams.container`, and
 * `message_delta.delta.container` — and the programmatic tool calling guide
 * (platform.claude.com/docs/en/agents-and-tools/tool-use/programmatic-tool-calling).
 */
import type { AssistantContent, Message, ProviderRequest, ToolCallContent } from '@agent/core';
import type {
  MessageCreateParamsStreaming,
  ServerToolUseBlockParam,
  ToolUnion,
  ToolUseBlockParam,
} from '@anthropic-ai/sdk/resources';

/** The code execution tool versions that can call client tools. */
export type AnthropicCodeExecutionVersion = 'code_execution_20250825' | 'code_execution_20260120';

/** Options of programmatic tool calling (`programmaticToolCalling` of the provider). */
export interface AnthropicProgrammaticOptions {
  /** Names of the tools Claude's code may call [every tool of the request]. */
  tools?: readonly string[];
  /** The code execution tool sent [code_execution_20260120]. */
  version?: AnthropicCodeExecutionVersion;
}

/** Who made a `tool_use`: the model, or code it runs (`tool_id`: the `server_tool_use` block). */
type Caller = { type: 'direct' } | { type: AnthropicCodeExecutionVersion; tool_id: string };

/** What a programmatic call keeps in `providerMetadata.anthropic` for its replay. */
interface ProgrammaticMetadata {
  caller: { type: AnthropicCodeExecutionVersion; tool_id: string };
  /** The `server_tool_use` block that holds the code, on the first call it made in a message. */
  serverToolUse?: ServerToolUseBlockParam;
  /** The container the code runs in, which the next request must name. */
  container?: string;
}

const codeExecutionVersions = new Set<string>([
  'code_execution_20250825',
  'code_execution_20260120',
]);

function programmaticMetadata(call: ToolCallContent): ProgrammaticMetadata | undefined {
  const anthropic = call.providerMetadata?.anthropic as Partial<ProgrammaticMetadata> | undefined;
  const caller = anthropic?.caller;
  if (caller === undefined || !codeExecutionVersions.has(caller.type)) return undefined;
  return anthropic as ProgrammaticMetadata;
}

/** Resolves the provider option: off, or what to offer. */
export function programmaticSetting(
  option: boolean | AnthropicProgrammaticOptions | undefined,
):
  | (Required<Pick<AnthropicProgrammaticOptions, 'version'>> & AnthropicProgrammaticOptions)
  | undefined {
  if (option === undefined || option === false) return undefined;
  const chosen = option === true ? {} : option;
  return { ...chosen, version: chosen.version ?? 'code_execution_20260120' };
}

/**
 * Offers the code execution tool and lets it call the chosen tools (`setting`), and names the
 * container of code still waiting for results. Changes `params` in place.
 */
export function applyProgrammaticToolCalling(
  params: MessageCreateParamsStreaming,
  request: ProviderRequest,
  setting: ReturnType<typeof programmaticSetting>,
): void {
  const open = openExecutions(request.messages);
  if (open.container !== undefined) params.container = open.container;
  if (setting === undefined) return;
  const chosen = setting.tools === undefined ? undefined : new Set(setting.tools);
  const tools = params.tools ?? [];
  for (const tool of tools) {
    // Client tools only (a server tool has a `type`); deferred ones too, once loaded.
    if ('type' in tool && tool.type !== undefined && tool.type !== 'custom') continue;
    if (chosen !== undefined && !chosen.has(tool.name)) continue;
    // Direct too: the model keeps calling them itself, and a finished program's calls are
    // replayed as direct ones.
    (tool as { allowed_callers?: string[] }).allowed_callers = ['direct', setting.version];
  }
  if (!tools.some((tool) => 'type' in tool && tool.type === setting.version))
    tools.push({ type: setting.version, name: 'code_execution' } as ToolUnion);
  params.tools = tools;
}

/**
 * The code executions still waiting for tool results: those that made a call in the newest
 * assistant message (code that finished makes no more calls), and the container they run in.
 */
export function openExecutions(messages: readonly Message[]): {
  callers: Set<string>;
  container?: string;
} {
  const callers = new Set<string>();
  let container: string | undefined;
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index];
    if (message?.role !== 'assistant') continue;
    for (const block of message.content) {
      if (block.type !== 'toolCall') continue;
      const metadata = programmaticMetadata(block);
      if (metadata === undefined) continue;
      callers.add(metadata.caller.tool_id);
      container ??= metadata.container;
    }
    break;
  }
  return container === undefined ? { callers } : { callers, container };
}

/**
 * The `server_tool_use` ids of every code execution that made programmatic calls in `messages`:
 * their own blocks (and results) are not replayed as opaque blocks, since their calls are.
 */
export function programmaticServers(messages: readonly Message[]): Set<string> {
  const servers = new Set<string>();
  for (const message of messages) {
    if (message.role !== 'assistant') continue;
    for (const block of message.content) {
      if (block.type !== 'toolCall') continue;
      const metadata = programmaticMetadata(block);
      if (metadata !== undefined) servers.add(metadata.caller.tool_id);
    }
  }
  return servers;
}

/**
 * The blocks that replay one tool call: a call made by code still running keeps its caller,
 * preceded by the code's `server_tool_use` block where that was kept; any other is a direct call.
 */
export function toolUseBlocks(
  call: ToolCallContent,
  input: Record<string, unknown>,
  openCallers: ReadonlySet<string>,
): Array<ToolUseBlockParam | ServerToolUseBlockParam> {
  const toolUse: ToolUseBlockParam = { type: 'tool_use', id: call.id, name: call.name, input };
  const metadata = programmaticMetadata(call);
  if (metadata === undefined || !openCallers.has(metadata.caller.tool_id)) return [toolUse];
  toolUse.caller = metadata.caller as NonNullable<ToolUseBlockParam['caller']>;
  return metadata.serverToolUse === undefined ? [toolUse] : [metadata.serverToolUse, toolUse];
}

/** A `server_tool_use` block being streamed (its input arrives as JSON deltas). */
export interface StreamedServerToolUse {
  kind: 'server';
  id: string;
  name: string;
  caller: Caller | undefined;
  /** The input of `content_block_start` (`{}` when it streams). */
  input: unknown;
  json: string;
}

/**
 * Collects, while a response streams, what programmatic calls need for their replay: the
 * `server_tool_use` blocks, each `tool_use`'s caller, and the container id.
 */
export class ProgrammaticCapture {
  readonly #servers = new Map<string, StreamedServerToolUse>();
  readonly #callers = new Map<string, ProgrammaticMetadata['caller']>();
  #container: string | undefined;

  /** A `server_tool_use` block started: kept (and its deltas appended to it). */
  serverToolUse(block: {
    id: string;
    name: string;
    input: unknown;
    caller?: unknown;
  }): StreamedServerToolUse {
    const server: StreamedServerToolUse = {
      kind: 'server',
      id: block.id,
      name: block.name,
      caller: block.caller as Caller | undefined,
      input: block.input,
      json: '',
    };
    this.#servers.set(block.id, server);
    return server;
  }

  /** A `tool_use` block started: its caller, when code made it. */
  toolUse(block: { id: string; caller?: unknown }): void {
    const caller = block.caller as Caller | undefined;
    if (caller !== undefined && caller !== null && caller.type !== 'direct')
      this.#callers.set(block.id, caller);
  }

  /** `message_delta` named the container. */
  container(container: { id?: unknown } | null | undefined): void {
    if (typeof container?.id === 'string') this.#container = container.id;
  }

  /** The content with each programmatic call's replay data in its `providerMetadata`. */
  annotate(content: AssistantContent[]): AssistantContent[] {
    if (this.#callers.size === 0) return content;
    const placed = new Set<string>();
    return content.map((block) => {
      if (block.type !== 'toolCall') return block;
      const caller = this.#callers.get(block.id);
      if (caller === undefined) return block;
      const metadata: ProgrammaticMetadata = { caller };
      const server = this.#servers.get(caller.tool_id);
      if (server !== undefined && !placed.has(server.id)) {
        placed.add(server.id);
        metadata.serverToolUse = serverBlock(server);
      }
      if (this.#container !== undefined) metadata.container = this.#container;
      return {
        ...block,
        providerMetadata: { ...block.providerMetadata, anthropic: metadata },
      };
    });
  }
}

function serverBlock(server: StreamedServerToolUse): ServerToolUseBlockParam {
  let input = server.input;
  if (server.json !== '') {
    try {
      input = JSON.parse(server.json);
    } catch {
      // Cut off: the start's input is all there is.
    }
  }
  const block: ServerToolUseBlockParam = {
    type: 'server_tool_use',
    id: server.id,
    name: server.name as ServerToolUseBlockParam['name'],
    input,
  };
  if (server.caller !== undefined)
    block.caller = server.caller as NonNullable<ServerToolUseBlockParam['caller']>;
  return block;
}
