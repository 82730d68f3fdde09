import { jsonContentText, type Message } from './messages.js';
import type { ProviderRequest } from './provider.js';

/**
 * Characters per token of the estimate. Real tokenizers give 3–4.5 for English and code; 4 is
 * the usual rule of thumb, and the compaction threshold leaves room for the error.
 */
const charactersPerToken = 4;
/** What one image costs, roughly, at the sizes providers scale images to (Anthropic: ~1,600). */
const tokensPerImage = 1_600;
/** Role markers and block framing of one message. */
const tokensPerMessage = 4;

/** Estimated tokens of `characters` characters of text. */
export function estimateTextTokens(characters: number): number {
  return Math.ceil(characters / charactersPerToken);
}

/** Estimated tokens of one message as a provider would count it (text, thinking, calls, images). */
export function estimateMessageTokens(message: Message): number {
  if (typeof message.content === 'string')
    return tokensPerMessage + estimateTextTokens(message.content.length);
  let characters = 0;
  let images = 0;
  for (const block of message.content) {
    switch (block.type) {
      case 'text':
        characters += block.text.length;
        break;
      case 'image':
        images++;
        break;
      case 'json':
        characters += jsonContentText(block).length;
        break;
      case 'thinking':
        characters += block.thinking.length + (block.signature?.length ?? 0) / 4;
        break;
      case 'toolCall':
        characters += block.name.length + block.arguments.length + block.id.length;
        break;
      case 'opaque':
        // Sent back to its provider as JSON (e.g. search results with their encrypted pages).
        characters += JSON.stringify(block.data)?.length ?? 0;
        break;
      default: {
        const _exhaustive: never = block;
        return _exhaustive;
      }
    }
  }
  return tokensPerMessage + estimateTextTokens(characters) + images * tokensPerImage;
}

/** Estimated tokens of a whole request: system prompt, tool definitions and messages. */
export function estimateRequestTokens(request: ProviderRequest): number {
  let tokens = estimateTextTokens(request.systemPrompt?.length ?? 0);
  if (request.tools !== undefined && request.tools.length > 0)
    tokens += estimateTextTokens(JSON.stringify(request.tools).length);
  for (const message of request.messages) tokens += estimateMessageTokens(message);
  return tokens;
}
