// Our messages as Chat Completions messages.
import {
  jsonContentAsText,
  type ProviderRequest,
  type ToolResultMessage,
  type UserContent,
} from '@agent/core';
import type {
  ChatCompletionContentPart,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import { replayArguments } from '../openai-tools.js';

/**
 * The conversation in Chat Completions form. Thinking blocks are not sent (the API takes no
 * reasoning back); tool results keep their order; images in tool results, which a `tool`
 * message cannot carry, follow in one user message after the results, each introduced by the
 * call it came from.
 */
export function toChatMessages(request: ProviderRequest): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = [];
  if (request.systemPrompt !== undefined && request.systemPrompt !== '')
    out.push({ role: 'system', content: request.systemPrompt });
  let pendingImages: ChatCompletionContentPart[] = [];
  const flushImages = () => {
    if (pendingImages.length === 0) return;
    out.push({ role: 'user', content: pendingImages });
    pendingImages = [];
  };
  for (const message of request.messages) {
    if (message.role !== 'toolResult') flushImages();
    switch (message.role) {
      case 'user':
        out.push({
          role: 'user',
          content:
            typeof message.content === 'string' ? message.content : message.content.map(toChatPart),
        });
        break;
      case 'assistant': {
        let text = '';
        const toolCalls: Array<{
          id: string;
          type: 'function';
          function: { name: string; arguments: string };
        }> = [];
        for (const block of message.content) {
          if (block.type === 'text') text += block.text;
          else if (block.type === 'toolCall')
            toolCalls.push({
              id: block.id,
              type: 'function',
              function: { name: block.name, arguments: replayArguments(block) },
            });
        }
        if (text === '' && toolCalls.length === 0) break;
        out.push({
          role: 'assistant',
          content: text === '' ? null : text,
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        });
        break;
      }
      case 'toolResult':
        out.push({
          role: 'tool',
          tool_call_id: message.toolCallId,
          content: toolResultText(message),
        });
        for (const block of message.content) {
          if (block.type !== 'image') continue;
          pendingImages.push(
            {
              type: 'text',
              text: `Image from the result of tool call ${message.toolCallId} (${message.toolName}):`,
            },
            toChatPart(block),
          );
        }
        break;
      default: {
        const _exhaustive: never = message;
        return _exhaustive;
      }
    }
  }
  flushImages();
  return out;
}

function toChatPart(content: UserContent): ChatCompletionContentPart {
  if (content.type === 'text') return { type: 'text', text: content.text };
  return {
    type: 'image_url',
    image_url: { url: `data:${content.mimeType};base64,${content.data}` },
  };
}

/** The text of a tool result; a result with only images says so, because an empty one confuses models. */
export function toolResultText(message: ToolResultMessage): string {
  // Tool messages take text only: JSON goes as its text.
  const text = jsonContentAsText(message.content)
    .filter((block) => block.type === 'text')
    .map((block) => block.text)
    .join('\n');
  if (text !== '') return text;
  return message.content.some((block) => block.type === 'image')
    ? '(see the attached image)'
    : '(no output)';
}
