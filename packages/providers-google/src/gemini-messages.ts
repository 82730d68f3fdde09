import {
  type AssistantMessage,
  jsonContentAsText,
  jsonContentText,
  type Message,
  parseToolArguments,
  type ToolResultContent,
  type ToolResultMessage,
  type UserContent,
} from '@agent/core';
import type { Content, Part } from '@google/genai';

/** Documented placeholder that lets Gemini 3 accept a function call it did not sign (e.g. from another provider). */
export const skipThoughtSignature = 'skip_thought_signature_validator';

function userParts(content: string | readonly UserContent[]): Part[] {
  if (typeof content === 'string') return content === '' ? [] : [{ text: content }];
  return content.flatMap((block): Part[] => {
    if (block.type === 'text') return block.text === '' ? [] : [{ text: block.text }];
    return [{ inlineData: { mimeType: block.mimeType, data: block.data } }];
  });
}

function metadataString(
  metadata: Record<string, unknown> | undefined,
  key: string,
): string | undefined {
  const value = metadata?.[key];
  return typeof value === 'string' ? value : undefined;
}

function modelParts(
  message: AssistantMessage,
  providerId: string,
  droppedCalls: Set<string>,
  anonymousCalls: Set<string>,
): Part[] {
  const incomplete = message.stopReason === 'error' || message.stopReason === 'aborted';
  const sameProvider = message.provider === providerId;
  const parts: Part[] = [];
  for (const block of message.content) {
    switch (block.type) {
      case 'text':
        if (block.text !== '') parts.push({ text: block.text });
        break;
      case 'thinking': {
        if (incomplete || block.redacted === true) break;
        if (sameProvider) {
          const part: Part = { text: block.thinking, thought: true };
          if (block.signature !== undefined) part.thoughtSignature = block.signature;
          if (block.thinking !== '' || part.thoughtSignature !== undefined) parts.push(part);
        } else if (block.thinking.trim() !== '') parts.push({ text: block.thinking });
        break;
      }
      case 'toolCall': {
        if (incomplete) {
          droppedCalls.add(block.id);
          break;
        }
        // Ids we generated (the model sent none) are not sent back.
        const generated = block.providerMetadata?.generatedId === true;
        if (generated) anonymousCalls.add(block.id);
        const part: Part = {
          functionCall: {
            name: block.name,
            args: parseToolArguments(block.arguments),
            ...(generated ? {} : { id: block.id }),
          },
        };
        const signature = sameProvider
          ? metadataString(block.providerMetadata, 'thoughtSignature')
          : skipThoughtSignature;
        if (signature !== undefined) part.thoughtSignature = signature;
        parts.push(part);
        break;
      }
      case 'opaque':
        // Another provider's own data (e.g. Anthropic's server search blocks): not Gemini's.
        break;
      default: {
        const _exhaustive: never = block;
        return _exhaustive;
      }
    }
  }
  return parts;
}

/**
 * The value of a JSON block as it will be written into the request: what JSON can carry of it
 * (`undefined` → null); a value JSON cannot write at all goes as its description text.
 */
function jsonValue(block: ToolResultContent | undefined): unknown {
  if (block?.type !== 'json') return null;
  try {
    return JSON.parse(JSON.stringify(block.value) ?? 'null') as unknown;
  } catch {
    return jsonContentText(block);
  }
}

function toolResultParts(
  message: ToolResultMessage,
  anonymous: boolean,
): { response: Part; images: Part[] } {
  const text = jsonContentAsText(message.content)
    .filter((block) => block.type === 'text')
    .map((block) => block.text)
    .join('\n');
  const images = message.content.flatMap((block): Part[] =>
    block.type === 'image' ? [{ inlineData: { mimeType: block.mimeType, data: block.data } }] : [],
  );
  // A function response is JSON: a result that is only JSON goes as the value itself (one block)
  // or the list of values; mixed with text, everything goes as text.
  const nonImage = message.content.filter((block) => block.type !== 'image');
  const onlyJson = nonImage.length > 0 && nonImage.every((block) => block.type === 'json');
  const payload: unknown = onlyJson
    ? nonImage.length === 1
      ? jsonValue(nonImage[0])
      : nonImage.map(jsonValue)
    : text;
  return {
    response: {
      functionResponse: {
        name: message.toolName,
        response: message.isError ? { error: payload } : { output: payload },
        ...(anonymous ? {} : { id: message.toolCallId }),
      },
    },
    images,
  };
}

/**
 * Converts a conversation to Gemini `contents`: assistant turns become `model` contents with
 * thought parts and signatures, consecutive tool results one `user` content of function
 * responses in call order.
 */
export function toGeminiContents(messages: readonly Message[], providerId: string): Content[] {
  const out: Content[] = [];
  const droppedCalls = new Set<string>();
  const anonymousCalls = new Set<string>();
  const push = (role: 'user' | 'model', parts: Part[]) => {
    if (parts.length === 0) return;
    const last = out[out.length - 1];
    if (last !== undefined && last.role === role) {
      last.parts = [...(last.parts ?? []), ...parts];
      return;
    }
    out.push({ role, parts });
  };
  for (const message of messages) {
    switch (message.role) {
      case 'user':
        push('user', userParts(message.content));
        break;
      case 'assistant':
        push('model', modelParts(message, providerId, droppedCalls, anonymousCalls));
        break;
      case 'toolResult': {
        if (droppedCalls.has(message.toolCallId)) break;
        const { response, images } = toolResultParts(
          message,
          anonymousCalls.has(message.toolCallId),
        );
        const last = out[out.length - 1];
        if (last?.role === 'user' && last.parts !== undefined) {
          // Function responses stay together, in call order; images follow them.
          let index = 0;
          last.parts.forEach((part, position) => {
            if (part.functionResponse !== undefined) index = position + 1;
          });
          last.parts.splice(index, 0, response);
          last.parts.push(...images);
        } else push('user', [response, ...images]);
        break;
      }
      default: {
        const _exhaustive: never = message;
        return _exhaustive;
      }
    }
  }
  return out;
}
