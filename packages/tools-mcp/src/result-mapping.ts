import { detectFileKind, type ToolResult, type ToolResultContent } from '@agent/core';
import type { CallToolResult, ContentBlock } from '@modelcontextprotocol/sdk/types.js';

/** What an MCP tool result keeps beside the content the model reads (never sent to the model). */
export interface McpToolResultDetails {
  /** The server's name as configured. */
  server: string;
  /** The tool's name on the server (not the namespaced wire name). */
  tool: string;
  /** The content blocks exactly as the server sent them (audio, resources… included). */
  content: ContentBlock[];
  /** The server's `structuredContent`, when it sent one. */
  structuredContent?: Record<string, unknown>;
  /** The result's `_meta`, when present. */
  meta?: Record<string, unknown>;
}

/**
 * Turns an MCP `CallToolResult` into a `ToolResult`: text and images pass through; audio,
 * embedded resources and resource links become text the model can read (an embedded image
 * resource becomes an image); `structuredContent` is kept in `details` and becomes a JSON content
 * block only when the content is empty; `isError` is kept.
 */
export function toToolResult(
  result: CallToolResult,
  names: { server: string; tool: string },
): ToolResult<McpToolResultDetails> {
  const blocks = Array.isArray(result.content) ? result.content : [];
  const content: ToolResultContent[] = [];
  // A loop rather than flatMap: this runs on every call, and most results are a text block or two.
  for (const block of blocks) {
    if (block.type === 'text') content.push({ type: 'text', text: block.text });
    else for (const part of toResultContent(block)) content.push(part);
  }
  const structured = result.structuredContent;
  // Servers should also send structured output as content (usually its JSON as text); repeating
  // it would double what the model reads (base64 included, e.g. read_media_file), so the JSON is
  // added only when the content is empty.
  if (structured !== undefined && content.length === 0) {
    content.push({ type: 'json', value: structured });
  }
  if (content.length === 0) content.push({ type: 'text', text: '(the tool returned no content)' });
  const details: McpToolResultDetails = { server: names.server, tool: names.tool, content: blocks };
  if (structured !== undefined) details.structuredContent = structured;
  if (result._meta !== undefined) details.meta = result._meta;
  const mapped: ToolResult<McpToolResultDetails> = { content, details };
  if (result.isError === true) mapped.isError = true;
  return mapped;
}

function toResultContent(block: ContentBlock): ToolResultContent[] {
  switch (block.type) {
    case 'text':
      return [{ type: 'text', text: block.text }];
    case 'image':
      return checkedImage(block.data, block.mimeType, 'Image');
    case 'audio':
      return [
        {
          type: 'text',
          text: `[Audio (${block.mimeType}, ${base64Bytes(block.data)} bytes): not shown to the model]`,
        },
      ];
    case 'resource_link': {
      const title = block.title ?? block.name;
      const mime = block.mimeType === undefined ? '' : `, ${block.mimeType}`;
      const about = block.description === undefined ? '' : `: ${block.description}`;
      return [{ type: 'text', text: `[Resource link: ${title} <${block.uri}>${mime}${about}]` }];
    }
    case 'resource': {
      const resource = block.resource;
      const mime = resource.mimeType === undefined ? '' : ` (${resource.mimeType})`;
      if ('text' in resource && typeof resource.text === 'string') {
        return [{ type: 'text', text: `[Resource ${resource.uri}${mime}]\n${resource.text}` }];
      }
      if ('blob' in resource && typeof resource.blob === 'string') {
        if (resource.mimeType?.startsWith('image/') === true) {
          return [
            { type: 'text', text: `[Resource ${resource.uri}${mime}]` },
            ...checkedImage(resource.blob, resource.mimeType, 'Its image'),
          ];
        }
        return [
          {
            type: 'text',
            text: `[Resource ${resource.uri}${mime}: ${base64Bytes(resource.blob)} bytes of binary data, not shown to the model]`,
          },
        ];
      }
      return [{ type: 'text', text: `[Resource ${resource.uri}${mime}]` }];
    }
    default: {
      // A content type newer than this package: show it rather than drop it.
      const unknown: { type?: unknown } = block;
      return [
        {
          type: 'text',
          text: `[Unsupported MCP content of type ${JSON.stringify(unknown.type)}]\n${clip(JSON.stringify(block), 2000)}`,
        },
      ];
    }
  }
}

/** Largest image passed to the model, decoded, in bytes (the providers' own bound is about this). */
const maxImageBytes = 5 * 1024 * 1024;
/** Image types every provider takes. */
const imageTypes = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/**
 * A server's image as the model gets it, or a line saying why it does not: only PNG, JPEG, GIF
 * or WebP whose bytes are that type, in valid base64, up to 5 MiB. An image the provider cannot
 * take stays in the conversation, so it failed every later request of the session, not one.
 */
export function checkedImage(data: string, mimeType: string, what: string): ToolResultContent[] {
  const bytes = base64Bytes(data);
  const refuse = (why: string): ToolResultContent[] => [
    {
      type: 'text',
      text: `[${what} (${clip(mimeType, 100)}, ${bytes} bytes) not shown to the model: ${why}]`,
    },
  ];
  if (!imageTypes.has(mimeType)) return refuse('not a PNG, JPEG, GIF or WebP image');
  if (bytes > maxImageBytes) return refuse(`over the ${maxImageBytes}-byte limit for images`);
  if (data.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(data))
    return refuse('not valid base64');
  const kind = detectFileKind(decodeBase64(data.slice(0, 64)));
  if (kind.mimeType !== mimeType) return refuse(`its bytes are not of type ${mimeType}`);
  return [{ type: 'image', data, mimeType }];
}

/** The bytes of a short base64 text (`atob`: in every runtime, unlike `Buffer`). */
function decodeBase64(data: string): Uint8Array {
  const binary = atob(data);
  const bytes = new Uint8Array(binary.length);
  for (let index = 0; index < binary.length; index++) bytes[index] = binary.charCodeAt(index);
  return bytes;
}

function base64Bytes(data: string): number {
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}
