import {
  type AssistantMessage,
  jsonContentAsText,
  type Message,
  type ProviderRequest,
  type ThinkingLevel,
  type ToolChoice,
  type ToolResultMessage,
  type UserMessage,
} from '@agent/core';
import type {
  JSONSchema7,
  LanguageModelV4CallOptions,
  LanguageModelV4Message,
  LanguageModelV4Prompt,
  LanguageModelV4ToolChoice,
  LanguageModelV4ToolResultOutput,
  SharedV4ProviderOptions,
} from '@ai-sdk/provider';
import { jsonValue } from './json-value.js';

// Our request and conversation in the AI SDK's language-model specification (v4). Opaque data a
// provider needs back on the next turn travels as its `providerMetadata`: on a tool call as is,
// on a thinking block JSON-encoded in `signature` (see ai-sdk-stream.ts).

/** The call options for one `doStream`, without the abort signal. */
export function toCallOptions(
  request: ProviderRequest,
  providerOptions: SharedV4ProviderOptions | undefined,
): LanguageModelV4CallOptions {
  const options: LanguageModelV4CallOptions = { prompt: toPrompt(request) };
  if (request.tools !== undefined && request.tools.length > 0) {
    options.tools = request.tools.map((definition) => ({
      type: 'function',
      name: definition.name,
      description: definition.description,
      inputSchema: definition.parameters as JSONSchema7,
    }));
  }
  if (request.toolChoice !== undefined) options.toolChoice = toToolChoice(request.toolChoice);
  if (request.thinkingLevel !== undefined) options.reasoning = toReasoning(request.thinkingLevel);
  if (request.maxOutputTokens !== undefined) options.maxOutputTokens = request.maxOutputTokens;
  if (request.temperature !== undefined) options.temperature = request.temperature;
  if (providerOptions !== undefined) options.providerOptions = providerOptions;
  return options;
}

function toToolChoice(choice: ToolChoice): LanguageModelV4ToolChoice {
  return typeof choice === 'string' ? { type: choice } : { type: 'tool', toolName: choice.name };
}

function toReasoning(level: ThinkingLevel): NonNullable<LanguageModelV4CallOptions['reasoning']> {
  return level === 'off' ? 'none' : level;
}

/** The system prompt and the conversation; consecutive tool results share one `tool` message. */
export function toPrompt(request: ProviderRequest): LanguageModelV4Prompt {
  const prompt: LanguageModelV4Prompt = [];
  if (request.systemPrompt !== undefined && request.systemPrompt !== '') {
    prompt.push({ role: 'system', content: request.systemPrompt });
  }
  for (const message of request.messages) {
    const last = prompt[prompt.length - 1];
    if (message.role === 'toolResult' && last?.role === 'tool') {
      last.content.push(toToolResultPart(message));
    } else {
      prompt.push(toModelMessage(message));
    }
  }
  return prompt;
}

function toModelMessage(message: Message): LanguageModelV4Message {
  switch (message.role) {
    case 'user':
      return toUserMessage(message);
    case 'assistant':
      return toAssistantMessage(message);
    case 'toolResult':
      return { role: 'tool', content: [toToolResultPart(message)] };
    default: {
      const _exhaustive: never = message;
      return _exhaustive;
    }
  }
}

function toUserMessage(message: UserMessage): LanguageModelV4Message {
  if (typeof message.content === 'string') {
    return { role: 'user', content: [{ type: 'text', text: message.content }] };
  }
  return {
    role: 'user',
    content: message.content.map((block) =>
      block.type === 'text'
        ? { type: 'text', text: block.text }
        : { type: 'file', mediaType: block.mimeType, data: { type: 'data', data: block.data } },
    ),
  };
}

function toAssistantMessage(message: AssistantMessage): LanguageModelV4Message {
  const content: Extract<LanguageModelV4Message, { role: 'assistant' }>['content'] = [];
  for (const block of message.content) {
    switch (block.type) {
      case 'text':
        if (block.text !== '') content.push({ type: 'text', text: block.text });
        break;
      case 'thinking': {
        const providerOptions = decodeMetadata(block.signature);
        // A redacted block is only its provider data; without any there is nothing to send back.
        if (block.redacted === true && providerOptions === undefined) break;
        content.push({
          type: 'reasoning',
          text: block.thinking,
          ...(providerOptions === undefined ? {} : { providerOptions }),
        });
        break;
      }
      case 'toolCall':
        content.push({
          type: 'tool-call',
          toolCallId: block.id,
          toolName: block.name,
          input: parseArguments(block.arguments),
          ...(block.providerMetadata === undefined
            ? {}
            : { providerOptions: block.providerMetadata as SharedV4ProviderOptions }),
        });
        break;
      case 'opaque':
        // A provider's own blocks (e.g. Anthropic server search): not part of the AI SDK's prompt.
        break;
      default: {
        const _exhaustive: never = block;
        return _exhaustive;
      }
    }
  }
  return { role: 'assistant', content };
}

/** The arguments as sent back: the parsed object, or `{}` for text that never parsed (its call got an error result). */
function parseArguments(text: string): unknown {
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch {
    return {};
  }
}

function toToolResultPart(
  message: ToolResultMessage,
): Extract<LanguageModelV4Message, { role: 'tool' }>['content'][number] {
  return {
    type: 'tool-result',
    toolCallId: message.toolCallId,
    toolName: message.toolName,
    output: toToolResultOutput(message),
  };
}

function toToolResultOutput(message: ToolResultMessage): LanguageModelV4ToolResultOutput {
  // The AI SDK carries JSON natively: a result that is one JSON block goes as that value.
  const [only] = message.content;
  if (message.content.length === 1 && only?.type === 'json')
    return { type: message.isError ? 'error-json' : 'json', value: jsonValue(only) };
  const blocks = jsonContentAsText(message.content);
  const textOnly = blocks.every((block) => block.type === 'text');
  if (textOnly) {
    const value = blocks.map((block) => (block.type === 'text' ? block.text : '')).join('\n');
    return { type: message.isError ? 'error-text' : 'text', value };
  }
  return {
    type: 'content',
    value: blocks.map((block) =>
      block.type === 'text'
        ? { type: 'text', text: block.text }
        : { type: 'file', mediaType: block.mimeType, data: { type: 'data', data: block.data } },
    ),
  };
}

/** Marks a thinking block's `signature` that holds AI SDK provider metadata. */
const metadataPrefix = 'ai-sdk:';

/** Provider metadata as an opaque `signature` string. */
export function encodeMetadata(metadata: SharedV4ProviderOptions): string {
  return metadataPrefix + JSON.stringify(metadata);
}

/** The provider metadata a `signature` from {@link encodeMetadata} holds; undefined for any other. */
export function decodeMetadata(signature: string | undefined): SharedV4ProviderOptions | undefined {
  if (signature === undefined || !signature.startsWith(metadataPrefix)) return undefined;
  try {
    const value: unknown = JSON.parse(signature.slice(metadataPrefix.length));
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as SharedV4ProviderOptions)
      : undefined;
  } catch {
    return undefined;
  }
}
