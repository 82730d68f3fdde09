// Our messages as Responses API input items (reasoning, tool search and program calls replayed).
import {
  type AssistantMessage,
  jsonContentAsText,
  type ProviderRequest,
  type ToolResultMessage,
  type UserContent,
} from '@agent/core';
import type {
  FunctionTool,
  ResponseFunctionCallOutputItemList,
  ResponseInputContent,
  ResponseInputItem,
  ResponseReasoningItem,
} from 'openai/resources/responses/responses';
import { toolResultText } from '../chat/chat-messages.js';
import {
  openaiMetadata,
  type PreparedTools,
  replayArguments,
  type WireTool,
} from '../openai-tools.js';
import { openProgramCalls, programReplay } from './responses-programmatic.js';
import { serverItemInput } from './responses-server-items.js';

/**
 * The conversation as Responses API input items. Reasoning items (kept in a thinking block's
 * `signature`) are replayed only to the provider and model that produced them; a function
 * call's item id is sent only together with its reasoning item (the API rejects one without
 * the other).
 */
export function toResponsesInput(
  request: ProviderRequest,
  providerId: string,
  tools?: PreparedTools,
): ResponseInputItem[] {
  const items: ResponseInputItem[] = [];
  const searchTool = request.deferredTools?.searchTool;
  const openCalls = openProgramCalls(request.messages);
  for (const message of request.messages) {
    switch (message.role) {
      case 'user':
        items.push({
          role: 'user',
          content:
            typeof message.content === 'string'
              ? [{ type: 'input_text', text: message.content }]
              : message.content.map(toInputContent),
        });
        break;
      case 'assistant':
        items.push(...assistantItems(message, request.model, providerId, searchTool, openCalls));
        break;
      case 'toolResult': {
        if (searchTool !== undefined && message.toolName === searchTool) {
          items.push(searchOutput(message, request, tools));
          break;
        }
        const hasImage = message.content.some((block) => block.type === 'image');
        const output: string | ResponseFunctionCallOutputItemList = hasImage
          ? jsonContentAsText(message.content).map(toInputContent)
          : toolResultText(message);
        const caller = openCalls.get(message.toolCallId);
        items.push({
          type: 'function_call_output',
          call_id: message.toolCallId,
          output,
          ...(caller === undefined ? {} : { caller }),
        });
        break;
      }
      default: {
        const _exhaustive: never = message;
        return _exhaustive;
      }
    }
  }
  return items;
}

/** A call's arguments as the object `tool_search_call` carries; malformed JSON becomes `{}`. */
function parseArguments(raw: string): unknown {
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return {};
  }
}

/**
 * A search result as the `tool_search_output` of its call: the definitions of the deferred
 * tools it loaded (none for a search that found nothing or failed).
 */
function searchOutput(
  message: ToolResultMessage,
  request: ProviderRequest,
  tools: PreparedTools | undefined,
): ResponseInputItem {
  const loaded = (message.details as { loaded?: unknown } | undefined)?.loaded;
  const names = new Set(Array.isArray(loaded) ? loaded : []);
  const deferred = new Set(request.deferredTools?.tools.map((tool) => tool.name));
  const definitions = (tools?.tools ?? []).filter(
    (tool) => names.has(tool.name) && deferred.has(tool.name),
  );
  return {
    type: 'tool_search_output',
    call_id: message.toolCallId,
    execution: 'client',
    status: 'completed',
    tools: definitions.map(functionTool),
  };
}

function assistantItems(
  message: AssistantMessage,
  model: string,
  providerId: string,
  searchTool: string | undefined,
  openCalls: ReturnType<typeof openProgramCalls>,
): ResponseInputItem[] {
  const items: ResponseInputItem[] = [];
  const sameOrigin = message.provider === providerId && message.model === model;
  let replayedReasoning = false;
  for (const block of message.content) {
    if (block.type === 'thinking') {
      const reasoning = sameOrigin ? parseReasoningItem(block.signature) : undefined;
      if (reasoning !== undefined) {
        items.push(reasoning);
        replayedReasoning = true;
      }
    } else if (block.type === 'text') {
      if (block.text !== '') items.push({ role: 'assistant', content: block.text });
    } else if (block.type === 'opaque') {
      // Its own server items back in their place; another provider's blocks (e.g. Anthropic's
      // server search) mean nothing here.
      const item = serverItemInput(block, providerId);
      if (item !== undefined) items.push(item);
    } else if (block.name === searchTool) {
      items.push({
        type: 'tool_search_call',
        call_id: block.id,
        execution: 'client',
        status: 'completed',
        arguments: parseArguments(replayArguments(block)),
      });
    } else {
      const itemId = openaiMetadata(block)?.itemId;
      // A call made by a program still running keeps its caller (see responses-programmatic.ts).
      const program = programReplay(block, openCalls);
      items.push(...program.before);
      items.push({
        type: 'function_call',
        call_id: block.id,
        name: block.name,
        arguments: replayArguments(block),
        ...(replayedReasoning && typeof itemId === 'string' ? { id: itemId } : {}),
        ...(program.caller === undefined ? {} : { caller: program.caller }),
      });
    }
  }
  return items;
}

export function parseReasoningItem(
  signature: string | undefined,
): ResponseReasoningItem | undefined {
  if (signature === undefined || !signature.startsWith('{')) return undefined;
  try {
    const parsed = JSON.parse(signature) as Partial<ResponseReasoningItem>;
    if (parsed.type !== 'reasoning' || typeof parsed.id !== 'string') return undefined;
    const item: ResponseReasoningItem = {
      type: 'reasoning',
      id: parsed.id,
      summary: Array.isArray(parsed.summary) ? parsed.summary : [],
    };
    if (typeof parsed.encrypted_content === 'string')
      item.encrypted_content = parsed.encrypted_content;
    return item;
  } catch {
    return undefined;
  }
}

function toInputContent(content: UserContent): ResponseInputContent {
  if (content.type === 'text') return { type: 'input_text', text: content.text };
  return {
    type: 'input_image',
    detail: 'auto',
    image_url: `data:${content.mimeType};base64,${content.data}`,
  };
}

/** A tool definition as the Responses API takes it. */
export function functionTool(tool: WireTool): FunctionTool {
  return {
    type: 'function',
    name: tool.name,
    description: tool.description,
    parameters: tool.parameters,
    strict: tool.strict,
  };
}
