// The request the agent sends the provider each turn: the conversation as the model sees it
// (compaction summary, older tool results through the history transform) and the tools'
// definitions, each rebuilt only when what it depends on changed.
import type { AgentOptions } from './agent-options.js';
import type { ContextCompactor } from './context-compactor.js';
import { type Message, type ToolCallContent, toolCallsOf } from './messages.js';
import type { ProviderRequest } from './provider.js';
import { olderToolResultForModel } from './result-budget.js';
import { fitToolDefinition } from './schema-budget.js';
import { type AnyAgentTool, type ToolDefinition, toToolDefinition } from './tool.js';
import type { ToolCatalogue } from './tool-catalogue.js';
import type { ToolRegistry } from './tool-registry.js';

/** Default per-result character budget of tool results older than the newest batch. */
export const defaultMaxResultChars = 30_000;
/** Per-tool definition budget in JSON characters (~6k tokens); past it the schema is shortened. */
const defaultMaxToolDefinitionChars = 24_000;

/** What the request builder reads from its agent (live: the conversation grows in place). */
export interface ProviderRequestSource {
  readonly options: AgentOptions;
  readonly tools: ToolRegistry;
  readonly messages: readonly Message[];
  readonly catalogue: ToolCatalogue;
  readonly compactor: ContextCompactor;
}

/**
 * Builds the agent's provider requests. Stored history stays whole; what is sent is a view of it,
 * cached across turns so that building it stays linear in the history.
 */
export class ProviderRequestBuilder {
  readonly #source: ProviderRequestSource;
  readonly #nativeDefinitions: {
    version: number;
    value:
      | { tools: ToolDefinition[]; deferred: NonNullable<ProviderRequest['deferredTools']> }
      | undefined;
  } = { version: -1, value: undefined };
  readonly #definitions: { version: number; loaded: number; list: ToolDefinition[] } = {
    version: -1,
    loaded: -1,
    list: [],
  };
  readonly #providerPrefix: {
    messages: Message[];
    start: number;
    end: number;
    registryVersion: number;
  } = {
    messages: [],
    start: 0,
    end: 0,
    registryVersion: -1,
  };

  constructor(source: ProviderRequestSource) {
    this.#source = source;
  }

  /** The next request: the conversation as sent, the tools, and the agent's model settings. */
  request(): ProviderRequest {
    const options = this.#source.options;
    const request: ProviderRequest = {
      model: options.model,
      messages: this.#messagesForProvider(),
      tools: this.#toolDefinitions(),
    };
    const native = this.#nativeDeferral();
    if (native !== undefined) {
      request.tools = native.tools;
      request.deferredTools = native.deferredTools;
    }
    if (options.systemPrompt !== undefined) request.systemPrompt = options.systemPrompt;
    if (options.toolChoice !== undefined) request.toolChoice = options.toolChoice;
    if (options.thinkingLevel !== undefined) request.thinkingLevel = options.thinkingLevel;
    if (options.maxOutputTokens !== undefined) request.maxOutputTokens = options.maxOutputTokens;
    if (options.temperature !== undefined) request.temperature = options.temperature;
    if (options.hostedTools !== undefined && options.hostedTools.length > 0)
      request.hostedTools = options.hostedTools;
    return request;
  }

  /** Stored message `index` as requests show it once a newer assistant message follows, or undefined when left out. */
  olderView(index: number): Message | undefined {
    const messages = this.#source.messages;
    const message = messages[index];
    if (message === undefined || isDroppedFromRequest(message)) return undefined;
    if (message.role !== 'toolResult') return message;
    const tool = this.#source.tools.get(message.toolName);
    // Only a refetchable result's stub names its call: look that up only then.
    const call =
      tool?.policy?.history?.refetchable === true
        ? callBefore(messages, index, message.toolCallId)
        : undefined;
    const defaultLimit = this.#source.options.maxResultChars ?? defaultMaxResultChars;
    return olderToolResultForModel(message, tool, defaultLimit, call);
  }

  /**
   * With a provider that loads deferred tools natively: the tools sent at once and every
   * deferred definition, rebuilt only when the registry changes — the same arrays every turn,
   * whatever was loaded (the provider learns that from the search results in the history).
   */
  #nativeDeferral():
    | { tools: ToolDefinition[]; deferredTools: NonNullable<ProviderRequest['deferredTools']> }
    | undefined {
    const { options, tools, catalogue } = this.#source;
    if (options.toolSearch?.native === false) return undefined;
    if (options.provider.defersTools?.(options.model) !== true) return undefined;
    const cache = this.#nativeDefinitions;
    if (cache.version !== tools.version) {
      const view = catalogue.nativeView();
      const budget = options.maxToolDefinitionChars ?? defaultMaxToolDefinitionChars;
      const fit = (tool: AnyAgentTool) => fitToolDefinition(toToolDefinition(tool), budget);
      cache.value =
        view === undefined
          ? undefined
          : {
              tools: view.eager.map(fit),
              deferred: {
                searchTool: catalogue.searchToolName,
                tools: view.deferred.map(fit),
              },
            };
      cache.version = tools.version;
    }
    const value = cache.value;
    return value === undefined
      ? undefined
      : { tools: value.tools.slice(), deferredTools: value.deferred };
  }

  /** The tools' definitions, rebuilt only when the registry changes (a fresh array per request). */
  #toolDefinitions(): ToolDefinition[] {
    const { options, tools, catalogue } = this.#source;
    const cache = this.#definitions;
    const loaded = catalogue.loaded.length;
    if (cache.version !== tools.version || cache.loaded !== loaded) {
      const budget = options.maxToolDefinitionChars ?? defaultMaxToolDefinitionChars;
      cache.list = catalogue
        .visibleTools()
        .map((tool) => fitToolDefinition(toToolDefinition(tool), budget));
      cache.version = tools.version;
      cache.loaded = loaded;
    }
    return cache.list.slice();
  }

  /**
   * The copy of the conversation sent to the provider: the latest compaction's summary in place
   * of the messages it covers; tool results older than the newest batch through the history
   * transform (`olderToolResultForModel`); failed empty assistant messages dropped. Stored
   * history stays whole. Everything before the last assistant message is final, so that prefix
   * is built once and extended each turn (linear, not quadratic, in the history).
   */
  #messagesForProvider(): Message[] {
    const { messages, compactor, tools } = this.#source;
    const start = compactor.firstKeptIndex;
    let lastAssistant = start;
    for (let index = messages.length - 1; index > start; index--) {
      if (messages[index]?.role === 'assistant') {
        lastAssistant = index;
        break;
      }
    }
    const cache = this.#providerPrefix;
    if (
      cache.registryVersion !== tools.version ||
      cache.start !== start ||
      cache.end > lastAssistant
    ) {
      cache.messages = [];
      cache.start = start;
      cache.end = start;
      cache.registryVersion = tools.version;
    }
    for (let index = cache.end; index < lastAssistant; index++) {
      const message = this.olderView(index);
      if (message !== undefined) pushInCallOrder(cache.messages, message);
    }
    cache.end = lastAssistant;
    // A fresh array per request (a provider may keep it), copied once: `concat` allocates it at
    // its final size, where `slice` and then `push` would copy the prefix twice.
    const tail: Message[] = [];
    for (let index = lastAssistant; index < messages.length; index++) {
      const message = messages[index] as Message;
      if (!isDroppedFromRequest(message)) pushInCallOrder(tail, message);
    }
    const summary = compactor.summaryMessage();
    return summary === undefined
      ? cache.messages.concat(tail)
      : ([summary] as Message[]).concat(cache.messages, tail);
  }
}

/**
 * Appends `message` to the request's copy; a tool result that history holds after a user message
 * (a saved conversation that ended `assistant (calls), user`: its calls were answered as
 * interrupted only when the next run began) goes right after its call's assistant message and
 * that message's other results instead — every provider refuses a result cut off from its call.
 * Stored history keeps its order (compactions and checkpoints count its indices).
 */
function pushInCallOrder(list: Message[], message: Message): void {
  const previous = list.at(-1);
  if (message.role === 'toolResult' && previous !== undefined && previous.role === 'user') {
    for (let index = list.length - 2; index >= 0; index--) {
      const candidate = list[index] as Message;
      if (candidate.role !== 'assistant') continue;
      if (toolCallsOf(candidate).some((call) => call.id === message.toolCallId)) {
        let at = index + 1;
        while (list[at]?.role === 'toolResult') at++;
        list.splice(at, 0, message);
        return;
      }
      break;
    }
  }
  list.push(message);
}

/** The tool call `id` of the nearest assistant message before `index` that made it. */
function callBefore(
  messages: readonly Message[],
  index: number,
  id: string,
): ToolCallContent | undefined {
  for (let at = index - 1; at >= 0; at--) {
    const message = messages[at] as Message;
    if (message.role !== 'assistant') continue;
    const call = toolCallsOf(message).find((candidate) => candidate.id === id);
    if (call !== undefined) return call;
  }
  return undefined;
}

function isDroppedFromRequest(message: Message): boolean {
  return (
    message.role === 'assistant' &&
    (message.stopReason === 'error' || message.stopReason === 'aborted') &&
    message.content.length === 0
  );
}
