import type { ToolResult, ToolResultContent } from '@agent/core';
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
      return [{ type: 'image', data: block.data, mimeType: block.mimeType }];
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
            { type: 'image', data: resource.blob, mimeType: resource.mimeType },
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

function base64Bytes(data: string): number {
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}
