// A server's tool listing as AgentTools: lenient parsing, policies from annotations, and what
// changed between two listings.
import {
  AgentError,
  errorMessage,
  type ToolContext,
  type ToolPolicy,
  type ToolResult,
} from '@agent/core';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { PaginatedResultSchema, type Tool, ToolSchema } from '@modelcontextprotocol/sdk/types.js';
import type { McpToolAdapterOptions, McpToolsChange } from './mcp-options.js';
import type { McpAgentTool } from './mcp-tool-adapter.js';
import type { McpToolResultDetails } from './result-mapping.js';
import { mcpToolWireName } from './tool-names.js';
import { outputSearchText, toToolParameters } from './tool-schema.js';

const maxToolPages = 100;
/** Entries that are not tools reported one by one; the rest are counted (one line each in a terminal). */
const maxSkipReports = 3;
/** Default of `maxTools`. */
const defaultMaxTools = 10_000;

/** A tool as the server listed it. */
export interface ListedTool {
  readonly definition: Tool;
  /** The input schema as the server sent it (the definition's may have been replaced). */
  readonly rawInputSchema: unknown;
}

/** A listed tool and the `AgentTool` made from it (kept while its definition is unchanged). */
export interface ToolEntry {
  readonly definition: Tool;
  readonly fingerprint: string;
  readonly tool: McpAgentTool;
  readonly taskRequired: boolean;
}

/** Calls a tool by its MCP name (the adapter's call path). */
export type CallByName = (
  mcpName: string,
  taskRequired: boolean,
  args: Record<string, unknown>,
  ctx: ToolContext,
) => Promise<ToolResult<McpToolResultDetails>>;

/**
 * Lists every page of tools. Parsed leniently: the SDK's schema rejects the whole list when one
 * tool's `inputSchema` is not `type: "object"`; here such a tool is kept (its parameters become
 * `{ type: 'object' }`) and a tool that is not a tool at all is skipped and reported.
 */
export async function listTools(
  client: Client,
  options: {
    server: string;
    timeoutMs: number;
    report: (error: unknown) => void;
    /** The most tools kept; the rest are left out, reported [10,000]. */
    maxTools?: number | undefined;
  },
): Promise<ListedTool[]> {
  const tools: ListedTool[] = [];
  const seen = new Set<string>();
  const maxTools = options.maxTools ?? defaultMaxTools;
  let skipped = 0;
  let cursor: string | undefined;
  for (let page = 0; page < maxToolPages; page++) {
    const result = await client.request(
      { method: 'tools/list', params: cursor === undefined ? {} : { cursor } },
      PaginatedResultSchema,
      { timeout: options.timeoutMs },
    );
    const raw: unknown = result.tools;
    if (!Array.isArray(raw)) {
      throw new Error('the tools/list answer has no "tools" array');
    }
    for (const candidate of raw) {
      if (tools.length > maxTools) break;
      const listed = parseTool(withinNesting(candidate, options));
      if (listed !== undefined) tools.push(listed);
      else if (++skipped <= maxSkipReports)
        options.report(
          new AgentError(
            `MCP server "${options.server}" listed something that is not a tool, skipped: ${clip(JSON.stringify(candidate) ?? String(candidate), 300)}`,
          ),
        );
    }
    if (tools.length > maxTools) {
      // Pages of a million tools each would hold the whole process's memory.
      tools.length = maxTools;
      options.report(
        new AgentError(
          `MCP server "${options.server}" listed more than ${maxTools.toLocaleString('en-US')} tools; the first ${maxTools.toLocaleString('en-US')} are kept (maxTools)`,
        ),
      );
      break;
    }
    cursor = result.nextCursor;
    if (cursor === undefined || seen.has(cursor)) break;
    seen.add(cursor);
  }
  if (skipped > maxSkipReports)
    options.report(
      new AgentError(
        `MCP server "${options.server}" listed ${skipped.toLocaleString('en-US')} things that are not tools in all, skipped`,
      ),
    );
  // The SDK validates structuredContent against output schemas it cached from listTools(),
  // which this lenient listing bypasses. (Private in its types; guarded in case it goes.)
  const cache = (client as unknown as { cacheToolMetadata?: (tools: Tool[]) => void })
    .cacheToolMetadata;
  if (typeof cache === 'function') {
    cache.call(
      client,
      tools.map((listed) => listed.definition),
    );
  }
  return tools;
}

/** Deepest nesting of a tool's schemas that is used: deeper overflowed the stack of every step. */
const maxSchemaDepth = 100;

/**
 * The entry with an input schema nested deeper than 100 levels replaced by `{ type: 'object' }`
 * and such an output schema dropped, reported: a schema 100,000 levels deep overflowed the stack
 * and the whole server failed to connect.
 */
function withinNesting(
  candidate: unknown,
  options: { server: string; report: (error: unknown) => void },
): unknown {
  if (candidate === null || typeof candidate !== 'object' || Array.isArray(candidate))
    return candidate;
  const entry = candidate as Record<string, unknown>;
  const tooDeep = ['inputSchema', 'outputSchema'].filter((key) =>
    nestsDeeper(entry[key], maxSchemaDepth),
  );
  if (tooDeep.length === 0) return candidate;
  const name = typeof entry.name === 'string' ? clip(entry.name, 80) : '?';
  options.report(
    new AgentError(
      `MCP server "${options.server}", tool "${name}": its ${tooDeep.join(' and ')} ${tooDeep.length > 1 ? 'nest' : 'nests'} deeper than ${maxSchemaDepth} levels and is not used; any arguments are sent as given`,
    ),
  );
  const { outputSchema: _output, ...rest } = entry;
  return {
    ...(tooDeep.includes('outputSchema') ? rest : entry),
    ...(tooDeep.includes('inputSchema') ? { inputSchema: { type: 'object' } } : {}),
  };
}

/** Whether a JSON value nests deeper than `limit` objects and arrays (without recursion). */
function nestsDeeper(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [node, depth] = next;
    if (node === null || typeof node !== 'object') continue;
    if (depth >= limit) return true;
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  return false;
}

/**
 * One entry of a tools/list answer: as the SDK parses it, or with `{ type: 'object' }` for an
 * input schema it rejects (and no output schema); undefined for something that is not a tool.
 */
export function parseTool(raw: unknown): ListedTool | undefined {
  const strict = ToolSchema.safeParse(raw);
  // The schema as sent, not as parsed: zod's record parsing drops a property named `__proto__`
  // (and `required` still names it, so no call could be valid).
  if (strict.success)
    return {
      definition: strict.data,
      rawInputSchema: (raw as { inputSchema: unknown }).inputSchema,
    };
  if (raw !== null && typeof raw === 'object') {
    const { outputSchema: _dropped, ...rest } = raw as Record<string, unknown>;
    const patched = ToolSchema.safeParse({ ...rest, inputSchema: { type: 'object' } });
    if (patched.success) {
      return {
        definition: patched.data,
        rawInputSchema: (raw as { inputSchema?: unknown }).inputSchema,
      };
    }
  }
  return undefined;
}

/** What `applyTools` needs: the listing, the previous state, and how to build a new entry. */
export interface ApplyToolsOptions {
  readonly server: string;
  readonly listed: readonly ListedTool[];
  readonly filter: McpToolAdapterOptions['toolFilter'];
  /** The entries of the previous listing, by MCP name. */
  readonly previousEntries: ReadonlyMap<string, ToolEntry>;
  /** The tools offered before (with the extra ones). */
  readonly previousTools: readonly McpAgentTool[];
  /** Tools offered after the server's own unless one of those has the name (resource tools). */
  readonly extraTools: readonly McpAgentTool[];
  readonly build: (definition: Tool, rawInputSchema: unknown, fingerprint: string) => ToolEntry;
}

/**
 * The tools of a listing, keeping unchanged ones (same objects), and what changed since the
 * previous one. Throws when two tools get the same wire name.
 */
export function applyTools(options: ApplyToolsOptions): {
  entries: Map<string, ToolEntry>;
  tools: McpAgentTool[];
  change: McpToolsChange;
} {
  const { filter } = options;
  const entries = new Map<string, ToolEntry>();
  const byWireName = new Map<string, string>();
  for (const { definition, rawInputSchema } of options.listed) {
    if (filter !== undefined && !filter(definition)) continue;
    const fingerprint = JSON.stringify([definition, rawInputSchema]);
    const previous = options.previousEntries.get(definition.name);
    const entry =
      previous !== undefined && previous.fingerprint === fingerprint
        ? previous
        : options.build(definition, rawInputSchema, fingerprint);
    const clash = byWireName.get(entry.tool.name);
    if (clash !== undefined) {
      throw new AgentError(
        `MCP server "${options.server}": tools "${clash}" and "${definition.name}" both get the wire name "${entry.tool.name}"; exclude one with toolFilter`,
      );
    }
    byWireName.set(entry.tool.name, definition.name);
    entries.set(definition.name, entry);
  }
  const before = new Map(options.previousTools.map((tool) => [tool.name, tool]));
  const tools = [...entries.values()].map((entry) => entry.tool);
  for (const tool of options.extraTools) {
    if (byWireName.has(tool.name)) continue; // the server's own tool of that name wins
    tools.push(tool);
  }
  const change: McpToolsChange = { added: [], removed: [], changed: [] };
  for (const tool of tools) {
    const old = before.get(tool.name);
    if (old === undefined) change.added.push(tool.name);
    else if (old !== tool) change.changed.push(tool.name);
  }
  const now = new Set(tools.map((tool) => tool.name));
  for (const name of before.keys()) if (!now.has(name)) change.removed.push(name);
  return { entries, tools, change };
}

/** The `AgentTool` of one listed tool, calling through `call`. */
export function toolEntry(
  definition: Tool,
  rawInputSchema: unknown,
  fingerprint: string,
  host: { server: string; options: McpToolAdapterOptions; call: CallByName },
): ToolEntry {
  const { server, options, call } = host;
  const mcpName = definition.name;
  const wireName = mcpToolWireName(server, mcpName, { prefix: options.prefix !== false });
  const taskRequired = definition.execution?.taskSupport === 'required';
  const subjects = [`${server}/${mcpName}`] as const;
  const searchText = outputSearchText(definition.outputSchema);
  const report = (message: string) =>
    options.onError?.(
      new AgentError(`MCP server "${server}", tool "${clip(mcpName, 80)}": ${message}`),
    );
  const tool: McpAgentTool = {
    name: wireName,
    label: clip(definition.title ?? definition.annotations?.title ?? mcpName, maxLabelChars),
    description: toolDescription(definition, server, options.maxDescriptionChars, report),
    parameters: parametersOf(rawInputSchema, report),
    source: `mcp:${server}`,
    // What it returns, for tool_search only (never part of the tool's schema).
    ...(searchText === undefined ? {} : { searchText }),
    policy: policyFor(definition, server, options),
    permissionSubjects: () => subjects,
    execute: (args, ctx) => call(mcpName, taskRequired, args, ctx),
  };
  return { definition, fingerprint, tool, taskRequired };
}

/** Longest label (the tool's title) kept: it is shown in lists, one line each. */
const maxLabelChars = 200;
/** Default of `maxDescriptionChars`. */
export const defaultMaxDescriptionChars = 10_000;

/**
 * The description the model reads: the server's, cut at `max` characters (a description of
 * megabytes went to the model whole on every turn), or a line naming the tool when it has none.
 */
function toolDescription(
  definition: Tool,
  server: string,
  max = defaultMaxDescriptionChars,
  report: (message: string) => void,
): string {
  const description = definition.description;
  if (description === undefined || description.trim() === '')
    return `Tool "${definition.name}" of MCP server "${server}".`;
  if (description.length <= max) return description;
  report(
    `its description of ${description.length.toLocaleString('en-US')} characters is cut at ${max.toLocaleString('en-US')} (maxDescriptionChars)`,
  );
  return `${description.slice(0, max)}… [description cut at ${max.toLocaleString('en-US')} characters]`;
}

/**
 * The tool's parameters, or `{ type: 'object' }` (reported) for an input schema that cannot be
 * made self-contained: one that grows past core's bound once inlined, or nests deeper than the
 * stack.
 */
function parametersOf(
  rawInputSchema: unknown,
  report: (message: string) => void,
): ReturnType<typeof toToolParameters> {
  try {
    return toToolParameters(rawInputSchema);
  } catch (error) {
    report(
      `its input schema is not used (${errorMessage(error)}); any arguments are sent as given`,
    );
    return { type: 'object' };
  }
}

/** The policy of a tool from its annotations (when trusted), then the `policy` option's say. */
export function policyFor(
  definition: Tool,
  server: string,
  options: McpToolAdapterOptions,
): ToolPolicy<Record<string, unknown>> {
  const trust = options.trustAnnotations ?? true;
  const annotations = definition.annotations;
  const readOnly = trust && annotations?.readOnlyHint === true;
  // MCP's default for a tool that is not read-only is destructiveHint: true.
  const destructive = !trust || (!readOnly && annotations?.destructiveHint !== false);
  const serverKey = `mcp:${server}`;
  const derived: ToolPolicy<Record<string, unknown>> = readOnly
    ? // The hint is the server's own claim: it may let the call run beside others, but the
      // permission gate (read-only and plan mode, `agent mcp serve`) goes by it only when the
      // user trusts the server to tell the truth.
      { permission: options.trustReadOnlyHint === true ? 'read-only' : 'full-access' }
    : {
        permission: 'full-access',
        // Writes to one server's shared state never overlap; destructive ones also keep the
        // model's order within a batch.
        resourceKey: () => serverKey,
        ...(destructive ? { exclusive: true } : {}),
      };
  if (options.timeoutMs !== undefined) derived.timeoutMs = options.timeoutMs;
  return options.policy?.(definition, derived) ?? derived;
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}
