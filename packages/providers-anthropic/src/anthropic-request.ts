// The Messages API request body: messages, system prompt, tools (deferred, hosted, programmatic),
// prompt caching, and thinking within the model's output limit.
import type { ProviderRequest, ToolChoice, ToolDefinition } from '@agent/core';
import type {
  ToolChoice as AnthropicToolChoice,
  MessageCreateParamsStreaming,
  TextBlockParam,
  ThinkingConfigParam,
  Tool,
} from '@anthropic-ai/sdk/resources';
import { toAnthropicMessages } from './anthropic-messages.js';
import { findAnthropicModel } from './anthropic-models.js';
import { applyProgrammaticToolCalling, programmaticSetting } from './anthropic-programmatic.js';
import type { AnthropicProviderOptions, AnthropicThinkingLevel } from './anthropic-provider.js';

const defaultThinkingBudgets: Record<AnthropicThinkingLevel, number> = {
  minimal: 1024,
  low: 4096,
  medium: 10_000,
  high: 32_000,
};

function cacheControl(options: AnthropicProviderOptions) {
  const caching = options.promptCaching;
  if (caching === undefined || caching === false) return undefined;
  return caching === true
    ? { type: 'ephemeral' as const }
    : { type: 'ephemeral' as const, ttl: caching.ttl };
}

function toolChoiceParam(choice: ToolChoice): AnthropicToolChoice {
  if (choice === 'auto') return { type: 'auto' };
  if (choice === 'none') return { type: 'none' };
  if (choice === 'required') return { type: 'any' };
  return { type: 'tool', name: choice.name };
}

function toolParam(tool: ToolDefinition): Tool {
  // Anthropic accepts JSON Schema as is; only the meta keyword is dropped.
  const { $schema: _schema, ...schema } = tool.parameters;
  return { name: tool.name, description: tool.description, input_schema: schema };
}

/** Builds the Messages API request body for a provider request. */
export function buildAnthropicParams(
  request: ProviderRequest,
  providerId: string,
  options: AnthropicProviderOptions = {},
): MessageCreateParamsStreaming {
  const info = findAnthropicModel(request.model);
  let maxTokens =
    request.maxOutputTokens ?? options.defaultMaxOutputTokens ?? info?.maxOutputTokens ?? 8192;
  const cache = cacheControl(options);
  const messages = toAnthropicMessages(request.messages, providerId, request.deferredTools);
  const params: MessageCreateParamsStreaming = {
    model: request.model,
    max_tokens: maxTokens,
    messages,
    stream: true,
  };
  if (request.systemPrompt !== undefined && request.systemPrompt !== '') {
    const system: TextBlockParam = { type: 'text', text: request.systemPrompt };
    if (cache !== undefined) system.cache_control = cache;
    params.system = [system];
  }
  if (request.tools !== undefined && request.tools.length > 0) {
    const tools = request.tools.map(toolParam);
    // The breakpoint goes on the last tool sent in full: deferred ones are not in the prompt.
    const last = tools[tools.length - 1];
    if (cache !== undefined && last !== undefined) last.cache_control = cache;
    for (const deferred of request.deferredTools?.tools ?? [])
      tools.push({ ...toolParam(deferred), defer_loading: true });
    params.tools = tools;
    if (request.toolChoice !== undefined) params.tool_choice = toolChoiceParam(request.toolChoice);
  }
  for (const hosted of request.hostedTools ?? []) {
    if (hosted.type !== 'web_search') continue;
    // Anthropic's server-side web search: the model searches within this call; results come
    // back as server-tool blocks (not part of our contract) and citations on the text.
    const search: Record<string, unknown> = { type: 'web_search_20250305', name: 'web_search' };
    if (hosted.maxUses !== undefined) search.max_uses = hosted.maxUses;
    if (hosted.allowedDomains !== undefined && hosted.allowedDomains.length > 0)
      search.allowed_domains = [...hosted.allowedDomains];
    else if (hosted.blockedDomains !== undefined && hosted.blockedDomains.length > 0)
      search.blocked_domains = [...hosted.blockedDomains];
    params.tools = [
      ...(params.tools ?? []),
      search as unknown as NonNullable<typeof params.tools>[number],
    ];
  }
  applyProgrammaticToolCalling(
    params,
    request,
    programmaticSetting(options.programmaticToolCalling),
  );
  if (cache !== undefined) {
    const last = messages[messages.length - 1];
    if (last !== undefined) {
      if (typeof last.content === 'string')
        last.content = [{ type: 'text', text: last.content, cache_control: cache }];
      const block = last.content[last.content.length - 1];
      if (block !== undefined && 'cache_control' in block === false && canCache(block.type))
        (block as { cache_control?: unknown }).cache_control = cache;
    }
  }
  const level = request.thinkingLevel;
  if (level !== undefined && level !== 'off' && canThink(params)) {
    let budget = options.thinkingBudgets?.[level] ?? defaultThinkingBudgets[level];
    const ceiling = info?.maxOutputTokens;
    // max_tokens must exceed the thinking budget and leave room for the answer.
    if (maxTokens <= budget) maxTokens = budget + Math.max(1024, maxTokens);
    if (ceiling !== undefined && maxTokens > ceiling) {
      maxTokens = ceiling;
      budget = Math.min(budget, ceiling - 1024);
    }
    params.max_tokens = maxTokens;
    const thinking: ThinkingConfigParam = {
      type: 'enabled',
      budget_tokens: Math.max(1024, budget),
    };
    params.thinking = thinking;
    // The API only accepts the default temperature while thinking.
  } else if (request.temperature !== undefined) {
    // No longer in the SDK's types (deprecated by the API for newer models); sent when asked.
    (params as MessageCreateParamsStreaming & { temperature?: number }).temperature =
      request.temperature;
  }
  return params;
}

/**
 * Whether the API accepts thinking for this request: not with a forced tool choice (`any` or
 * one tool), and not when the turn being continued after tool results does not start with a
 * thinking block (its reasoning came from another provider or ran without thinking). Both
 * would be a 400; the request goes without thinking instead.
 */
function canThink(params: MessageCreateParamsStreaming): boolean {
  const choice = params.tool_choice?.type;
  if (choice === 'any' || choice === 'tool') return false;
  const messages = params.messages;
  const last = messages[messages.length - 1];
  if (last?.role !== 'user' || typeof last.content === 'string') return true;
  if (!last.content.some((block) => block.type === 'tool_result')) return true;
  const turn = messages[messages.length - 2];
  if (turn?.role !== 'assistant' || typeof turn.content === 'string') return true;
  const first = turn.content[0]?.type;
  return first === 'thinking' || first === 'redacted_thinking';
}

function canCache(type: string): boolean {
  return type === 'text' || type === 'image' || type === 'tool_result' || type === 'tool_use';
}
