/**
 * A server's resources, reachable by the model through two read-only tools per server:
 * `<server>__list_resources` (resources and resource templates, paged) and
 * `<server>__read_resource` (any URI: a listed one, a template filled in, a resource link from a
 * tool result). Text comes back as text, images as images, other binaries described.
 */
import {
  hideSecretsInError,
  hideSecretsInResult,
  ToolError,
  type ToolResult,
  type ToolResultContent,
} from '@agent/core';
import type {
  ListResourcesResult,
  ListResourceTemplatesResult,
  ReadResourceResult,
} from '@modelcontextprotocol/sdk/types.js';
import type { McpAgentTool } from './mcp-tool-adapter.js';
import { boundResult } from './result-budget.js';
import { checkedImage, type McpToolResultDetails } from './result-mapping.js';
import { mcpToolWireName } from './tool-names.js';
import { markUntrustedContent } from './untrusted-result.js';

/** What the resource tools need from the adapter. */
export interface ResourceAccess {
  server: string;
  listResources(cursor: string | undefined, signal: AbortSignal): Promise<ListResourcesResult>;
  listResourceTemplates(
    cursor: string | undefined,
    signal: AbortSignal,
  ): Promise<ListResourceTemplatesResult>;
  readResource(uri: string, signal: AbortSignal): Promise<ReadResourceResult>;
  /** Who wrote the resources, for the untrusted-content note; `undefined` leaves them unmarked. */
  untrustedOrigin: string | undefined;
  /** Characters of text one result gives the model (see result-budget.ts). */
  maxResultChars: number;
  /** Hides the configured credentials in a text (see mcp-secrets.ts). */
  hide: (text: string) => string;
}

/** Longest text of one resource returned to the model, in characters (the rest is cut, said so). */
const maxResourceChars = 100_000;

function text(value: string): ToolResultContent {
  return { type: 'text', text: value };
}

function details(server: string, tool: string): McpToolResultDetails {
  return { server, tool } as McpToolResultDetails;
}

async function listing(
  access: ResourceAccess,
  cursor: string | undefined,
  signal: AbortSignal,
): Promise<ToolResultContent[]> {
  const resources = await access.listResources(cursor, signal);
  // Templates are listed on the first page only (they are few); a server may not offer them.
  const templates =
    cursor === undefined
      ? await access.listResourceTemplates(undefined, signal).catch(() => undefined)
      : undefined;
  const lines: string[] = [];
  if (resources.resources.length > 0) {
    lines.push('Resources (read with read_resource):');
    for (const resource of resources.resources) {
      const about = [resource.title ?? resource.name, resource.mimeType].filter(Boolean).join(', ');
      const description = resource.description === undefined ? '' : `: ${resource.description}`;
      lines.push(`- ${resource.uri} (${about})${description}`);
    }
  }
  if (templates !== undefined && templates.resourceTemplates.length > 0) {
    lines.push('Templates (fill in the {placeholders}, then read the URI with read_resource):');
    for (const template of templates.resourceTemplates) {
      const description = template.description === undefined ? '' : `: ${template.description}`;
      lines.push(`- ${template.uriTemplate} (${template.title ?? template.name})${description}`);
    }
  }
  if (resources.nextCursor !== undefined)
    lines.push(`More resources: call again with cursor "${resources.nextCursor}".`);
  if (lines.length === 0) return [];
  // Names, descriptions and URIs are the server's words (marked by `finish`).
  return [text(lines.join('\n'))];
}

/**
 * The server's blocks as the model gets them: within the result budget (a page of a million
 * resources, or many contents, was passed on whole), marked as the server's words unless results
 * are not marked, our note on what was cut after them.
 */
function finish(content: ToolResultContent[], access: ResourceAccess): ToolResultContent[] {
  const { result, note } = boundResult({ content }, access.maxResultChars);
  const origin = access.untrustedOrigin;
  const marked =
    origin === undefined ? result.content : markUntrustedContent(result.content, origin);
  const shown = note === undefined ? marked : [...marked, text(note)];
  return hideSecretsInResult({ content: shown }, access.hide).content;
}

function contents(result: ReadResourceResult): ToolResultContent[] {
  const out: ToolResultContent[] = [];
  for (const item of result.contents) {
    const mime = item.mimeType === undefined ? '' : ` (${item.mimeType})`;
    if ('text' in item && typeof item.text === 'string') {
      const body =
        item.text.length > maxResourceChars
          ? `${item.text.slice(0, maxResourceChars)}\n… (${item.text.length} characters in all; cut)`
          : item.text;
      out.push(text(`[${item.uri}${mime}]\n${body}`));
    } else if ('blob' in item && typeof item.blob === 'string') {
      // Only a real PNG, JPEG, GIF or WebP: an image the provider refuses stays in the
      // conversation and fails every later request (as for tool results).
      if (item.mimeType?.startsWith('image/') === true)
        out.push(...checkedImage(item.blob, item.mimeType, `Image ${item.uri}`));
      else
        out.push(
          text(
            `[${item.uri}${mime}: binary, ${Math.floor((item.blob.length * 3) / 4)} bytes, not shown]`,
          ),
        );
    }
  }
  return out;
}

/** The two resource tools of a server. */
export function createResourceTools(access: ResourceAccess): McpAgentTool[] {
  const listName = mcpToolWireName(access.server, 'list_resources');
  const readName = mcpToolWireName(access.server, 'read_resource');
  const policy = { permission: 'read-only' as const };
  const source = `mcp:${access.server}`;
  const list: McpAgentTool = {
    name: listName,
    label: `${access.server}: list resources`,
    description: `Lists the resources of the MCP server "${access.server}" (files, records, documents it exposes) and its resource templates.`,
    parameters: {
      type: 'object',
      properties: { cursor: { type: 'string', description: 'From a previous page, to see more.' } },
      additionalProperties: false,
    },
    source,
    policy,
    permissionSubjects: () => [`${access.server}/list_resources`],
    execute: async (args, ctx): Promise<ToolResult<McpToolResultDetails>> => {
      const cursor = typeof args.cursor === 'string' ? args.cursor : undefined;
      const content = await listing(access, cursor, ctx.signal);
      return {
        content:
          content.length === 0 ? [text('The server lists no resources.')] : finish(content, access),
        details: details(access.server, 'list_resources'),
      };
    },
  };
  const read: McpAgentTool = {
    name: readName,
    label: `${access.server}: read a resource`,
    description: `Reads a resource of the MCP server "${access.server}" by URI: one from list_resources, a template with its placeholders filled in, or a resource link from a tool result.`,
    parameters: {
      type: 'object',
      properties: { uri: { type: 'string', minLength: 1, description: 'The resource URI.' } },
      required: ['uri'],
      additionalProperties: false,
    },
    source,
    policy,
    permissionSubjects: (args) => [`${access.server}/read_resource ${String(args.uri)}`],
    execute: async (args, ctx): Promise<ToolResult<McpToolResultDetails>> => {
      const uri = String(args.uri);
      let result: ReadResourceResult;
      try {
        result = await access.readResource(uri, ctx.signal);
      } catch (error) {
        if (ToolError.isInstance(error)) throw hideSecretsInError(error, access.hide);
        throw new ToolError(
          access.hide(
            `MCP server "${access.server}" could not read ${uri}: ${error instanceof Error ? error.message : String(error)}`,
          ),
          { toolName: readName },
        );
      }
      const content = contents(result);
      return {
        content: content.length === 0 ? [text('The resource is empty.')] : finish(content, access),
        details: details(access.server, 'read_resource'),
      };
    },
  };
  return [list, read];
}
