// The Chat Completions request body.
import type { ProviderRequest } from '@agent/core';
import type {
  ChatCompletionCreateParamsStreaming,
  ChatCompletionToolChoiceOption,
} from 'openai/resources/chat/completions';
import type { OpenAICompat } from '../compat.js';
import type { PreparedTools } from '../openai-tools.js';
import type { OpenAIProgrammaticOptions } from '../responses/responses-programmatic.js';
import { toChatMessages } from './chat-messages.js';

/** Everything a request builder needs besides the request. */
export interface BuildContext {
  compat: OpenAICompat;
  tools: PreparedTools;
  /** Send the reasoning effort (the model takes one, or is unknown). */
  reasoning: boolean;
  providerId: string;
  /** Programmatic tool calling (Responses API; see responses-programmatic.ts). */
  programmatic?: OpenAIProgrammaticOptions;
}

/** The Chat Completions request body for a provider request. */
export function buildChatRequest(
  request: ProviderRequest,
  context: BuildContext,
): ChatCompletionCreateParamsStreaming {
  const body: ChatCompletionCreateParamsStreaming = {
    model: request.model,
    messages: toChatMessages(request),
    stream: true,
  };
  if (context.compat.streamUsage) body.stream_options = { include_usage: true };
  if (context.tools.tools.length > 0) {
    body.tools = context.tools.tools.map((tool) => ({
      type: 'function',
      function: {
        name: tool.name,
        description: tool.description,
        parameters: tool.parameters,
        ...(tool.strict ? { strict: true } : {}),
      },
    }));
    if (request.toolChoice !== undefined) body.tool_choice = chatToolChoice(request.toolChoice);
  }
  if (request.maxOutputTokens !== undefined) {
    if (context.compat.maxTokensField === 'max_tokens') body.max_tokens = request.maxOutputTokens;
    else body.max_completion_tokens = request.maxOutputTokens;
  }
  if (request.temperature !== undefined) body.temperature = request.temperature;
  const level = request.thinkingLevel;
  if (context.compat.reasoningEffort && context.reasoning && level !== undefined && level !== 'off')
    body.reasoning_effort = level;
  return body;
}

export function chatToolChoice(
  choice: NonNullable<ProviderRequest['toolChoice']>,
): ChatCompletionToolChoiceOption {
  if (typeof choice === 'string') return choice;
  return { type: 'function', function: { name: choice.name } };
}
