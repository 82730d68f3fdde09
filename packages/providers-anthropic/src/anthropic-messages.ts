import {
  type AssistantMessage,
  type DeferredToolDefinitions,
  jsonContentAsText,
  type Message,
  type OpaqueContent,
  parseToolArguments,
  type ToolResultMessage,
  type UserContent,
} from '@agent/core';
import type {
  ContentBlockParam,
  ImageBlockParam,
  MessageParam,
  TextBlockParam,
  ToolReferenceBlockParam,
  ToolResultBlockParam,
} from '@anthropic-ai/sdk/resources';
import { openExecutions, programmaticServers, toolUseBlocks } from './anthropic-programmatic.js';

type ImageMediaType = 'image/jpeg' | 'image/png' | 'image/gif' | 'image/webp';
const imageMediaTypes = new Set<string>(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

// The API rejects empty text blocks, and whitespace-only ones too (`text content blocks must
// contain non-whitespace text`): such blocks are never sent.
function isBlank(text: string): boolean {
  return text.trim() === '';
}

function imageBlock(data: string, mimeType: string): ImageBlockParam | TextBlockParam {
  if (!imageMediaTypes.has(mimeType))
    return { type: 'text', text: `[image of unsupported type ${mimeType} omitted]` };
  return {
    type: 'image',
    source: { type: 'base64', media_type: mimeType as ImageMediaType, data },
  };
}

function userBlocks(content: string | readonly UserContent[]): ContentBlockParam[] {
  if (typeof content === 'string') return isBlank(content) ? [] : [{ type: 'text', text: content }];
  const blocks: ContentBlockParam[] = [];
  for (const block of content) {
    if (block.type === 'text') {
      if (!isBlank(block.text)) blocks.push({ type: 'text', text: block.text });
    } else blocks.push(imageBlock(block.data, block.mimeType));
  }
  return blocks;
}

/**
 * The deferred tools a search result loaded, as `tool_reference` blocks: the API then expands
 * their definitions (sent with `defer_loading`) into the model's context at this point. Only
 * names among the deferred tools: a reference to any other tool is a 400.
 */
function toolReferences(
  message: ToolResultMessage,
  deferral: DeferredToolDefinitions | undefined,
): ToolReferenceBlockParam[] {
  if (deferral === undefined || message.toolName !== deferral.searchTool) return [];
  const loaded = (message.details as { loaded?: unknown } | undefined)?.loaded;
  if (!Array.isArray(loaded)) return [];
  const deferred = new Set(deferral.tools.map((tool) => tool.name));
  return loaded
    .filter((name): name is string => typeof name === 'string' && deferred.has(name))
    .map((name) => ({ type: 'tool_reference', tool_name: name }));
}

function toolResultBlock(
  message: ToolResultMessage,
  deferral: DeferredToolDefinitions | undefined,
): ToolResultBlockParam {
  const content: Array<TextBlockParam | ImageBlockParam | ToolReferenceBlockParam> = [];
  // Anthropic's tool results take text and images: JSON goes as its text.
  for (const block of jsonContentAsText(message.content)) {
    if (block.type === 'text') {
      if (!isBlank(block.text)) content.push({ type: 'text', text: block.text });
    } else content.push(imageBlock(block.data, block.mimeType));
  }
  content.push(...toolReferences(message, deferral));
  const result: ToolResultBlockParam = {
    type: 'tool_result',
    tool_use_id: message.toolCallId,
    content: content.length > 0 ? content : [{ type: 'text', text: '(no output)' }],
  };
  if (message.isError) result.is_error = true;
  return result;
}

// Kinds our own content covers: an opaque block of one of these never came from the stream (it
// keeps only server blocks and kinds this version does not know) — a hand-edited session could
// otherwise slip text or a tool result the transcript never shows into what the model reads.
const ownKinds = new Set([
  'text',
  'image',
  'document',
  'search_result',
  'thinking',
  'redacted_thinking',
  'tool_use',
  'tool_result',
  'tool_reference',
]);

/**
 * An opaque block as it goes back: only to the provider that produced it, from a turn that ended
 * well (a cut-off turn's server call may lack its result), never a kind our own content covers,
 * and not the code execution that made programmatic calls (those calls are replayed on their
 * own, see anthropic-programmatic.ts).
 */
function opaqueBlock(
  block: OpaqueContent,
  providerId: string,
  programmaticServers: ReadonlySet<string>,
): ContentBlockParam | undefined {
  const data = block.data;
  if (block.provider !== providerId || typeof data?.type !== 'string' || ownKinds.has(data.type))
    return undefined;
  if (
    programmaticServers.has(data.id as string) ||
    programmaticServers.has(data.tool_use_id as string)
  )
    return undefined;
  return data as unknown as ContentBlockParam;
}

function assistantBlocks(
  message: AssistantMessage,
  providerId: string,
  droppedCalls: Set<string>,
  programmatic: { openCallers: ReadonlySet<string>; servers: ReadonlySet<string> },
): ContentBlockParam[] {
  const incomplete = message.stopReason === 'error' || message.stopReason === 'aborted';
  const sameProvider = message.provider === providerId;
  const blocks: ContentBlockParam[] = [];
  for (const block of message.content) {
    switch (block.type) {
      case 'text':
        if (!isBlank(block.text)) blocks.push({ type: 'text', text: block.text });
        break;
      case 'thinking':
        if (incomplete) break;
        if (sameProvider && block.redacted === true && block.signature !== undefined)
          blocks.push({ type: 'redacted_thinking', data: block.signature });
        else if (sameProvider && block.signature !== undefined && block.signature !== '')
          blocks.push({ type: 'thinking', thinking: block.thinking, signature: block.signature });
        // Unsigned reasoning (another provider, or cut off) cannot be replayed as thinking.
        else if (!isBlank(block.thinking)) blocks.push({ type: 'text', text: block.thinking });
        break;
      case 'toolCall':
        // A cut-off turn's calls were never executed; their results are dropped too.
        if (incomplete) droppedCalls.add(block.id);
        // A call made by code still running keeps its caller (see anthropic-programmatic.ts).
        else
          blocks.push(
            ...toolUseBlocks(block, parseToolArguments(block.arguments), programmatic.openCallers),
          );
        break;
      case 'opaque': {
        const opaque =
          incomplete || !sameProvider
            ? undefined
            : opaqueBlock(block, providerId, programmatic.servers);
        if (opaque !== undefined) blocks.push(opaque);
        break;
      }
      default: {
        const _exhaustive: never = block;
        return _exhaustive;
      }
    }
  }
  return blocks;
}

/**
 * Converts a conversation to Anthropic `messages`: consecutive tool results become one user
 * message of `tool_result` blocks in call order; thinking blocks keep their signatures; with
 * native deferral, a search result carries `tool_reference` blocks for what it loaded.
 */
export function toAnthropicMessages(
  messages: readonly Message[],
  providerId: string,
  deferral?: DeferredToolDefinitions,
): MessageParam[] {
  const out: MessageParam[] = [];
  const droppedCalls = new Set<string>();
  const programmatic = {
    openCallers: openExecutions(messages).callers,
    servers: programmaticServers(messages),
  };
  const push = (role: 'user' | 'assistant', blocks: ContentBlockParam[]) => {
    if (blocks.length === 0) return;
    const last = out[out.length - 1];
    // The API wants alternating roles: merge into the previous message of the same role.
    if (last !== undefined && last.role === role && Array.isArray(last.content)) {
      last.content.push(...blocks);
      return;
    }
    out.push({ role, content: blocks });
  };
  for (const message of messages) {
    switch (message.role) {
      case 'user':
        push('user', userBlocks(message.content));
        break;
      case 'assistant':
        push('assistant', assistantBlocks(message, providerId, droppedCalls, programmatic));
        break;
      case 'toolResult':
        if (!droppedCalls.has(message.toolCallId))
          push('user', [toolResultBlock(message, deferral)]);
        break;
      default: {
        const _exhaustive: never = message;
        return _exhaustive;
      }
    }
  }
  return out;
}
