/**
 * Kiro's `code` tool: one tool whose `operation` picks a code-intelligence request, mapped onto
 * our LSP tools — `search_symbols` and `lookup_symbols` → lsp_workspace_symbols,
 * `goto_definition` → lsp_definition, `find_references` → lsp_references, `get_hover` →
 * lsp_hover, `get_document_symbols` → lsp_document_symbols, `get_diagnostics` →
 * lsp_diagnostics, `rename_symbol` → lsp_rename (and, with `dry_run: false`, lsp_apply_rename).
 * Kiro's `row`/`column` are 1-based like our `line`/`column`. Each mapped call goes through the
 * loop's `ctx.callTool` when there is a loop (the LSP tool's own validation, permission subjects,
 * gate and events), else straight to the tool. Kiro's tree-sitter and editor operations
 * (`get_completions`, `format`, `pattern_search`, `pattern_rewrite`, `generate_codebase_overview`,
 * `search_codebase_map`) are refused naming the tool to use instead; `initialize_workspace` has
 * nothing to do (servers start on first use).
 */
import {
  type AnyAgentTool,
  defineTool,
  messageText,
  normalisePermissionSubjects,
  type PermissionSubjectsResult,
  type ToolContext,
  ToolError,
  type ToolResult,
} from '@agent/core';
import * as z from 'zod';
import { lspToolNames } from './lsp-tools.js';

const operations = [
  'search_symbols',
  'lookup_symbols',
  'find_references',
  'goto_definition',
  'get_document_symbols',
  'get_diagnostics',
  'get_hover',
  'get_completions',
  'initialize_workspace',
  'pattern_search',
  'pattern_rewrite',
  'generate_codebase_overview',
  'search_codebase_map',
  'rename_symbol',
  'format',
] as const;

const codeInput = z.object({
  operation: z.enum(operations).describe('The code-intelligence operation.'),
  symbol_name: z.string().min(1).optional().describe('Symbol name (search_symbols).'),
  symbols: z
    .array(z.string().min(1))
    .max(10)
    .optional()
    .describe('Symbol names (lookup_symbols, at most 10).'),
  include_source: z
    .boolean()
    .optional()
    .describe('Accepted for Kiro; read the file at the line shown for the source.'),
  file_path: z.string().min(1).optional().describe('The source file (most operations).'),
  path: z.string().optional().describe('Directory to keep search_symbols results under.'),
  row: z.number().int().min(1).optional().describe('1-based line.'),
  column: z.number().int().min(1).optional().describe('1-based column.'),
  new_name: z.string().min(1).optional().describe('The new name (rename_symbol).'),
  dry_run: z
    .boolean()
    .optional()
    .describe('rename_symbol: preview only [true]; false writes the change.'),
  symbol_type: z
    .string()
    .optional()
    .describe('Keep search_symbols results of this kind (class, function, …).'),
  exact_match: z
    .boolean()
    .optional()
    .describe('Keep search_symbols results named exactly symbol_name.'),
  language: z.string().optional().describe('"typescript" or "python" (search_symbols).'),
  limit: z.number().int().min(1).optional().describe('Results at most.'),
  top_level_only: z.boolean().optional().describe('get_document_symbols: top-level symbols only.'),
  show_source: z
    .boolean()
    .optional()
    .describe('Accepted for Kiro; the definition line is always shown.'),
  workspace_only: z
    .boolean()
    .optional()
    .describe('Accepted for Kiro; references are the project’s.'),
  pattern: z.string().optional(),
  replacement: z.string().optional(),
  tab_size: z.number().int().optional(),
  insert_spaces: z.boolean().optional(),
});

/** Arguments of the code tool (Kiro's shape). */
export type CodeArgs = z.infer<typeof codeInput>;

/** What to use instead of the operations this tool does not offer. */
const notOffered: Partial<Record<CodeArgs['operation'], string>> = {
  get_completions:
    'completions are an editor feature; read the type with get_hover or lsp_hover instead',
  format: "run the project's formatter with bash (e.g. prettier, biome, black)",
  pattern_search: 'use the search tool (regular expressions) or search_symbols',
  pattern_rewrite: 'use edit_file, or rename_symbol for a rename',
  generate_codebase_overview:
    'use list_files or glob, then get_document_symbols on the files that matter',
  search_codebase_map: 'use list_files or glob, then get_document_symbols on the files that matter',
};

/** One call of an LSP tool a code operation maps to. */
interface Mapped {
  tool: (typeof lspToolNames)[number];
  args: Record<string, unknown>;
}

function need<T>(value: T | undefined, field: string, operation: string): T {
  if (value === undefined)
    throw ToolError.invalidArguments('code', `${operation} needs "${field}"`);
  return value;
}

/** The LSP calls an operation makes (in order); empty for one with nothing to do. */
function mapOperation(args: CodeArgs): Mapped[] {
  const op = args.operation;
  const at = () => ({
    path: need(args.file_path, 'file_path', op),
    line: need(args.row, 'row', op),
    column: need(args.column, 'column', op),
  });
  const symbolSearch = (query: string): Mapped => ({
    tool: 'lsp_workspace_symbols',
    args: {
      query,
      ...(args.language === undefined ? {} : { language: args.language }),
      // Filtered below: ask for more than will be shown.
      limit: 500,
    },
  });
  switch (op) {
    case 'search_symbols':
      return [symbolSearch(need(args.symbol_name, 'symbol_name', op))];
    case 'lookup_symbols':
      return need(args.symbols, 'symbols', op).map(symbolSearch);
    case 'find_references':
      return [{ tool: 'lsp_references', args: at() }];
    case 'goto_definition':
      return [{ tool: 'lsp_definition', args: at() }];
    case 'get_hover':
      return [{ tool: 'lsp_hover', args: at() }];
    case 'get_document_symbols':
      return [
        { tool: 'lsp_document_symbols', args: { path: need(args.file_path, 'file_path', op) } },
      ];
    case 'get_diagnostics':
      return [{ tool: 'lsp_diagnostics', args: { path: need(args.file_path, 'file_path', op) } }];
    case 'rename_symbol':
      return [
        { tool: 'lsp_rename', args: { ...at(), new_name: need(args.new_name, 'new_name', op) } },
      ];
    case 'initialize_workspace':
      return [];
    default:
      throw new ToolError(
        `code: operation "${op}" is not offered here; ${(Object.hasOwn(notOffered, op) ? notOffered[op] : undefined) ?? 'see the tool list'}.`,
        {
          kind: 'invalid-args',
          toolName: 'code',
        },
      );
  }
}

/** Workspace-symbol lines (`kind name  path:line`) kept by search_symbols' filters. */
function filterSymbols(text: string, args: CodeArgs, name: string, exact: boolean): string[] {
  const under = args.path?.replace(/^\.\/?/, '').replace(/\/$/, '');
  return text
    .split('\n')
    .filter((line) => /^\S+ \S.* {2}\S+:\d+$/.test(line))
    .filter((line) => {
      const [kind = '', symbol = ''] = line.split(' ');
      const where = line.slice(line.lastIndexOf('  ') + 2);
      if (args.symbol_type !== undefined && kind.toLowerCase() !== args.symbol_type.toLowerCase())
        return false;
      if (exact && symbol !== name) return false;
      return under === undefined || under === '' || where.startsWith(`${under}/`);
    });
}

/** The code tool over the tools {@link createLspTools} made; see the module comment. */
export function createCodeTool(lspTools: readonly AnyAgentTool[]): AnyAgentTool {
  const byName = new Map(lspTools.map((tool) => [tool.name, tool]));
  const missing = lspToolNames.filter((name) => !byName.has(name));
  if (missing.length > 0)
    throw new Error(
      `createCodeTool: give it createLspTools' tools (missing ${missing.join(', ')})`,
    );
  const toolOf = (name: Mapped['tool']): AnyAgentTool => byName.get(name) as AnyAgentTool;

  /** Runs one LSP call as the loop would, or directly; resolves with its text and error flag. */
  async function call(
    mapped: Mapped,
    ctx: ToolContext,
  ): Promise<{ text: string; isError: boolean; details?: unknown }> {
    const tool = toolOf(mapped.tool);
    if (ctx.callTool !== undefined) {
      const message = await ctx.callTool(tool, mapped.args);
      return { text: messageText(message), isError: message.isError, details: message.details };
    }
    const validated = tool.validate?.(mapped.args) ?? { ok: true, value: mapped.args };
    if (!validated.ok)
      throw ToolError.invalidArguments(
        'code',
        validated.issues.map((issue) => issue.message).join('; '),
      );
    const result: ToolResult = await tool.execute(validated.value, ctx);
    const text = result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
    return { text, isError: result.isError === true, details: result.details };
  }

  const tool = defineTool({
    name: 'code',
    label: 'Code intelligence',
    description:
      'Code intelligence from the language servers (TypeScript/JavaScript, Python), by "operation": ' +
      'search_symbols {symbol_name}, lookup_symbols {symbols}, goto_definition / find_references / ' +
      'get_hover {file_path, row, column}, get_document_symbols {file_path}, get_diagnostics ' +
      '{file_path}, rename_symbol {file_path, row, column, new_name, dry_run (default true)}. Rows and columns are 1-based.',
    input: codeInput,
    source: 'lsp',
    // Reads, except a rename with dry_run: false, whose subjects carry the write tier.
    policy: { permission: 'read-only', pathAccess: 'read' },
    permissionSubjects: async (args): Promise<PermissionSubjectsResult> => {
      const mapped = mapOperation(args);
      const subjects: string[] = [];
      for (const each of mapped) {
        const found = await toolOf(each.tool).permissionSubjects?.(each.args);
        const list = found === undefined ? [] : normalisePermissionSubjects(found).subjects;
        for (const subject of list) if (!subjects.includes(subject)) subjects.push(subject);
      }
      return args.operation === 'rename_symbol' && args.dry_run === false
        ? { subjects, tier: 'workspace-write' }
        : subjects;
    },
    execute: async (args, ctx) => {
      const mapped = mapOperation(args);
      if (mapped.length === 0)
        return 'Nothing to do: the language servers start on first use of an operation.';
      if (args.operation === 'search_symbols' || args.operation === 'lookup_symbols') {
        const names =
          args.operation === 'search_symbols' ? [args.symbol_name ?? ''] : (args.symbols ?? []);
        const blocks: string[] = [];
        for (const [index, each] of mapped.entries()) {
          const name = names[index] ?? '';
          const found = await call(each, ctx);
          if (found.isError) throw new ToolError(found.text, { kind: 'failed', toolName: 'code' });
          const exact = args.operation === 'lookup_symbols' || args.exact_match === true;
          const lines = filterSymbols(found.text, args, name, exact).slice(0, args.limit ?? 50);
          blocks.push(
            lines.length === 0
              ? `No symbols match "${name}".`
              : `${args.operation === 'lookup_symbols' ? `${name}:\n` : ''}${lines.join('\n')}`,
          );
        }
        return blocks.join('\n\n');
      }
      const [first] = mapped;
      if (first === undefined) return '';
      const found = await call(first, ctx);
      if (found.isError) throw new ToolError(found.text, { kind: 'failed', toolName: 'code' });
      if (args.operation === 'get_document_symbols' && args.top_level_only === true)
        return found.text
          .split('\n')
          .filter((line) => !line.startsWith(' '))
          .join('\n');
      if (args.operation === 'rename_symbol') {
        // lsp_rename's hint names lsp_apply_rename, which the model may not have: say it our way.
        const hint =
          /Nothing was written; call lsp_apply_rename with \{"id": "[^"]*"\} to write it\./;
        if (args.dry_run !== false)
          return found.text.replace(
            hint,
            'Nothing was written; call code again with the same arguments and "dry_run": false to write it.',
          );
        const id = (found.details as { id?: unknown } | undefined)?.id;
        if (typeof id !== 'string') return found.text;
        const applied = await call({ tool: 'lsp_apply_rename', args: { id } }, ctx);
        if (applied.isError)
          throw new ToolError(applied.text, { kind: 'failed', toolName: 'code' });
        return `${applied.text}\n${found.text.replace(hint, '').replace(/would change\.\s*/, 'changed.\n')}`;
      }
      return found.text;
    },
  });
  return Object.assign(tool, {
    keywords: ['lsp', 'symbols', 'definition', 'references', 'rename', 'diagnostics'],
  });
}
